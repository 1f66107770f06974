// The analytics panel of the environment's metrics page and of each link's page: a form (range,
// interval, time zone, metrics), one chart per chosen metric, a table of the same figures, the
// breakdowns with their shares (a row is a link that filters by it) and the CSV of it all.
// Charts are SVG drawn here, as the rest of the dashboard's: they need no script, obey the CSP
// (sizes are attributes, colours come from the stylesheet) and carry a title and description; the
// table says the same in text. Hono's JSX escapes every value; URLs are built by URLSearchParams.
import type { AnalyticsAnswer, Dimension, Point } from "../../services/analytics/query.ts";
import {
  ALL_INTERVALS,
  ALL_METRICS,
  type AnalyticsForm,
  chartTop,
  CURRENCIES,
  DEFAULT_METRICS,
  DIMENSION_LABELS,
  formatMetric,
  formMetrics,
  formUrl,
  INTERVAL_LABELS,
  METRIC_LABELS,
  metricLabel,
  presets,
} from "../analytics_form.ts";
import { Empty, Notice } from "../layout.tsx";

export interface Breakdown {
  dimension: Dimension;
  label: string;
  answer: AnalyticsAnswer;
}

export interface AnalyticsPanelProps {
  form: AnalyticsForm;
  /** The page's own path: the form's action and the base of every URL it links to. */
  base: string;
  /** The CSV download's path, given the same query. */
  csvBase: string;
  /** The zones to pick from (answerable ones). */
  zones: string[];
  now: Date;
  /** The figures, or why the form's values were refused. */
  result:
    | { series: AnalyticsAnswer; breakdowns: Breakdown[]; error?: undefined }
    | { error: string };
}

/** A bucket's start as the panel shows it: the local date (and hour) the answer printed. */
export function bucketLabel(start: string, interval: string | undefined): string {
  if (interval === "hour") return `${start.slice(0, 10)} ${start.slice(11, 16)}`;
  if (interval === "month") return start.slice(0, 7);
  return start.slice(0, 10);
}

const regionNames = new Intl.DisplayNames(["en"], { type: "region" });

/** The day before a range's end: `2026-11-03T00:00:00+01:00` ends on 2 November. */
function lastDay(end: string): string {
  const day = Date.parse(`${end.slice(0, 10)}T00:00:00Z`);
  // An end inside a day (a range in whole hours) is on that day.
  const back = end.slice(11, 19) === "00:00:00" ? 86_400_000 : 0;
  return Number.isNaN(day) ? end : new Date(day - back).toISOString().slice(0, 10);
}

/** A group key as shown: countries with their English name; null said in words. */
export function keyLabel(dimension: Dimension, key: string | null): string {
  if (key === null) {
    return dimension === "referrer"
      ? "Direct or unknown"
      : dimension === "campaign"
      ? "No campaign"
      : "Unknown";
  }
  if (dimension === "country") {
    try {
      const name = regionNames.of(key);
      if (name && name !== key) return `${key} · ${name}`;
    } catch {
      // Not a region code Intl knows: the code alone.
    }
  }
  return key;
}

/** The share of `part` in `whole`, as a percentage with one decimal. */
export function share(part: number, whole: number): string {
  if (whole === 0) return "–";
  return `${(Math.round((part / whole) * 1000) / 10).toFixed(1)}%`;
}

