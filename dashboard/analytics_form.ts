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
  /**
   * The currency revenue is shown in (ISO 4217), or "" for the minor units it is stored in.
   * Display only: revenue is in the project's reporting currency, which the person reading
   * names here.
   */
  currency: string;
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
  time_spent: "Time spent",
  purchases: "Purchases",
  revenue: "Revenue",
  custom: "Custom events",
  unconverted_purchases: "Unconverted purchases",
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
  currency: "Currency (revenue in each)",
};

/** The currencies revenue can be shown in. */
export const CURRENCIES: readonly string[] = Intl.supportedValuesOf("currency");
const KNOWN_CURRENCIES = new Set(CURRENCIES);

/** A metric's name as a heading says it: revenue with its unit (the currency, or minor units). */
export function metricLabel(metric: string, currency: string): string {
  if (metric === "revenue") return `Revenue (${currency || "minor units"})`;
  return METRIC_LABELS[metric] ?? metric;
}

/** Seconds as a length of time: "45 s", "18 min 05 s", "2 h 03 min". */
export function formatDuration(seconds: number): string {
  const whole = Math.round(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  const two = (n: number) => String(n).padStart(2, "0");
  if (h > 0) return `${h.toLocaleString("en-US")} h ${two(m)} min`;
  if (m > 0) return `${m} min ${two(s)} s`;
  return `${s} s`;
}

/** Minor units of `currency` as money: 1299 EUR is "€12.99", 1299 JPY "¥1,299". */
export function formatMoney(minorUnits: number, currency: string): string {
  const format = new Intl.NumberFormat("en-US", { style: "currency", currency });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(minorUnits / 10 ** digits);
}

/**
 * A metric's figure as the panel shows it: time spent as a length of time, revenue as money in
 * the chosen currency (or minor units), the rest as whole numbers.
 */
export function formatMetric(metric: string, value: number, currency: string): string {
  if (metric === "time_spent") return formatDuration(value);
  if (metric === "revenue" && currency) return formatMoney(value, currency);
  return value.toLocaleString("en-US");
}

/**
 * The top of a chart's scale for a highest value of `max`: every metric is a whole number (a
 * count, seconds, minor units), so the scale's top and its middle line are whole numbers too,
 * rounded up to two significant digits (21 → 22, 339 → 340, 12,345 → 12,400).
 */
export function chartTop(max: number): number {
  if (!(max > 0)) return 2;
  const half = Math.ceil(max / 2);
  const unit = 10 ** Math.max(0, Math.floor(Math.log10(half)) - 1);
  return 2 * Math.ceil(half / unit) * unit;
}

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
  const currency = one("currency")?.toUpperCase() ?? "";
  return {
    from: one("from") ?? addDays(to, -29),
    to,
    interval: one("interval") ?? "day",
    tz,
    metrics: (query.metrics ?? []).filter((m) => m !== ""),
    filters,
    currency: KNOWN_CURRENCIES.has(currency) ? currency : "",
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
  if (form.currency) q.set("currency", form.currency);
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
