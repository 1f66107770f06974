// The analytics query (CONTRACT, "Analytics"): totals, a series over time in any IANA zone, and
// one breakdown, all from the hourly rollups (./rollups.ts), never from the raw events. REST
// answers it today and GraphQL will; parameters arrive here validated (./params.ts).
//
// Time zones. Rollups are kept per UTC hour, so a bucket can be answered exactly when its
// bounds fall on whole UTC hours: true of every hour, day, ISO week and month of a zone whose
// offset is a whole number of hours, daylight saving included (a local day of 23 or 25 hours
// is 23 or 25 UTC hours). PostgreSQL does the calendar arithmetic in the query's zone
// (date_trunc, and adding a day or a month to a timestamptz, follow the session's TimeZone).
// A zone whose offset is not whole hours (India's +05:30, Nepal's +05:45, Lord Howe's half-hour
// summer shift) cannot be answered exactly from UTC hours: such a query is refused with a 400
// naming `tz`, rather than answered with figures that are off.
import { onCitus } from "../../db/cluster.ts";
import type { Db, Sql } from "../../db/connect.ts";
import { ApiError } from "../errors.ts";
import { MARGIN_DIMENSIONS, type MarginDimension, ROLLUP_METRICS } from "./rollups.ts";

/**
 * The metrics a query may ask for: every metric column of a rollup row but `amount` (purchases'
 * amounts in their own currencies, which group_by=currency answers as revenue).
 */
export const METRICS = ROLLUP_METRICS.filter((m) => m !== "amount") as Exclude<
  (typeof ROLLUP_METRICS)[number],
  "amount"
>[];
export type Metric = (typeof METRICS)[number];

export const DIMENSIONS = [
  "link",
  "country",
  "platform",
  "os",
  "browser",
  "referrer",
  "campaign",
  "source",
  "medium",
  "event_name",
  "rule",
  "variant",
  "currency",
] as const;
export type Dimension = (typeof DIMENSIONS)[number];

export const INTERVALS = ["hour", "day", "week", "month"] as const;
export type Interval = (typeof INTERVALS)[number];

export const MAX_RANGE_DAYS = 400;
export const DEFAULT_RANGE_DAYS = 30;
/** Series values in one answer at most: buckets × (groups + 1). */
export const MAX_SERIES_VALUES = 200_000;

export interface AnalyticsQuery {
  environmentId: number;
  from: Date;
  to: Date;
  interval: Interval | null;
  tz: string;
  metrics: Metric[];
  groupBy: Dimension | null;
  limit: number;
  /** All must hold. `link` is a link's path. */
  filters: Partial<Record<Dimension, string>>;
}

export type Figures = Record<string, number>;
/** A bucket: its start and one number per metric (the intersection a JSON object of both is). */
export type Point = { start: string } & { [metric: string]: number };

export interface AnalyticsAnswer {
  from: string;
  to: string;
  interval?: Interval;
  tz: string;
  totals: Figures;
  series?: Point[];
  groups?: { key: string | null; totals: Figures; series?: Point[] }[];
}

/** Each dimension's value on a rollup row `r` (and its link `l`, joined when needed). */
const DIMENSION_SQL: Record<Dimension, string> = {
  link: "l.path",
  country: "r.country",
  platform: "r.platform",
  os: "r.os",
  browser: "r.browser",
  referrer: "r.referrer",
  campaign: "l.tracking_campaign",
  source: "l.tracking_source",
  medium: "l.tracking_medium",
  event_name: "r.event_name",
  rule: "r.rule",
  variant: "r.variant::text",
  currency: "r.currency",
};
/** Dimensions that mean something only within one link: asked for with `link=`. */
export const PER_LINK_DIMENSIONS: readonly Dimension[] = ["rule", "variant"];
const NEEDS_LINK = new Set<Dimension>(["link", "campaign", "source", "medium"]);

/** ISO 8601 with the zone's offset at that instant, in the session's zone. */
const LOCAL_ISO = `'YYYY-MM-DD"T"HH24:MI:SSTZH:TZM'`;