export function AnalyticsPanel(props: AnalyticsPanelProps) {
  const { form } = props;
  const metrics = formMetrics(form);
  const data = "series" in props.result ? props.result : null;
  const error = props.result.error;
  // The answer's `to` is the end of the range: the last day shown is the one before.
  const rangeText = data
    ? `${bucketLabel(data.series.from, "day")} to ${
      bucketLabel(lastDay(data.series.to), "day")
    } (${data.series.tz})`
    : "";
  // Nothing at all: one empty state, no breakdowns of nothing.
  const empty = data !== null && metrics.every((m) => (data.series.totals[m] ?? 0) === 0);
  return (
    <>
      <section class="card" aria-labelledby="analytics-h">
        <h2 id="analytics-h">Activity over time</h2>
        <nav class="presets" aria-label="Ranges">
          {presets(form, props.now).map((p) => (
            <a
              class="button secondary"
              href={formUrl(props.base, p.form)}
              aria-current={p.form.from === form.from && p.form.to === form.to &&
                  p.form.interval === form.interval
                ? "true"
                : undefined}
            >
              {p.label}
            </a>
          ))}
        </nav>
        <AnalyticsFormView {...props} />
        {form.filters.length > 0 && (
          <div class="filters">
            <span>Only:</span>
            <ul>
              {form.filters.map(([d, v]) => (
                <li>
                  <span class="tag">
                    {DIMENSION_LABELS[d as Dimension] ?? d}: {keyLabel(d as Dimension, v)}
                  </span>{" "}
                  <a
                    href={formUrl(props.base, {
                      ...form,
                      filters: form.filters.filter(([other]) => other !== d),
                    })}
                    aria-label={`Remove the filter ${DIMENSION_LABELS[d as Dimension] ?? d} ${v}`}
                  >
                    remove
                  </a>
                </li>
              ))}
            </ul>
          </div>
        )}
        {error !== undefined && <Notice kind="error">{error}</Notice>}
        {data && (
          <>
            <p class="muted range">
              {rangeText}, by {data.series.interval ?? "day"}
            </p>
            {empty
              ? (
                <Empty title="No events in this range.">
                  <p>
                    Views of links and the events your apps send are counted here by the time they
                    happened. Choose a longer range, or remove a filter.
                  </p>
                </Empty>
              )
              : (
                <div class="ac-charts">
                  {metrics.map((m) => (
                    <MetricChart
                      metric={m}
                      answer={data.series}
                      rangeText={rangeText}
                      currency={form.currency}
                    />
                  ))}
                </div>
              )}
            <SeriesTable answer={data.series} metrics={metrics} currency={form.currency} />
            <div class="actions">
              <a
                class="button secondary"
                href={formUrl(props.csvBase, form)}
                download
              >
                Download CSV
              </a>
              <span class="muted">The series and every breakdown below, as shown.</span>
            </div>
          </>
        )}
      </section>
      {data && !empty && (
        // Beyond two metrics a breakdown's columns need the page's whole width.
        <div class={metrics.length > 2 ? "grid breakdowns wide" : "grid breakdowns"}>
          {data.breakdowns.map((b) => (
            <BreakdownTable breakdown={b} form={form} base={props.base} metrics={metrics} />
          ))}
        </div>
      )}
    </>
  );
}

/** A filter the form carries on when its other values change. */
function HiddenFilter([dimension, value]: [string, string]) {
  return <input type="hidden" name={`filter[${dimension}]`} value={value} />;
}

