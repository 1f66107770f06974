// The analytics query's parameters as a request gives them (query strings), checked and turned
// into an AnalyticsQuery: every bad one is a 400 invalid_field naming it.
import { z } from "zod";
import type { Sql } from "../../db/connect.ts";
import { ApiError } from "../errors.ts";
import {
  type AnalyticsQuery,
  DEFAULT_RANGE_DAYS,
  type Dimension,
  DIMENSIONS,
  type Interval,
  INTERVALS,
  MAX_RANGE_DAYS,
  MAX_SERIES_VALUES,
  type Metric,
  METRICS,
  PER_LINK_DIMENSIONS,
} from "./query.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;
export const DEFAULT_METRICS: readonly Metric[] = ["views", "installs"];
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 1000;
/** The shortest bucket of each interval, in hours (a day of 23 hours, a February). */
const SHORTEST_HOURS: Record<Interval, number> = { hour: 1, day: 23, week: 167, month: 671 };

/** What a request carries: each parameter's raw text, filters by dimension. */
export interface RawAnalyticsParams {
  from?: string | undefined;
  to?: string | undefined;
  interval?: string | undefined;
  tz?: string | undefined;
  metrics?: string | undefined;
  group_by?: string | undefined;
  limit?: string | undefined;
  link?: string | undefined;
  /** `filter[<name>]` parameters, by name as given. */
  filters: Record<string, string>;
}

const instant = z.iso.datetime({ offset: true }).transform((value) => new Date(value));
const dateOnly = z.iso.date();

function bad(field: string, message: string): ApiError {
  return new ApiError("invalid_field", `${field}: ${message}`, { field });
}

/**
 * An instant as given, or a date (YYYY-MM-DD) as the start of that day in `tz`, which
 * PostgreSQL works out (a day that starts at 01:00 after a change of clocks included).
 */
async function parseInstant(sql: Sql, name: "from" | "to", raw: string, tz: string): Promise<Date> {
  let at: Date | null = null;
  const given = instant.safeParse(raw);
  if (given.success) at = given.data;
  else if (dateOnly.safeParse(raw).success) {
    const [row] = await sql<{ at: Date }[]>`
      select (${raw}::date::timestamp at time zone ${tz}) as at`;
    at = row!.at;
  }
  if (at === null || Number.isNaN(at.getTime())) {
    throw bad(
      name,
      "must be an ISO 8601 date and time with an offset (2026-03-01T00:00:00Z) or a date " +
        "(2026-03-01, the start of that day in tz)",
    );
  }
  const year = at.getUTCFullYear();
  if (year < 1970 || year > 9999) throw bad(name, "must be between 1970 and 9999");
  return at;
}

function oneOf<T extends string>(field: string, list: readonly T[], raw: string): T {
  if ((list as readonly string[]).includes(raw)) return raw as T;
  throw bad(field, `must be one of ${list.join(", ")} (got ${JSON.stringify(raw)})`);
}

/** IANA zone names PostgreSQL knows, read once per process. */
let zones: Promise<Set<string>> | null = null;
function knownZones(sql: Sql): Promise<Set<string>> {
  zones ??= sql<{ name: string }[]>`select name from pg_timezone_names`
    .then((rows) => new Set(rows.map((r) => r.name)))
    .catch((err) => {
      zones = null;
      throw err;
    });
  return zones;
}

/** Zones offered to pick from: the regions' IANA names and UTC, without aliases of others. */
const PICKABLE = "^(Africa|America|Antarctica|Asia|Atlantic|Australia|Europe|Indian|Pacific)/";

let pickable: Promise<string[]> | null = null;
/**
 * The zones a query can be answered in for the year around `now` (every offset they have a
 * whole number of hours, sampled every two weeks), by name: what a zone picker offers. Read once
 * per process.
 */
export function answerableZones(sql: Sql, now: Date): Promise<string[]> {
  pickable ??= sql<{ name: string }[]>`
    select z.name from pg_timezone_names z
    where z.name = 'UTC' or z.name ~ ${PICKABLE}
    and not exists (
      select 1 from generate_series(${now}::timestamptz - interval '6 months',
        ${now}::timestamptz + interval '6 months', interval '14 days') t
      where extract(epoch from (t at time zone z.name) - (t at time zone 'UTC'))::int % 3600 <> 0
    )
    order by z.name collate "C"`
    .then((rows) => rows.map((r) => r.name))
    .catch((err) => {
      pickable = null;
      throw err;
    });
  return pickable;
}