/**
 * Answers the query in one transaction (one snapshot): the zone is set for it alone. The range
 * is widened to whole buckets (whole hours without an interval); the answer's from and to say
 * which. Four round trips: begin, the zone and the range, the figures and the buckets, commit
 * (statements issued together on the transaction's connection are pipelined by postgres.js and
 * run in the order issued).
 */
export async function queryAnalytics(sql: Sql, q: AnalyticsQuery): Promise<AnalyticsAnswer> {
  return await sql.begin(async (tx) => {
    const range = await queryRange(tx, q);
    const [rows, starts] = await Promise.all([
      figures(tx, q, range.from_at, range.to_at, null),
      buckets(tx, q, range.from_at, range.to_at),
    ]);
    return assemble(q, range, rows, starts);
  });
}

/**
 * The same query answered for each of `linkIds` apart, as if each were filtered by its link,
 * in the same statements whatever their number (a GraphQL page's `Link.analytics`). `q` must
 * not filter by link itself. Links without events have zeros; the map holds every id given.
 */
export async function queryAnalyticsByLink(
  sql: Sql,
  q: AnalyticsQuery,
  linkIds: readonly number[],
): Promise<Map<number, AnalyticsAnswer>> {
  if (q.filters.link !== undefined) throw new Error("queryAnalyticsByLink: q filters by link");
  return await sql.begin(async (tx) => {
    const range = await queryRange(tx, q);
    const [rows, starts] = await Promise.all([
      figures(tx, q, range.from_at, range.to_at, linkIds),
      buckets(tx, q, range.from_at, range.to_at),
    ]);
    const byLink = new Map<number, Row[]>(linkIds.map((id) => [id, []]));
    for (const row of rows) byLink.get(Number(row.part))?.push(row);
    return new Map([...byLink].map(([id, of]) => [id, assemble(q, range, of, starts)]));
  });
}

export interface Range {
  from_at: Date;
  to_at: Date;
  from_text: string;
  to_text: string;
  whole: boolean;
}

/**
 * Sets the session's zone for the rest of transaction `tx` (its statements bucket and print
 * times in it); `tz` is a name from pg_timezone_names. On Citus the statements over the rollups
 * run on the workers, where a setting made with set_config() does not go: there it is a `SET
 * LOCAL`, which Citus passes on to the workers the transaction uses once
 * citus.propagate_set_commands says so (without it, the workers bucketed in UTC).
 */
export function setTransactionTimeZone(tx: Db, tz: string) {
  if (!onCitus()) return tx`select set_config('TimeZone', ${tz}, true)`;
  return Promise.all([
    tx.unsafe(`set local citus.propagate_set_commands to 'local'`),
    tx.unsafe(`set local time zone '${tz.replaceAll("'", "''")}'`),
  ]);
}

/**
 * Sets the zone for the transaction, and widens the range to whole buckets (or refuses it): one
 * round trip, the range's statement pipelined behind the zone's, so it computes in that zone.
 */
export async function queryRange(tx: Db, q: AnalyticsQuery): Promise<Range> {
  const unit = q.interval ?? "hour";
  const [, [range]] = await Promise.all([
    setTransactionTimeZone(tx, q.tz),
    tx<Range[]>`
    with r as (
      select date_trunc(${unit}, ${q.from}::timestamptz) as from_at,
        case when date_trunc(${unit}, ${q.to}::timestamptz) = ${q.to}::timestamptz
          then ${q.to}::timestamptz
          else date_trunc(${unit}, ${q.to}::timestamptz) + ${`1 ${unit}`}::interval end as to_at
    )
    select from_at, to_at, to_char(from_at, ${tx.unsafe(LOCAL_ISO)}) as from_text,
      to_char(to_at, ${tx.unsafe(LOCAL_ISO)}) as to_text,
      -- Every offset the zone has in the range (sampled each hour) is whole hours.
      (select bool_and(extract(timezone from h)::int % 3600 = 0)
        from generate_series(from_at, to_at, interval '1 hour') h) as whole
    from r
  `,
  ]);
  if (!range!.whole) {
    throw new ApiError(
      "invalid_field",
      `tz: ${q.tz} is offset from UTC by a fraction of an hour in this range; analytics are kept ` +
        "per UTC hour, so only zones with whole-hour offsets can be answered exactly",
      { field: "tz" },
    );
  }
  return range!;
}

