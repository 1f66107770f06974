// The analytics rollups (table analytics_rollups, migration 00013): hourly counts per
// environment, link and dimension values, which every analytics query reads instead of the raw
// events; and their margins (analytics_margins, migration 00015): the merged rollups of each
// environment and hour summed per value of one dimension, which a query without filters reads
// instead of the rollups, as they are a few dozen rows an hour where the rollups are about one
// row per event once an environment has many links. How both stay exact (rollups written by the
// statement that stores the events, appended only; merged, and their margins replaced, by the
// background job in one statement) is told in the migrations; this module holds the SQL that
// writes, merges and purges them.
import type { Db, Sql } from "../../db/connect.ts";
import type { NewEvent } from "../events/event.ts";
import { asMaintainer } from "../maintenance/lock.ts";
import { deleteDefaultRowsBefore } from "../maintenance/partitions.ts";

export const ROLLUPS_TABLE = "analytics_rollups";
export const MARGINS_TABLE = "analytics_margins";
export const LINK_DAYS_TABLE = "analytics_link_days";

/** The metric columns of a rollup row, in table order. */
export const ROLLUP_METRICS = [
  "views",
  "opens",
  "installs",
  "reinstalls",
  "reactivations",
  "app_opens",
  "user_referred",
  "sessions",
  "time_spent",
  "purchases",
  "revenue",
  "custom",
  // Purchases' amounts in their own currency, read as revenue by group_by=currency (migration
  // 00027): not a metric of its own.
  "amount",
  "unconverted_purchases",
] as const;
export type RollupMetric = (typeof ROLLUP_METRICS)[number];

/** The dimension columns of a rollup row beside its environment and hour. */
export const ROLLUP_KEYS = [
  "link_id",
  "country",
  "platform",
  "os",
  "browser",
  "referrer",
  "event_name",
  "rule",
  "variant",
  // A purchase's currency (null on every other row).
  "currency",
] as const;

/**
 * The dimensions analytics_margins has a row per value of (the rollup column of the same name);
 * beside them, each hour's 'total' row. Link, campaign, source and medium are not among them:
 * the last three are the link's as it is now, and an hour has about as many links as events.
 */
export const MARGIN_DIMENSIONS = [
  "country",
  "platform",
  "os",
  "browser",
  "referrer",
  "event_name",
] as const;
export type MarginDimension = (typeof MARGIN_DIMENSIONS)[number];

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/** The dimension values an event is rolled up under (null: unknown). */
export interface EventDimensions {
  country: string | null;
  platform: string | null;
  os: string | null;
  browser: string | null;
  referrer: string | null;
  /** The rule that decided the hit (its name or 1-based index, as text), from attribution. */
  rule: string | null;
  /** The split variant (1-based) that decided the hit, from attribution. */
  variant: number | null;
}

const MAX_VARIANT = 10;

/**
 * What the rollups take of an event: the one definition. Ingested events contribute the
 * country and, when they are strings, the device's platform and os; views also their browser
 * and referrer host (the link host records those). The migration's backfill and the tests'
 * reference spell the same rules over the stored envelopes.
 */
export function eventDimensions(
  e: Pick<NewEvent, "type" | "geo" | "device" | "attribution">,
): EventDimensions {
  const device = e.device ?? {};
  const text = (v: unknown) => (typeof v === "string" ? v : null);
  const view = e.type === "view";
  return {
    country: e.geo?.country ?? null,
    platform: text(device.platform),
    os: text(device.os),
    browser: view ? text(device.browser) : null,
    referrer: view ? text(e.attribution?.referrer_host) : null,
    ...ruleAndVariant(e.attribution),
  };
}

/**
 * `attribution.rule` and `attribution.variant` as the rollups keep them: the link host records
 * them on views; an app may send them on its own events (say, read from the landing URL) so
 * installs and purchases count for the variant that brought them. Anything else is no rule.
 */
function ruleAndVariant(
  attribution: Record<string, unknown> | null | undefined,
): { rule: string | null; variant: number | null } {
  const rule = attribution?.rule;
  const variant = attribution?.variant;
  return {
    rule: typeof rule === "string" && rule.length > 0 && rule.length <= 100
      ? rule
      : Number.isInteger(rule) && (rule as number) >= 1 && (rule as number) <= 50
      ? String(rule)
      : null,
    variant: Number.isInteger(variant) && (variant as number) >= 1 &&
        (variant as number) <= MAX_VARIANT
      ? (variant as number)
      : null,
  };
}