function AnalyticsFormView(props: AnalyticsPanelProps) {
  const { form } = props;
  const zones = props.zones.includes(form.tz) ? props.zones : [form.tz, ...props.zones];
  return (
    <form method="get" action={props.base} class="ac-form">
      <div class="ac-fields">
        <div class="field">
          <label for="ac-from">From</label>
          <input id="ac-from" type="date" name="from" value={form.from} required />
        </div>
        <div class="field">
          <label for="ac-to">To (inclusive)</label>
          <input id="ac-to" type="date" name="to" value={form.to} required />
        </div>
        <div class="field">
          <label for="ac-interval">Interval</label>
          <select id="ac-interval" name="interval">
            {ALL_INTERVALS.map((i) => (
              <option value={i} selected={i === form.interval}>{INTERVAL_LABELS[i]}</option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="ac-tz">Time zone</label>
          <select id="ac-tz" name="tz">
            {zones.map((z) => (
              <option value={z} selected={z === form.tz}>
                {z}
              </option>
            ))}
          </select>
        </div>
      </div>
      <fieldset>
        <legend>Metrics</legend>
        <p class="hint">
          One chart each. None ticked shows {DEFAULT_METRICS.map((m) => METRIC_LABELS[m]).join(
            " and ",
          ).toLowerCase()}.
        </p>
        <div class="types">
          {ALL_METRICS.map((m) => (
            <div class="check">
              <input
                type="checkbox"
                id={`ac-m-${m}`}
                name="metrics"
                value={m}
                checked={formMetrics(form).includes(m)}
              />
              <label for={`ac-m-${m}`}>{METRIC_LABELS[m]}</label>
            </div>
          ))}
        </div>
      </fieldset>
      <div class="field ac-currency">
        <label for="ac-currency">Show revenue in</label>
        <p class="hint" id="ac-currency-hint">
          Revenue is summed in the project's reporting currency (its project settings), in minor
          units (cents): name that currency to read the sum as money.
        </p>
        <select id="ac-currency" name="currency" aria-describedby="ac-currency-hint">
          <option value="" selected={form.currency === ""}>Minor units</option>
          {CURRENCIES.map((c) => (
            <option key={c} value={c} selected={c === form.currency}>{c}</option>
          ))}
        </select>
      </div>
      {form.filters.map(HiddenFilter)}
      <button type="submit" class="button">Show</button>
    </form>
  );
}

/** Chart geometry: one unit of width per bucket, 100 units of height. */
const HEIGHT = 100;
const HEADROOM = 0;
/** Beyond this many buckets, an area under a line instead of bars. */
const MAX_BARS = 62;

function MetricChart(
  props: { metric: string; answer: AnalyticsAnswer; rangeText: string; currency: string },
) {
  const { metric, answer, currency } = props;
  const points = answer.series ?? [];
  const values = points.map((p) => Number(p[metric] ?? 0));
  const max = Math.max(0, ...values);
  // Whole-number ticks: the scale's top and middle are whole (every metric counts whole units).
  const top = chartTop(max);
  const y = (v: number) => HEIGHT - (Math.max(0, v) / top) * (HEIGHT - HEADROOM);
  const n = Math.max(1, points.length);
  const label = metricLabel(metric, currency);
  const show = (v: number) => formatMetric(metric, v, currency);
  const interval = answer.interval ?? "day";
  const peakAt = values.indexOf(max);
  const id = `ac-${metric}`;
  const total = Number(answer.totals[metric] ?? 0);
  const desc = max > 0
    ? `Total ${show(total)}. Highest ${show(max)}, ${
      bucketLabel(points[peakAt]!.start, interval)
    }. ${points.length} ${interval}s; the table below lists each.`
    : `None in this range (${points.length} ${interval}s).`;
  const mid = points[Math.floor((points.length - 1) / 2)];
  return (
    <figure class={`ac-figure m-${metric}`}>
      <figcaption>
        <span>{label}</span> <strong>{show(total)}</strong>
      </figcaption>
      <div class="plot">
        <div class="y-axis" aria-hidden="true">
          <span>{max > 0 ? show(top) : ""}</span>
          <span>{max > 0 ? show(top / 2) : ""}</span>
          <span>{show(0)}</span>
          <span>{show(top)}</span>
        </div>
        <svg
          viewBox={`0 0 ${n} ${HEIGHT}`}
          preserveAspectRatio="none"
          role="img"
          aria-labelledby={`${id}-t ${id}-d`}
        >
          <title id={`${id}-t`}>{`${label} per ${interval}, ${props.rangeText}`}</title>
          <desc id={`${id}-d`}>{desc}</desc>
          {[HEADROOM, HEIGHT / 2 + HEADROOM / 2].map((gy) => (
            <line class="gridline" x1="0" x2={n} y1={gy} y2={gy} />
          ))}
          <line class="baseline" x1="0" x2={n} y1={HEIGHT} y2={HEIGHT} />
          {points.length <= MAX_BARS
            ? values.map((v, i) => (
              <rect
                class="ac-bar"
                x={(i + 0.15).toFixed(2)}
                y={y(v).toFixed(2)}
                width="0.7"
                height={(HEIGHT - y(v)).toFixed(2)}
              >
                <title>{`${bucketLabel(points[i]!.start, interval)}: ${show(v)}`}</title>
              </rect>
            ))
            : (
              <>
                <polygon
                  class="ac-area"
                  points={`0,${HEIGHT} ${
                    values.map((v, i) => `${(i + 0.5).toFixed(1)},${y(v).toFixed(2)}`).join(" ")
                  } ${n},${HEIGHT}`}
                />
                <polyline
                  class="ac-line"
                  points={values.map((v, i) => `${(i + 0.5).toFixed(1)},${y(v).toFixed(2)}`)
                    .join(" ")}
                />
                {values.map((v, i) => (
                  <rect class="ac-hit" x={i} y="0" width="1" height={HEIGHT}>
                    <title>{`${bucketLabel(points[i]!.start, interval)}: ${show(v)}`}</title>
                  </rect>
                ))}
              </>
            )}
        </svg>
        <span aria-hidden="true"></span>
        <div class="axis" aria-hidden="true">
          <span>{points[0] && bucketLabel(points[0].start, interval)}</span>
          {points.length > 2 && <span>{mid && bucketLabel(mid.start, interval)}</span>}
          <span>
            {points.length > 1 && bucketLabel(points[points.length - 1]!.start, interval)}
          </span>
        </div>
      </div>
    </figure>
  );
}

function SeriesTable(props: { answer: AnalyticsAnswer; metrics: string[]; currency: string }) {
  const show = (m: string, v: unknown) => formatMetric(m, Number(v ?? 0), props.currency);
  const points: Point[] = props.answer.series ?? [];
  const interval = props.answer.interval ?? "day";
  return (
    <details class="ac-table">
      <summary>Show as a table ({points.length} {interval}s)</summary>
      <ScrollNote />
      <div class="table-scroll scroll-x">
        <table>
          <caption class="visually-hidden">
            {props.metrics.map((m) => metricLabel(m, props.currency)).join(", ")} per {interval}
          </caption>
          <thead>
            <tr>
              <th scope="col">
                {INTERVAL_LABELS[interval].replace(/ \(.*\)$/, "")} ({props.answer.tz})
              </th>
              {props.metrics.map((m) => (
                <th scope="col" class="num">
                  {metricLabel(m, props.currency)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {points.map((p) => (
              <tr>
                <th scope="row">{bucketLabel(p.start, interval)}</th>
                {props.metrics.map((m) => <td key={m} class="num">{show(m, p[m])}</td>)}
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row">Total</th>
              {props.metrics.map((m) => (
                <td key={m} class="num">{show(m, props.answer.totals[m])}</td>
              ))}
            </tr>
          </tfoot>
        </table>
      </div>
    </details>
  );
}

/** A metric's column in a breakdown: its short name, the unit in the title (the chart says it). */
function MetricHeader(props: { metric: string; currency: string }) {
  const full = metricLabel(props.metric, props.currency);
  const short = METRIC_LABELS[props.metric] ?? props.metric;
  return (
    <th scope="col" class="num" title={short === full ? undefined : full}>
      {short}
    </th>
  );
}

/**
 * Said above a table that scrolls sideways (app.js shows it when it does; without scripts the
 * edge shadows of .scroll-x say it alone).
 */
export function ScrollNote() {
  return <p class="scroll-note" data-scroll-note hidden>Scroll sideways for more columns →</p>;
}

function BreakdownTable(
  props: { breakdown: Breakdown; form: AnalyticsForm; base: string; metrics: string[] },
) {
  const currency = props.form.currency;
  const show = (m: string, v: unknown) => formatMetric(m, Number(v ?? 0), currency);
  const { dimension, label, answer } = props.breakdown;
  const first = props.metrics[0]!;
  const whole = Number(answer.totals[first] ?? 0);
  const groups = answer.groups ?? [];
  const filtered = props.form.filters.some(([d]) => d === dimension);
  const id = `bd-${dimension}`;
  return (
    <section class="card breakdown" aria-labelledby={id}>
      <h2 id={id}>{label}</h2>
      {groups.length === 0 ? <p class="muted">None in this range.</p> : (
        <>
          <ScrollNote />
          <div class="table-scroll scroll-x">
            <table>
              <thead>
                <tr>
                  <th scope="col">{DIMENSION_LABELS[dimension]}</th>
                  <MetricHeader metric={first} currency={currency} />
                  <th scope="col" class="num">Share</th>
                  {props.metrics.slice(1).map((m) => (
                    <MetricHeader
                      metric={m}
                      currency={currency}
                    />
                  ))}
                </tr>
              </thead>
              <tbody>
                {groups.map((g) => {
                  const part = Number(g.totals[first] ?? 0);
                  const text = keyLabel(dimension, g.key);
                  // A known value filters by it; "unknown" cannot be asked for by value.
                  const href = g.key === null || filtered ? null : formUrl(props.base, {
                    ...props.form,
                    filters: [...props.form.filters, [dimension, g.key]],
                  });
                  return (
                    <tr class={href ? "filterable" : undefined}>
                      <th scope="row" class="key">
                        {href
                          ? (
                            <a href={href} title={`Only ${text}`}>
                              {text}
                            </a>
                          )
                          : <span class={g.key === null ? "muted" : undefined}>{text}</span>}
                      </th>
                      <td class="num">{show(first, part)}</td>
                      <td class="num share">
                        <span>{share(part, whole)}</span>
                        <svg viewBox="0 0 100 4" preserveAspectRatio="none" aria-hidden="true">
                          <rect class="bar-track" width="100" height="4" />
                          <rect
                            class="bar-fill"
                            width={whole > 0 ? Math.max(0, (part / whole) * 100).toFixed(2) : "0"}
                            height="4"
                          />
                        </svg>
                      </td>
                      {props.metrics.slice(1).map((m) => (
                        <td class="num">{show(m, g.totals[m])}</td>
                      ))}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      )}
      {groups.length > 0 && (
        <p class="hint">
          The top {groups.length} by {METRIC_LABELS[first]?.toLowerCase()}; share of all{" "}
          {METRIC_LABELS[first]?.toLowerCase()} in the range.
        </p>
      )}
    </section>
  );
}