/**
 * The environment's views over [from, to) (whole hours, transaction `tx` in the query's zone),
 * as queryAnalytics counts them: from the margins and the rollup rows not merged yet. The funnel
 * (./funnel.ts) reads its total here.
 */
export async function environmentViews(
  tx: Db,
  environmentId: number,
  from: Date,
  to: Date,
): Promise<number> {
  const q: AnalyticsQuery = {
    environmentId,
    from,
    to,
    interval: null,
    tz: "UTC",
    metrics: ["views"],
    groupBy: null,
    limit: 1,
    filters: {},
  };
  const rows = await figures(tx, q, from, to, null);
  return Number(rows.find((r) => r.kind === "total")?.views ?? 0);
}

interface Row {
  kind: "total" | "series" | "group" | "group_series";
  /** The link the row is about when answering per link (queryAnalyticsByLink), else null. */
  part: number | string | null;
  bucket: string | null;
  key: string | null;
  /** A group's place: by the first metric, then by key (byte order), unknown last. */
  rank: string;
  [metric: string]: unknown;
}

/** Every bucket start of the range, in order, as the answer prints it. */
async function buckets(tx: Db, q: AnalyticsQuery, from: Date, to: Date): Promise<string[]> {
  if (!q.interval) return [];
  const rows = await tx<{ start: string }[]>`
    select to_char(b, ${tx.unsafe(LOCAL_ISO)}) as start
    from generate_series(${from}::timestamptz, ${to}::timestamptz - interval '1 microsecond',
      ${`1 ${q.interval}`}::interval) b
    order by b
  `;
  return rows.map((r) => r.start);
}

/**
 * One statement: the rows of the range and filters summed per part, bucket and group key, and
 * from those, per part, the totals, the series, the top groups by the first metric (then by
 * key, unknown last) and their series. The part is the link when `linkIds` is given (each link
 * answered apart), else one part for everything. When margins can answer (marginSource: not
 * per link, at most one filter, by a margin dimension, and a breakdown by none or a margin
 * dimension, the filter's own when filtered), the rows are the environment's margins of the
 * hours merged and the rollup rows not merged yet (./rollups.ts: both in one snapshot, so each
 * event counts once); otherwise the rollups, which margins cannot answer by link or by two
 * dimensions at once.
 */
function figures(
  tx: Db,
  q: AnalyticsQuery,
  from: Date,
  to: Date,
  linkIds: readonly number[] | null,
): Promise<Row[]> {
  const params: unknown[] = [q.environmentId, from.toISOString(), to.toISOString()];
  const param = (value: unknown) => `$${params.push(value)}`;
  // Without an interval, the whole range is one bucket (the series is not answered).
  const bucketOf = (hour: string) =>
    q.interval ? `date_trunc('${q.interval}', ${hour})` : "$2::timestamptz";
  // By currency, each group's revenue is its purchases' amounts in that currency (the rows'
  // `own`); the totals and the series stay in the reporting currency.
  const own = q.groupBy === "currency" && q.metrics.includes("revenue");
  const sums = (from: string, group = false) =>
    q.metrics.map((m) => `sum(${from}.${group && own && m === "revenue" ? "own" : m}) as ${m}`)
      .join(", ");
  const margin = marginSource(q, linkIds);
  const source = margin
    ? `select null::int as part, m.* from (${
      marginRows(
        margin.dimension,
        margin.value === null ? null : param(margin.value),
        q.groupBy !== null,
        q.metrics,
        bucketOf,
      )
    }) m`
    : rollupRows(q, param, bucketOf, linkIds);
  const first = q.metrics[0]!;
  const text = `
    with f as (
      select s.part, s.bucket, s.key, ${sums("s")}${own ? ", sum(s.own) as own" : ""}
      from (${source}) s
      group by 1, 2, 3
    ), ranked as (
      select part, key, ${sums("f", true)},
        row_number() over (
          partition by part
          order by sum(f.${own && first === "revenue" ? "own" : first}) desc,
            key collate "C" nulls last
        ) as rank
      from f
      group by part, key
      -- A group whose every figure is zero (a purchase corrected into another bucket) is none.
      having ${q.metrics.map((m) => `sum(f.${m}) <> 0`).join(" or ")}
    ), top as (
      select * from ranked where rank <= ${param(q.groupBy ? q.limit : 0)}
    )
    select 'total' as kind, part, null as bucket, null as key, 0::bigint as rank, ${sums("f")}
    from f group by part
    union all
    select 'series', part, to_char(bucket, ${LOCAL_ISO}), null, 0, ${sums("f")} from f
    where ${q.interval ? "true" : "false"}
    group by part, bucket
    union all
    select 'group', part, null, key, rank, ${q.metrics.join(", ")} from top
    union all
    select 'group_series', part, to_char(bucket, ${LOCAL_ISO}), key, 0, ${sums("f", true)} from f
    where ${q.interval ? "true" : "false"} and exists (
      select 1 from top t where t.part is not distinct from f.part and t.key is not distinct from f.key
    )
    group by part, bucket, key
  `;
  return tx.unsafe<Row[]>(text, params as never[]);
}