/** The UTC hour an instant falls in, as date_trunc('hour', at, 'UTC') has it. */
export function utcHour(at: Date): Date {
  return new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
}

/** The UTC midnight at or before `at`, as date_trunc('day', at, 'UTC') has it. */
export function utcMidnight(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

/**
 * How a range [from, to) is read from a table per UTC day: its whole UTC days [first, last)
 * (`days` false when it spans no midnight to midnight), and the hours before and after them,
 * [from, headTo) and [tailFrom, to), read from the rows themselves (without whole days, the
 * head is the range and the tail empty).
 */
export function utcDaysOf(from: Date, to: Date): {
  days: boolean;
  first: Date;
  last: Date;
  headTo: Date;
  tailFrom: Date;
} {
  const first = new Date(Math.ceil(from.getTime() / DAY_MS) * DAY_MS);
  const last = utcMidnight(to);
  const days = first < last;
  return { days, first, last, headTo: days ? first : to, tailFrom: days ? last : to };
}

/**
 * The storing statement's rollup step (services/events/record.ts insertEvents), as a CTE body over its
 * `batch` (event_id, type, name, occurred_at, link_id, ord) and `inserted` (event_id) CTEs: one
 * row per hour, link and dimension values of the events actually inserted. `events` are the
 * batch's, in its order: their dimensions and seconds go as one JSON array, which PostgreSQL
 * reads in one pass (taking them out of the envelopes again cost a parse per value). Purchases
 * are left to the purchase versions (purchaseRollupRows), which count only the newest version.
 */
export function rollupInsertSql(
  db: Db,
  environmentId: number,
  events: readonly Pick<NewEvent, "type" | "geo" | "device" | "attribution" | "time_spent">[],
) {
  const facts = JSON.stringify(
    events.map((e) => {
      const { rule, variant, ...dimensions } = eventDimensions(e);
      // A rule and a variant only when they decided (json_to_recordset reads a missing key as
      // null): most events have neither, and their JSON stays as it was.
      return {
        ...dimensions,
        ...(rule === null ? {} : { rule }),
        ...(variant === null ? {} : { variant }),
        secs: e.type === "session" ? e.time_spent : null,
      };
    }),
  );
  return db`
    insert into analytics_rollups (
      environment_id, hour, link_id, country, platform, os, browser, referrer, event_name,
      rule, variant, views, opens, installs, reinstalls, reactivations, app_opens, user_referred, sessions,
      time_spent, custom
    )
    select ${environmentId}, date_trunc('hour', b.occurred_at, 'UTC'), b.link_id, d.country,
      d.platform, d.os, d.browser, d.referrer, b.name, d.rule, d.variant,
      count(*) filter (where b.type = 'view'),
      count(*) filter (where b.type = 'open'),
      count(*) filter (where b.type = 'install'),
      count(*) filter (where b.type = 'reinstall'),
      count(*) filter (where b.type = 'reactivation'),
      count(*) filter (where b.type = 'app_open'),
      count(*) filter (where b.type = 'user_referred'),
      count(*) filter (where b.type = 'session'),
      coalesce(sum(d.secs) filter (where b.type = 'session'), 0),
      count(*) filter (where b.type = 'custom')
    from batch b
    join rows from (
      json_to_recordset((${facts}::text)::json)
        as (country text, platform text, os text, browser text, referrer text, rule text,
          variant smallint, secs bigint)
    ) with ordinality as d(country, platform, os, browser, referrer, rule, variant, secs, ord)
      on d.ord = b.ord
    where b.type <> 'purchase' and b.event_id in (select event_id from inserted)
    group by 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
  `;
}

/** Where a purchase version counts: its event's hour, link and dimensions. */
export interface PurchaseBucket {
  hour: Date;
  link_id: number | null;
  country: string | null;
  platform: string | null;
  os: string | null;
  rule: string | null;
  variant: number | null;
  name: string;
  /** The purchase's currency (upper case). */
  currency: string;
}

/**
 * What a purchase version moves in its bucket: a converted one counts as a purchase with its
 * conversion as revenue, one without a rate as an unconverted purchase; both with their
 * amount in their own currency. A correction or a reconversion appends the differences.
 */
export interface PurchaseDelta {
  bucket: PurchaseBucket;
  purchases: number;
  revenue: number;
  amount: number;
  unconverted: number;
}

/**
 * Appends the purchase deltas, as a CTE body (services/events/record.ts runs it in the statement that
 * records the new versions): a new version adds one purchase and its amount to its bucket, and
 * takes the replaced version's back from that one's.
 */
export function purchaseRollupRows(db: Db, environmentId: number, deltas: PurchaseDelta[]) {
  const col = <T>(f: (d: PurchaseDelta) => T) => deltas.map(f);
  return db`
    insert into analytics_rollups (
      environment_id, hour, link_id, country, platform, os, event_name, rule, variant, currency,
      purchases, revenue, amount, unconverted_purchases
    )
    select ${environmentId}, hour, link_id, country, platform, os, name, rule, variant, currency,
      purchases, revenue, amount, unconverted
    from unnest(
      ${col((d) => d.bucket.hour.toISOString())}::timestamptz[],
      ${col((d) => d.bucket.link_id)}::int[],
      ${col((d) => d.bucket.country)}::text[],
      ${col((d) => d.bucket.platform)}::text[],
      ${col((d) => d.bucket.os)}::text[],
      ${col((d) => d.bucket.name)}::text[],
      ${col((d) => d.bucket.rule)}::text[],
      ${col((d) => d.bucket.variant)}::smallint[],
      ${col((d) => d.bucket.currency)}::text[],
      ${col((d) => d.purchases)}::bigint[],
      ${col((d) => d.revenue)}::bigint[],
      ${col((d) => d.amount)}::bigint[],
      ${col((d) => d.unconverted)}::bigint[]
    ) as t(hour, link_id, country, platform, os, name, rule, variant, currency, purchases, revenue,
      amount, unconverted)
  `;
}

/** A numeric sum clamped to bigint, as the counters saturate rather than fail. */
const clamp = (expr: string) =>
  `greatest(-9223372036854775808, least(${expr}, 9223372036854775807))::bigint`;

export interface MergeResult {
  /** False when another instance held the maintenance lock. */
  ran: boolean;
  /** Rows appended by ingestion that were merged. */
  rows: number;
  /** (environment, hour) pairs merged. */
  hours: number;
}

/**
 * Merges the rows appended by ingestion into one row per key, for the hours that ended before
 * `before`, `hours` (environment, hour) pairs per statement and up to `maxBatches` statements
 * a pass. Each statement deletes every row of its hours and inserts their sums, and replaces
 * those hours' margins by the sums of the same rows per value of each margin dimension, and adds
 * the views of the rows not merged before to their links' days (analytics_link_days, migration
 * 00033): one statement, so a reader, or a crash, sees either the rows or their sums, never both
 * or neither, an hour's margins always sum its merged rows and a link's day its merged views.
 * Keys whose sums are all zero (a purchase and its correction in one bucket) are left out.
 */
export async function mergeRollups(
  sql: Sql,
  before: Date,
  options: { hours?: number; maxBatches?: number; signal?: AbortSignal } = {},
): Promise<MergeResult> {
  const limit = options.hours ?? 200;
  const result: MergeResult = { ran: true, rows: 0, hours: 0 };
  const keys = ["environment_id", "hour", ...ROLLUP_KEYS].join(", ");
  const sums = ROLLUP_METRICS.map((m) => `${clamp(`sum(${m})`)}`).join(", ");
  const nonZero = ROLLUP_METRICS.map((m) => `sum(${m}) <> 0`).join(" or ");
  for (let i = 0; i < (options.maxBatches ?? 50) && !options.signal?.aborted; i++) {
    const merged = await asMaintainer(sql, async (tx) => {
      const [row] = await tx.unsafe<{ rows: number; hours: number }[]>(
        `with due as (
          select distinct environment_id, hour from analytics_rollups
          where not merged and hour < $1::timestamptz
          order by hour, environment_id
          limit $2
        ), moved as (
          delete from analytics_rollups r using due
          where r.environment_id = due.environment_id and r.hour = due.hour
          returning r.*
        ), inserted as (
          insert into analytics_rollups (${keys}, ${ROLLUP_METRICS.join(", ")}, merged)
          select ${keys}, ${sums}, true
          from moved
          group by ${keys}
          having ${nonZero}
        ), days as (
          select distinct environment_id, date_trunc('day', hour, 'UTC') as day from due
        ), margins_gone as (
          -- The hours' margins, and their days'.
          delete from analytics_margins m
          where (not m.daily and (m.environment_id, m.hour) in (select * from due))
            or (m.daily and (m.environment_id, m.hour) in (select * from days))
        ), hourly as (
          ${marginsSelect("moved")}
        ), hourly_inserted as (
          insert into analytics_margins (environment_id, hour, dimension, value,
            ${ROLLUP_METRICS.join(", ")})
          select * from hourly
        ), day_hours as (
          -- Each day's hourly margins as they will be: the other hours' as they are, these new.
          select m.environment_id, m.hour, m.dimension, m.value, ${ROLLUP_METRICS.join(", ")}
          from analytics_margins m join days d
            on m.environment_id = d.environment_id and m.hour >= d.day
            and m.hour < d.day + interval '1 day'
          where not m.daily and (m.environment_id, m.hour) not in (select * from due)
          union all
          select * from hourly
        ), daily_inserted as (
          ${dailyMarginsInsert("day_hours")}
        ), link_days_added as (
          -- The views of the rows merged for the first time, added to their links' days.
          insert into analytics_link_days (environment_id, link_id, day, views)
          select environment_id, link_id, date_trunc('day', hour, 'UTC'), ${clamp("sum(views)")}
          from moved
          where not merged and link_id is not null
          group by 1, 2, 3
          having sum(views) <> 0
          on conflict (environment_id, link_id, day) do update
            set views = ${clamp("analytics_link_days.views::numeric + excluded.views")}
        )
        select (select count(*) from moved where not merged)::int as rows,
          (select count(*) from due)::int as hours`,
        [before.toISOString(), limit],
      );
      return row!;
    });
    if (merged === null) return { ...result, ran: false };
    result.rows += merged.rows;
    result.hours += merged.hours;
    if (merged.hours < limit) break;
  }
  return result;
}

/**
 * The hourly margins of the rollup rows `from` (a table or CTE name), as a select of
 * (environment_id, hour, dimension, value, metrics…): per environment, hour and margin
 * dimension, a row per value, and the hour's 'total' row. The one definition: the merge runs it
 * over the rows it merges, bench/analytics.ts over the rollups it seeds.
 */
export function marginsSelect(from: string): string {
  const values = [
    "('total', null::text)",
    ...MARGIN_DIMENSIONS.map((d) => `('${d}', ${from}.${d})`),
  ].join(", ");
  return `select ${from}.environment_id, ${from}.hour, d.dimension, d.value,
      ${ROLLUP_METRICS.map((m) => `${clamp(`sum(${from}.${m})`)} as ${m}`).join(", ")}
    from ${from}
    cross join lateral (values ${values}) as d(dimension, value)
    group by 1, 2, 3, 4
    having ${ROLLUP_METRICS.map((m) => `sum(${from}.${m}) <> 0`).join(" or ")}`;
}

/**
 * The insert of the daily margins summing the hourly margins `from` (a table or CTE name with
 * marginsSelect's columns) per environment, UTC day, dimension and value.
 */
export function dailyMarginsInsert(from: string): string {
  return `insert into analytics_margins (environment_id, hour, dimension, value, daily,
      ${ROLLUP_METRICS.join(", ")})
    select environment_id, date_trunc('day', hour, 'UTC'), dimension, value, true,
      ${ROLLUP_METRICS.map((m) => clamp(`sum(${m})`)).join(", ")}
    from ${from}
    group by 1, 2, 3, 4
    having ${ROLLUP_METRICS.map((m) => `sum(${m}) <> 0`).join(" or ")}`;
}

/**
 * Deletes up to `batch` rollup rows, and as many margin rows and link days, of hours before
 * `cutoff` from the default partitions; the months of their own partitions go whole
 * (services/feed/retention.ts decides when).
 */
export async function deleteRollupsBefore(db: Db, cutoff: Date, batch: number): Promise<number> {
  return await deleteDefaultRowsBefore(db, ROLLUPS_TABLE, cutoff, batch) +
    await deleteDefaultRowsBefore(db, MARGINS_TABLE, cutoff, batch) +
    // A link's day goes once all of it is before the cutoff, whose day's hours the rollups lose
    // one at a time (only here, in the default partition: the months of their own go whole).
    await deleteDefaultRowsBefore(db, LINK_DAYS_TABLE, utcMidnight(cutoff), batch);
}
