// The analytics panel's query string (the environment's metrics page and each link's page): read
// into the form it shows, turned into the analytics service's parameters, and written back into
// the URLs of its presets, filters and CSV download. The service checks every value; a page only
// fills in defaults.
import type { RawAnalyticsParams } from "../services/analytics/params.ts";
import { type Dimension, type Interval, INTERVALS, METRICS } from "../services/analytics/query.ts";

export interface AnalyticsForm {
  /** First day shown, YYYY-MM-DD in `tz` (as given: the service checks it). */
  from: string;
  /** Last day shown, inclusive. */
  to: string;
  interval: string;
  tz: string;
  /** As ticked; none ticked is the defaults. */
  metrics: string[];
  /** `filter[<dimension>]` values, in the order given. */
  filters: [string, string][];
}

export const DEFAULT_METRICS = ["views", "installs"];
const DAY_MS = 86_400_000;

/** The breakdowns the panel shows, each a table of the top groups. */
export const BREAKDOWNS: { dimension: Dimension; label: string }[] = [
  { dimension: "country", label: "Countries" },
  { dimension: "platform", label: "Platforms" },
  { dimension: "os", label: "Operating systems" },
  { dimension: "browser", label: "Browsers" },
  { dimension: "referrer", label: "Referrers" },
  { dimension: "campaign", label: "Campaigns" },
];
export const BREAKDOWN_LIMIT = 10;

export const METRIC_LABELS: Record<string, string> = {
  views: "Views",
  opens: "Opens",
  installs: "Installs",
  reinstalls: "Reinstalls",
  reactivations: "Reactivations",
  app_opens: "App opens",
  user_referred: "Users referred",
  sessions: "Sessions",
  time_spent: "Time spent (s)",
  purchases: "Purchases",
  revenue: "Revenue (minor units)",
  custom: "Custom events",
};

export const INTERVAL_LABELS: Record<Interval, string> = {
  hour: "Hour",
  day: "Day",
  week: "Week (from Monday)",
  month: "Month",
};

export const DIMENSION_LABELS: Record<Dimension, string> = {
  link: "Link",
  country: "Country",
  platform: "Platform",
  os: "OS",
  browser: "Browser",
  referrer: "Referrer",
  campaign: "Campaign",
  source: "Source",
  medium: "Medium",
  event_name: "Event name",
  rule: "Rule (one link)",
  variant: "Split variant (one link)",
};

/** Today's date in `tz` (UTC when the runtime does not know the zone's name). */
export function todayIn(tz: string, now: Date): string {
  try {
    return new Intl.DateTimeFormat("en-CA", { timeZone: tz }).format(now);
  } catch {
    return now.toISOString().slice(0, 10);
  }
}

/** A YYYY-MM-DD date moved by `days`; anything else unchanged (the service will refuse it). */
export function addDays(date: string, days: number): string {
  const at = /^\d{4}-\d{2}-\d{2}$/.test(date) ? Date.parse(`${date}T00:00:00Z`) : NaN;
  return Number.isNaN(at) ? date : new Date(at + days * DAY_MS).toISOString().slice(0, 10);
}

/** The first day of the month `months` before the month of `date`. */
function monthsBefore(date: string, months: number): string {
  const [y, m] = date.split("-").map(Number) as [number, number];
  const first = new Date(Date.UTC(y, m - 1 - months, 1));
  return Number.isNaN(first.getTime()) ? date : first.toISOString().slice(0, 10);
}

const FILTER = /^filter\[([^\]]*)\]$/;

/** The form of a request's query (every value as given, defaults where absent). */
export function readAnalyticsForm(
  query: Record<string, string[]>,
  now: Date,
): AnalyticsForm {
  const one = (name: string) => {
    const v = query[name]?.[0];
    return v === undefined || v === "" ? undefined : v;
  };
  const tz = one("tz") ?? "UTC";
  const to = one("to") ?? todayIn(tz, now);
  const filters: [string, string][] = [];
  for (const [name, values] of Object.entries(query)) {
    const m = FILTER.exec(name);
    if (m && values[0] !== undefined) filters.push([m[1]!, values[0]]);
  }
  return {
    from: one("from") ?? addDays(to, -29),
    to,
    interval: one("interval") ?? "day",
    tz,
    metrics: (query.metrics ?? []).filter((m) => m !== ""),
    filters,
  };
}

/** The metrics a form asks for. */
export function formMetrics(form: AnalyticsForm): string[] {
  return form.metrics.length > 0 ? form.metrics : DEFAULT_METRICS;
}

/** What the form asks of the service: `to` is inclusive on the page, exclusive there. */
export function serviceParams(form: AnalyticsForm, linkPath: string | null): RawAnalyticsParams {
  return {
    from: form.from,
    to: addDays(form.to, 1),
    interval: form.interval,
    tz: form.tz,
    metrics: formMetrics(form).join(","),
    filters: Object.fromEntries(form.filters),
    ...(linkPath === null ? {} : { link: linkPath }),
  };
}

/** The page's URL for `form` (the presets, filters and CSV link are such URLs). */
export function formUrl(base: string, form: AnalyticsForm): string {
  const q = new URLSearchParams();
  q.set("from", form.from);
  q.set("to", form.to);
  q.set("interval", form.interval);
  q.set("tz", form.tz);
  for (const m of form.metrics) q.append("metrics", m);
  for (const [d, v] of form.filters) q.set(`filter[${d}]`, v);
  return `${base}?${q}`;
}

/** The ranges offered as one click: the last days up to today, in the form's zone. */
export function presets(form: AnalyticsForm, now: Date): { label: string; form: AnalyticsForm }[] {
  const today = todayIn(form.tz, now);
  const last = (days: number, interval: Interval) => ({
    ...form,
    from: addDays(today, 1 - days),
    to: today,
    interval,
  });
  return [
    { label: "Today", form: last(1, "hour") },
    { label: "7 days", form: last(7, "day") },
    { label: "30 days", form: last(30, "day") },
    { label: "90 days", form: last(90, "day") },
    // The current month and the eleven before it, whole.
    { label: "12 months", form: { ...last(1, "month"), from: monthsBefore(today, 11) } },
  ];
}

export const ALL_INTERVALS = INTERVALS;
export const ALL_METRICS = METRICS;