const isMargin = (d: Dimension | null): d is MarginDimension | null =>
  d === null || (MARGIN_DIMENSIONS as readonly string[]).includes(d);

/**
 * Which margins answer the query, if any: the environment's (not per link), with no filter and
 * no breakdown or one by a margin dimension; or filtered by one margin dimension's value and
 * broken down by none or that same dimension (that value's rows of the dimension's margins sum
 * exactly the rollup rows the filter keeps). Anything else reads the rollups.
 */
function marginSource(
  q: AnalyticsQuery,
  linkIds: readonly number[] | null,
): { dimension: MarginDimension | null; value: string | null } | null {
  if (linkIds !== null || !isMargin(q.groupBy)) return null;
  const filters = Object.entries(q.filters) as [Dimension, string][];
  if (filters.length === 0) return { dimension: q.groupBy, value: null };
  const [[dimension, value]] = filters as [[Dimension, string]];
  if (filters.length > 1 || !isMargin(dimension)) return null;
  if (q.groupBy !== null && q.groupBy !== dimension) return null;
  return { dimension, value };
}

/**
 * The environment's rows of the range ($1 to $3) by bucket and value of `dimension` (none: the
 * totals), only those of the value in `value` (a placeholder) when given, keyed by the value
 * when `keyed` (else one group, null), from its margins and its rollup rows not merged yet. A UTC day most of whose hours
 * (more than 12) fall in one bucket counts there by its daily margins, corrected by its hourly
 * margins: each of its hours in another bucket, or outside the range, is taken from that bucket
 * and given to its own. So a series of UTC days reads a row per day and value; of another
 * zone's days, a day's row and the few hours its midnight is away from UTC's; a series by the
 * hour, every hour's rows.
 */
function marginRows(
  dimension: MarginDimension | null,
  value: string | null,
  keyed: boolean,
  metrics: readonly Metric[],
  bucketOf: (hour: string) => string,
): string {
  const columns = (from: string, sign = "") =>
    metrics.map((m) => `${sign}${from}.${m} as ${m}`).join(", ");
  const margins = (join: string, where: string) =>
    `analytics_margins m join ${join}
    where m.environment_id = $1 and m.dimension = '${dimension ?? "total"}' and ${where}${
      value === null ? "" : ` and m.value = ${value}`
    }`;
  const key = (from: string) => keyed ? `${from}.value` : "null::text";
  return `
    with hours as (
      -- Every hour of the UTC days the range touches, and its bucket (null outside the range).
      select h.h, case when h.h >= $2::timestamptz and h.h < $3::timestamptz
        then ${bucketOf("h.h")} end as bucket
      from generate_series(date_trunc('day', $2::timestamptz, 'UTC'),
        date_trunc('day', $3::timestamptz - interval '1 hour', 'UTC') + interval '23 hours',
        interval '1 hour') as h(h)
    ), best as (
      select distinct on (day) day, bucket
      from (
        select date_trunc('day', h, 'UTC') as day, bucket, count(*) as n
        from hours where bucket is not null group by 1, 2
      ) c
      where n > 12
      order by day, n desc
    ), placed as (
      select h.h, h.bucket, b.bucket as day_bucket
      from hours h left join best b on b.day = date_trunc('day', h.h, 'UTC')
      where h.bucket is distinct from b.bucket
    )
    select b.bucket, ${key("m")} as key, ${columns("m")}
    from ${
    margins("best b on b.day = m.hour", "m.daily and m.hour = any(array(select day from best))")
  }
    union all
    -- Each such hour, read once: given to its bucket, taken from its day's.
    select v.bucket, ${key("m")}, ${columns("m", "v.sign * ")}
    from ${
    margins(
      `placed p on p.h = m.hour
      cross join lateral (values (p.bucket, 1), (p.day_bucket, -1)) as v(bucket, sign)`,
      "not m.daily and m.hour = any(array(select h from placed)) and v.bucket is not null",
    )
  }
    union all
    select ${bucketOf("r.hour")}, ${keyed && dimension ? `r.${dimension}` : "null::text"},
      ${columns("r")}
    from analytics_rollups r
    where r.environment_id = $1 and not r.merged and r.hour >= $2::timestamptz and r.hour < $3${
    value === null ? "" : ` and r.${dimension} = ${value}`
  }`;
}

