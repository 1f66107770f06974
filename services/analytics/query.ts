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
import type { Db, Sql } from "../../db/connect.ts";
import { ApiError } from "../errors.ts";
import { ROLLUP_METRICS } from "./rollups.ts";

/** The metrics a query may ask for: every column of a rollup row. */
export const METRICS = ROLLUP_METRICS;
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
};
const NEEDS_LINK = new Set<Dimension>(["link", "campaign", "source", "medium"]);

/** ISO 8601 with the zone's offset at that instant, in the session's zone. */
const LOCAL_ISO = `'YYYY-MM-DD"T"HH24:MI:SSTZH:TZM'`;

/**
 * Answers the query in one transaction (one snapshot): the zone is set for it alone. The range
 * is widened to whole buckets (whole hours without an interval); the answer's from and to say
 * which.
 */
export async function queryAnalytics(sql: Sql, q: AnalyticsQuery): Promise<AnalyticsAnswer> {
  return await sql.begin(async (tx) => {
    const range = await queryRange(tx, q);
    const rows = await figures(tx, q, range.from_at, range.to_at, null);
    return assemble(q, range, rows, await buckets(tx, q, range.from_at, range.to_at));
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
    const rows = await figures(tx, q, range.from_at, range.to_at, linkIds);
    const starts = await buckets(tx, q, range.from_at, range.to_at);
    const byLink = new Map<number, Row[]>(linkIds.map((id) => [id, []]));
    for (const row of rows) byLink.get(Number(row.part))?.push(row);
    return new Map([...byLink].map(([id, of]) => [id, assemble(q, range, of, starts)]));
  });
}

interface Range {
  from_at: Date;
  to_at: Date;
  from_text: string;
  to_text: string;
  whole: boolean;
}

/** Sets the zone for the transaction, and widens the range to whole buckets (or refuses it). */
async function queryRange(tx: Db, q: AnalyticsQuery): Promise<Range> {
  await tx`select set_config('TimeZone', ${q.tz}, true)`;
  const unit = q.interval ?? "hour";
  const [range] = await tx<Range[]>`
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
  `;
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
 * One statement: the rollup rows of the range and filters summed per part, bucket and group
 * key, and from those, per part, the totals, the series, the top groups by the first metric
 * (then by key, unknown last) and their series. The part is the link when `linkIds` is given
 * (each link answered apart), else one part for everything.
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
  const part = linkIds ? "r.link_id" : "null::int";
  const bucket = q.interval ? `date_trunc('${q.interval}', r.hour)` : "null::timestamptz";
  const key = q.groupBy ? `${DIMENSION_SQL[q.groupBy]}::text` : "null::text";
  const sums = (from: string) => q.metrics.map((m) => `sum(${from}.${m}) as ${m}`).join(", ");
  const first = q.metrics[0]!;
  const text = `
    with f as (
      select ${part} as part, ${bucket} as bucket, ${key} as key, ${sums("r")}
      from analytics_rollups r
      ${joinLink ? "left join links l on l.id = r.link_id" : ""}
      where ${conditions.join(" and ")}
      group by 1, 2, 3
    ), ranked as (
      select part, key, ${sums("f")},
        row_number() over (
          partition by part order by sum(f.${first}) desc, key collate "C" nulls last
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
    select 'group_series', part, to_char(bucket, ${LOCAL_ISO}), key, 0, ${sums("f")} from f
    where ${q.interval ? "true" : "false"} and exists (
      select 1 from top t where t.part is not distinct from f.part and t.key is not distinct from f.key
    )
    group by part, bucket, key
  `;
  return tx.unsafe<Row[]>(text, params as never[]);
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