/**
 * The query of `raw` for the environment, as of `now`: from/to default to the 30 days up to
 * now and may be at most 400 days apart; the zone must be an IANA name PostgreSQL knows (not
 * an abbreviation nor a POSIX rule); the series may hold at most MAX_SERIES_VALUES values.
 */
export async function parseAnalyticsParams(
  sql: Sql,
  environmentId: number,
  raw: RawAnalyticsParams,
  now: Date,
  /** Answered for one link each (GraphQL's Link.analytics): rule and variant need no link=. */
  perLink = false,
): Promise<AnalyticsQuery> {
  const given = (v: string | undefined) => v !== undefined && v !== "";
  const tz = given(raw.tz) ? raw.tz! : "UTC";
  // Names only: PostgreSQL would also take "EST" or "foo+3" as a POSIX rule.
  if (!/^[A-Za-z][A-Za-z0-9_+\-\/]*$/.test(tz) || !(await knownZones(sql)).has(tz)) {
    throw bad(
      "tz",
      `must be an IANA time zone name such as Europe/Berlin (got ${JSON.stringify(tz)})`,
    );
  }

  const to = given(raw.to) ? await parseInstant(sql, "to", raw.to!, tz) : now;
  const from = given(raw.from)
    ? await parseInstant(sql, "from", raw.from!, tz)
    : new Date(to.getTime() - DEFAULT_RANGE_DAYS * DAY_MS);
  if (from.getTime() >= to.getTime()) throw bad("to", "must be later than from");
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS) {
    throw bad("to", `must be at most ${MAX_RANGE_DAYS} days after from`);
  }
  const interval = given(raw.interval) ? oneOf("interval", INTERVALS, raw.interval!) : null;

  let metrics: Metric[] = [...DEFAULT_METRICS];
  if (raw.metrics !== undefined) {
    const names = raw.metrics.split(",").map((m) => m.trim());
    metrics = names.map((m) => oneOf("metrics", METRICS, m));
    if (new Set(metrics).size !== metrics.length) throw bad("metrics", "names a metric twice");
  }

  const groupBy = given(raw.group_by) ? oneOf("group_by", DIMENSIONS, raw.group_by!) : null;
  let limit = DEFAULT_LIMIT;
  if (given(raw.limit)) {
    if (!/^\d{1,4}$/.test(raw.limit!) || Number(raw.limit) < 1 || Number(raw.limit) > MAX_LIMIT) {
      throw bad("limit", `must be a whole number from 1 to ${MAX_LIMIT}`);
    }
    limit = Number(raw.limit);
  }

  const filters: Partial<Record<Dimension, string>> = {};
  for (const [name, value] of Object.entries(raw.filters)) {
    const field = `filter[${name}]`;
    const dimension = oneOf(field, DIMENSIONS, name);
    if (value === "") throw bad(field, "must not be empty");
    filters[dimension] = value;
  }
  if (raw.link !== undefined) {
    if (raw.link === "") throw bad("link", "must not be empty");
    if (filters.link !== undefined && filters.link !== raw.link) {
      throw bad("link", "differs from filter[link]");
    }
    filters.link = raw.link;
  }

  // A rule's name or a variant's number means something only within its link.
  for (const d of PER_LINK_DIMENSIONS) {
    if ((groupBy === d || filters[d] !== undefined) && filters.link === undefined && !perLink) {
      throw bad("link", `must be given with ${groupBy === d ? "group_by" : "filter"}=${d}`);
    }
  }

  if (interval) {
    const buckets = bucketBound(from, to, interval);
    const values = buckets * (1 + (groupBy ? limit : 0));
    if (values > MAX_SERIES_VALUES) {
      throw bad(
        "interval",
        `${buckets} buckets × ${groupBy ? limit + 1 : 1} series exceed ${MAX_SERIES_VALUES} ` +
          "values: choose a longer interval, a shorter range or a lower limit",
      );
    }
  }
  return { environmentId, from, to, interval, tz, metrics, groupBy, limit, filters };
}

/** At most how many buckets a range holds in `interval` (its shortest buckets, one partial). */
function bucketBound(from: Date, to: Date, interval: Interval): number {
  return Math.ceil((to.getTime() - from.getTime()) / HOUR_MS / SHORTEST_HOURS[interval]) + 1;
}

/** At most how many series values the answer to `q` holds (0 without an interval). */
export function seriesValueBound(q: AnalyticsQuery): number {
  if (!q.interval) return 0;
  return bucketBound(q.from, q.to, q.interval) * (1 + (q.groupBy ? q.limit : 0));
}
