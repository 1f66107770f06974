// The analytics rollups (table analytics_rollups, migration 00013): hourly counts per
// environment, link and dimension values, which every analytics query reads instead of the raw
// events. How they stay exact (written by the statement that stores the events, appended only,
// merged by the background job in one statement) is told in the migration; this module holds
// the SQL that writes, merges and purges them.
import type { Db, Sql } from "../../db/connect.ts";
import type { NewEvent } from "../events.ts";
import { asMaintainer } from "../maintenance_lock.ts";
import { deleteDefaultRowsBefore } from "../partitions.ts";

export const ROLLUPS_TABLE = "analytics_rollups";

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
] as const;

const HOUR_MS = 60 * 60 * 1000;

/**
 * What the rollups take of a stored event's envelope (`body`, json) and `type`: the one
 * definition, used by the storing statement. Ingested events contribute the country and, when
 * they are strings, the device's platform and os; views also their browser and referrer host
 * (the link host records those). The migration's backfill and the tests spell the same rules.
 */
export const DIMENSIONS_SQL = `
  body -> 'geo' ->> 'country',
  case when json_typeof(body -> 'device' -> 'platform') = 'string'
    then body -> 'device' ->> 'platform' end,
  case when json_typeof(body -> 'device' -> 'os') = 'string'
    then body -> 'device' ->> 'os' end,
  case when type = 'view' and json_typeof(body -> 'device' -> 'browser') = 'string'
    then body -> 'device' ->> 'browser' end,
  case when type = 'view' and json_typeof(body -> 'attribution' -> 'referrer_host') = 'string'
    then body -> 'attribution' ->> 'referrer_host' end`;

/** The same rules in TypeScript, for the purchase versions (services/events.ts). */
export function eventDimensions(
  e: Pick<NewEvent, "geo" | "device">,
): { country: string | null; platform: string | null; os: string | null } {
  const device = e.device ?? {};
  return {
    country: e.geo?.country ?? null,
    platform: typeof device.platform === "string" ? device.platform : null,
    os: typeof device.os === "string" ? device.os : null,
  };
}

/** The UTC hour an instant falls in, as date_trunc('hour', at, 'UTC') has it. */
export function utcHour(at: Date): Date {
  return new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
}

/**
 * The storing statement's rollup step (services/events.ts insertEvents), as a CTE body over its
 * `batch` (event_id, type, name, occurred_at, link_id, body json) and `inserted` (event_id)
 * CTEs: one row per hour, link and dimension values of the events actually inserted. Purchases
 * are left to the purchase versions (purchaseRollupRows), which count only the newest version.
 */
export function rollupInsertSql(db: Db, environmentId: number) {
  return db`
    insert into analytics_rollups (
      environment_id, hour, link_id, country, platform, os, browser, referrer, event_name,
      views, opens, installs, reinstalls, reactivations, app_opens, user_referred, sessions,
      time_spent, custom
    )
    select ${environmentId}, hour, link_id, country, platform, os, browser, referrer, name,
      count(*) filter (where type = 'view'),
      count(*) filter (where type = 'open'),
      count(*) filter (where type = 'install'),
      count(*) filter (where type = 'reinstall'),
      count(*) filter (where type = 'reactivation'),
      count(*) filter (where type = 'app_open'),
      count(*) filter (where type = 'user_referred'),
      count(*) filter (where type = 'session'),
      coalesce(sum((body -> 'time_spent')::text::bigint) filter (where type = 'session'), 0),
      count(*) filter (where type = 'custom')
    from (
      select date_trunc('hour', occurred_at, 'UTC') as hour, link_id, type, name, body,
        ${db.unsafe(DIMENSIONS_SQL)}
      from (
        select occurred_at, link_id, type, name, body::json as body
        from batch
        where type <> 'purchase' and event_id in (select event_id from inserted)
      ) b
    ) e (hour, link_id, type, name, body, country, platform, os, browser, referrer)
    group by hour, link_id, country, platform, os, browser, referrer, name
  `;
}

/** Where a purchase version counts: its event's hour, link and dimensions. */
export interface PurchaseBucket {
  hour: Date;
  link_id: number | null;
  country: string | null;
  platform: string | null;
  os: string | null;
  name: string;
}

export interface PurchaseDelta {
  bucket: PurchaseBucket;
  purchases: 1 | -1;
  revenue: number;
}

/**
 * Appends the purchase deltas, as a CTE body (services/events.ts runs it in the statement that
 * records the new versions): a new version adds one purchase and its amount to its bucket, and
 * takes the replaced version's back from that one's.
 */
export function purchaseRollupRows(db: Db, environmentId: number, deltas: PurchaseDelta[]) {
  const col = <T>(f: (d: PurchaseDelta) => T) => deltas.map(f);
  return db`
    insert into analytics_rollups (
      environment_id, hour, link_id, country, platform, os, event_name, purchases, revenue
    )
    select ${environmentId}, hour, link_id, country, platform, os, name, purchases, revenue
    from unnest(
      ${col((d) => d.bucket.hour.toISOString())}::timestamptz[],
      ${col((d) => d.bucket.link_id)}::int[],
      ${col((d) => d.bucket.country)}::text[],
      ${col((d) => d.bucket.platform)}::text[],
      ${col((d) => d.bucket.os)}::text[],
      ${col((d) => d.bucket.name)}::text[],
      ${col((d) => d.purchases)}::bigint[],
      ${col((d) => d.revenue)}::bigint[]
    ) as t(hour, link_id, country, platform, os, name, purchases, revenue)
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
 * a pass. Each statement deletes every row of its hours and inserts their sums: one statement,
 * so a reader, or a crash, sees either the rows or their sums, never both or neither. Keys
 * whose sums are all zero (a purchase and its correction in one bucket) are left out.
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
 * Deletes up to `batch` rollup rows of hours before `cutoff` from the default partition; the
 * months of their own partitions go whole (services/feed_retention.ts decides when).
 */
export function deleteRollupsBefore(db: Db, cutoff: Date, batch: number): Promise<number> {
  return deleteDefaultRowsBefore(db, ROLLUPS_TABLE, cutoff, batch);
}
