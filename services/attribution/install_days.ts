// The attributed installs per UTC day (migration 00032): how the environment's funnel counts its
// installs and finds their median seconds from click to install without reading every install
// of its range.
//
// Every install stored (services/events/record.ts) is a row of attributed_installs, with the
// bucket of its seconds, and a row of attributed_install_queue; the fold moves the queue into
// attributed_install_days (per environment, UTC day and bucket, a count) in one statement. So any
// one snapshot sees each install once, in the queue or in its day, and the days with the queue
// count the same installs as attributed_installs. A range of whole hours is read as its whole UTC
// days (the days, and the queue's rows of those days) and its edges (attributed_installs' rows
// of the hours before the first UTC midnight and after the last).
//
// The median: the buckets follow the seconds' order, so the histogram of the range says which
// bucket holds each middle rank and how many installs of the range come before it; the value is
// then read from that bucket's rows alone (attributed_installs_bucket). A bucket below 120 s is
// one second wide, its value the bucket itself.
import type { Db, Sql } from "../../db/connect.ts";
import { utcDaysOf, utcMidnight } from "../analytics/rollups.ts";
import { asMaintainer } from "../maintenance/lock.ts";

/**
 * The bucket of `seconds` (a column or expression of whole, non-negative seconds; null without a
 * click), as SQL: the formula of migration 00032, which bucketed the installs stored before it.
 */
export function bucketSql(seconds: string): string {
  const s = `(${seconds})`;
  // Null first: least() below ignores a null.
  return `case
    when ${s} is null then null
    when ${s} < 120 then ${s}
    when ${s} < 1200 then 120 + (${s} - 120) / 10
    when ${s} < 12000 then 228 + (${s} - 1200) / 100
    when ${s} < 120000 then 336 + (${s} - 12000) / 1000
    when ${s} < 1200000 then 444 + (${s} - 120000) / 10000
    else 552 + least((${s} - 1200000) / 100000, 10000)
  end`;
}

/** The buckets below this are one second wide: their value is the bucket. */
const EXACT_BUCKETS = 120;

/**
 * Folds the queued installs into their days, all in one statement under the maintenance lock;
 * the number folded (0 when another instance holds the lock).
 *
 * Dying mid-way: the statement is one transaction, so an instance killed or a connection dropped
 * before its commit leaves the queue and the days as they were, and the next pass (of any
 * instance) folds the same rows; after it, they are folded once. Rows stored while it runs are
 * not in its snapshot: they wait for the next pass.
 */
export async function foldInstalls(sql: Sql): Promise<number> {
  const folded = await asMaintainer(sql, async (tx) => {
    const [row] = await tx<{ n: number }[]>`
      with moved as (
        delete from attributed_install_queue
        returning environment_id, occurred_at, bucket
      ), added as (
        insert into attributed_install_days (environment_id, day, bucket, installs)
        select environment_id, date_trunc('day', occurred_at, 'UTC'), coalesce(bucket, -1),
          count(*)
        from moved
        group by 1, 2, 3
        on conflict (environment_id, day, bucket)
          do update set installs = attributed_install_days.installs + excluded.installs
      )
      select count(*)::int as n from moved`;
    return row!.n;
  });
  return folded ?? 0;
}

/**
 * Deletes the days before the UTC day of `cutoff` (retention's rollup cutoff), and their queued
 * installs; attributed_installs goes by the same day (services/attribution/purge.ts), so the days
 * keep counting what it holds.
 */
export async function purgeInstallDays(db: Db, cutoff: Date): Promise<number> {
  const day = utcMidnight(cutoff);
  const [days, queued] = await Promise.all([
    db`delete from attributed_install_days where day < ${day}`,
    db`delete from attributed_install_queue where occurred_at < ${day}`,
  ]);
  return days.count + queued.count;
}

/**
 * The environment's attributed installs that occurred in [from, to) and the median of their
 * seconds from click to install (percentile_cont(0.5) over those with a click; null when none
 * has one), in one statement (one snapshot).
 */
export async function environmentInstalls(
  tx: Db,
  environmentId: number,
  from: Date,
  to: Date,
): Promise<{ installs: number; median: number | null }> {
  const { days, first, last, headTo, tailFrom } = utcDaysOf(from, to);
  const env = environmentId;
  const [row] = await tx<{ installs: string; median: number | null }[]>`
    with hist as (
      select bucket, sum(n) as n
      from (
        select bucket, installs as n
        from attributed_install_days
        where ${days} and environment_id = ${env} and day >= ${first} and day < ${last}
        union all
        select coalesce(bucket, -1), 1
        from attributed_install_queue
        where ${days} and environment_id = ${env} and occurred_at >= ${first}
          and occurred_at < ${last}
        union all
        select coalesce(bucket, -1), 1
        from attributed_installs
        where environment_id = ${env} and occurred_at >= ${from} and occurred_at < ${headTo}
        union all
        select coalesce(bucket, -1), 1
        from attributed_installs
        where ${days} and environment_id = ${env} and occurred_at >= ${tailFrom}
          and occurred_at < ${to}
      ) parts
      group by bucket
    ), clicked as (
      select bucket, n, sum(n) over (order by bucket) - n as before
      from hist where bucket >= 0
    ), total as (
      select coalesce(sum(n), 0) as installs,
        coalesce(sum(n) filter (where bucket >= 0), 0)::bigint as clicked
      from hist
    ), ranks as (
      -- The middle rank, or the two middle ranks (0-based) of an even number.
      select distinct k from total, unnest(array[(clicked - 1) / 2, clicked / 2]) as k
      where clicked > 0
    ), picked as (
      select r.k, c.bucket, r.k - c.before as offs
      from ranks r join clicked c on r.k >= c.before and r.k < c.before + c.n
    ), valued as (
      select case when p.bucket < ${EXACT_BUCKETS} then p.bucket::bigint else (
        select i.seconds from attributed_installs i
        where i.environment_id = ${env} and i.bucket = p.bucket and i.occurred_at >= ${from}
          and i.occurred_at < ${to}
        order by i.seconds
        offset p.offs limit 1
      ) end as v
      from picked p
    )
    select (select installs from total) as installs,
      (select avg(v)::float8 from valued) as median`;
  return { installs: Number(row!.installs), median: row!.median };
}