/** The environment's rollup rows of the range ($1 to $3) and filters, by bucket and group key. */
function rollupRows(
  q: AnalyticsQuery,
  param: (value: unknown) => string,
  bucketOf: (hour: string) => string,
  linkIds: readonly number[] | null,
): string {
  const conditions = ["r.environment_id = $1", "r.hour >= $2::timestamptz", "r.hour < $3"];
  if (linkIds) conditions.push(`r.link_id = any(${param(linkIds)}::int[])`);
  let joinLink = q.groupBy !== null && NEEDS_LINK.has(q.groupBy);
  for (const [dimension, value] of Object.entries(q.filters) as [Dimension, string][]) {
    if (dimension === "link") {
      // By id, so the link index serves it.
      conditions.push(
        `r.link_id = (select id from links where environment_id = $1 and path = ${param(value)})`,
      );
      continue;
    }
    if (NEEDS_LINK.has(dimension)) joinLink = true;
    conditions.push(`${DIMENSION_SQL[dimension]} = ${param(value)}`);
  }
  const key = q.groupBy ? `${DIMENSION_SQL[q.groupBy]}::text` : "null::text";
  return `
    select ${linkIds ? "r.link_id" : "null::int"} as part, ${bucketOf("r.hour")} as bucket,
      ${key} as key, ${q.metrics.map((m) => `r.${m}`).join(", ")}${
    q.groupBy === "currency" ? ", r.amount as own" : ""
  }
    from analytics_rollups r
    ${joinLink ? "left join links l on l.id = r.link_id" : ""}
    where ${conditions.join(" and ")}`;
}

function assemble(
  q: AnalyticsQuery,
  range: { from_text: string; to_text: string },
  rows: Row[],
  starts: string[],
): AnalyticsAnswer {
  const pick = (row: Row | undefined): Figures =>
    Object.fromEntries(q.metrics.map((m) => [m, Number(row?.[m] ?? 0)]));
  const series = (of: Row[]): Point[] => {
    const byStart = new Map(of.map((r) => [r.bucket!, r]));
    return starts.map((start) => ({ start, ...pick(byStart.get(start)) }) as Point);
  };
  const answer: AnalyticsAnswer = {
    from: range.from_text,
    to: range.to_text,
    ...(q.interval ? { interval: q.interval } : {}),
    tz: q.tz,
    totals: pick(rows.find((r) => r.kind === "total")),
  };
  if (q.interval) answer.series = series(rows.filter((r) => r.kind === "series"));
  if (q.groupBy) {
    // In the statement's order (its rank), which a union does not keep.
    const groups = rows.filter((r) => r.kind === "group")
      .sort((a, b) => Number(a.rank) - Number(b.rank));
    answer.groups = groups.map((g) => ({
      key: g.key,
      totals: pick(g),
      ...(q.interval
        ? { series: series(rows.filter((r) => r.kind === "group_series" && r.key === g.key)) }
        : {}),
    }));
  }
  return answer;
}
