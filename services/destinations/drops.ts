// Events that leave the feed's seven days before a destination could receive them: counted in
// the destination's `dropped` and logged, in the transaction that moves it past them. Called by
// the deliverer before each batch and by the retention purge before it deletes, so an event is
// never purged uncounted.
import { onCitus } from "../../db/cluster.ts";
import type { Db } from "../../db/connect.ts";
import type { FeedPoint } from "../feed/cursor.ts";
import type { Logger } from "../../infra/log.ts";

export interface DestinationDrop {
  id: number;
  environment_id: number;
  dropped: number;
  /** The destination's new place: the last dropped event. */
  through: FeedPoint;
}

interface DropRow {
  id: number;
  environment_id: number;
  dropped: number;
  /** null: nothing dropped, only the record of the accounting rewritten. */
  through_xid: string | null;
  through_seq: string | null;
}

/**
 * How stale a destination's record of its last accounting may get before an accounting that
 * found nothing rewrites it: the next one reads the events received in that much time (of
 * every environment: the received_at index is not per environment) again. One write of the
 * destination's row per second at most, instead of one per batch.
 */
const CHECKED_REFRESH = "1 second";

/**
 * Counts as dropped the pending matching events that left the feed's seven days (as of
 * `cutoff`), moves each affected destination past them, and abandons its batch in flight (the
 * rest is sent again under a new webhook-id). `destinationId` null: every destination.
 *
 * Read from each destination's own position, not from every expired event: the feed drops
 * whole days, so the day the cutoff falls in holds up to a day of expired events until its
 * end, and an accounting before every batch must not read them all. A destination records
 * what its last accounting established (migration 00017): no event of its types after
 * (drops_checked_xid, drops_checked_seq) with an xid below drops_checked_horizon was received
 * before drops_checked_cutoff. Events are never added below a horizon (every transaction with
 * a smaller xid has ended) and a destination's place only moves forward from there, so an
 * event pending now and received before `cutoff` is either
 * - of an xid at or after that horizon: found in the position index, walked back from the
 *   feed's horizon, in the days that can hold expired events (partitions pruned by received_at:
 *   in them, events of recent xids are only those captured with an old received_at), or
 * - received between drops_checked_cutoff and `cutoff`: found in the received_at index, which
 *   holds the events that expired since the last accounting.
 * received_at is not ordered with positions (it is the instant ingestion gave the event, its
 * xid that of the transaction that captured it, later, possibly much later), and neither rule
 * assumes it is. Without a record (a new destination, or one moved back before it) the
 * accounting reads its pending events of the days that can hold expired events, once.
 */
export async function accountDrops(
  db: Db,
  cutoff: Date,
  destinationId: number | null,
): Promise<DestinationDrop[]> {
  if (onCitus()) return await accountDropsOnCitus(db, cutoff, destinationId);
  // Without JIT for the rest of the caller's transaction: the count below is planned for
  // whole partitions (its bounds are parameters), and the compilation that estimate triggers
  // took longer than the statement (0.1-2 s against milliseconds, bench/drops.ts). Sent in the
  // same round trip, first. Both sent at the call (not when first awaited): a caller's
  // statements made after this call run after these (postgres.js sends a query when its promise
  // is first awaited, which in a Promise.all can be after a later query that was awaited sooner).
  const [, rows] = await Promise.all([
    db`select set_config('jit', 'off', true)`.execute(),
    dropAccounting(db, cutoff, destinationId).execute(),
  ]);
  return rows.filter((r) => r.through_xid !== null).map((r) => ({
    id: r.id,
    environment_id: r.environment_id,
    dropped: r.dropped,
    through: { xid: r.through_xid!, seq: r.through_seq! },
  }));
}

/**
 * accountDrops on Citus, where no statement can update the destinations (a reference table)
 * from the distributed feed, nor correlate the two: per destination, the feed's horizon on the
 * worker holding its environment (feed_horizon(integer), migration 00018), then its last
 * expired event and the count up to it, each a query routed to that worker, then the update.
 * Without the record of the last accounting (migration 00017): every accounting reads the
 * destination's pending events of the days that can hold expired events, as a first one does.
 * The update applies only if the destination is still where it was read (no row lock first:
 * Citus locks a whole reference table for a row lock, which deadlocked with deliveries); one
 * that moved meanwhile was accounted for by whoever moved it.
 */
async function accountDropsOnCitus(
  db: Db,
  cutoff: Date,
  destinationId: number | null,
): Promise<DestinationDrop[]> {
  const dests = await db<
    {
      id: number;
      environment_id: number;
      cursor_xid: string;
      cursor_seq: string;
      event_types: string[];
    }[]
  >`
    select id, environment_id, cursor_xid::text, cursor_seq::text, event_types
    from destinations
    where ${destinationId}::int is null or id = ${destinationId}
    order by id
  `;
  const drops: DestinationDrop[] = [];
  for (const d of dests) {
    const types = d.event_types;
    const [last] = await db<{ xid: string; seq: string }[]>`
      select xid::text, seq::text from feed_events
      where environment_id = ${d.environment_id}
        and (xid, seq) > (${d.cursor_xid}::bigint, ${d.cursor_seq}::bigint)
        and xid < feed_horizon()
        and received_at < ${cutoff}
        and (cardinality(${types}::text[]) = 0 or type = any(${types}::text[]))
      -- The columns, not the text the select list makes of them (which sorts 999 after 5000).
      order by feed_events.xid desc, feed_events.seq desc
      limit 1
    `;
    if (!last) continue;
    const [c] = await db<{ n: number }[]>`
      select count(*)::int as n from feed_events
      where environment_id = ${d.environment_id}
        and (xid, seq) > (${d.cursor_xid}::bigint, ${d.cursor_seq}::bigint)
        and (xid, seq) <= (${last.xid}::bigint, ${last.seq}::bigint)
        and (cardinality(${types}::text[]) = 0 or type = any(${types}::text[]))
    `;
    const moved = await db`
      update destinations set dropped = dropped + ${c!.n}, cursor_xid = ${last.xid}::bigint,
        cursor_seq = ${last.seq}::bigint, batch_id = null, batch_last_xid = null,
        batch_last_seq = null, drops_checked_xid = null, drops_checked_seq = null,
        drops_checked_cutoff = null, drops_checked_horizon = null
      where id = ${d.id} and cursor_xid = ${d.cursor_xid}::bigint
        and cursor_seq = ${d.cursor_seq}::bigint
      returning id
    `;
    if (moved.length === 0) continue;
    drops.push({
      id: d.id,
      environment_id: d.environment_id,
      dropped: c!.n,
      through: { xid: last.xid, seq: last.seq },
    });
  }
  return drops;
}

/** accountDrops' statement, not yet run: tests explain it (it can be nested in another). */
export function dropAccounting(db: Db, cutoff: Date, destinationId: number | null) {
  return db<DropRow[]>`
    -- Only events before the feed's horizon (services/feed/feed.ts) count: a destination moved
    -- past a later one could skip an event still to commit before it.
    with horizon as materialized (
      select feed_horizon() as x
    ), dests as (
      select d.id, d.environment_id, d.cursor_xid, d.cursor_seq, d.event_types,
        d.drops_checked_cutoff, d.drops_checked_horizon,
        -- The record applies while the destination is at or after the place it was made at.
        (d.drops_checked_cutoff is not null
          and (d.cursor_xid, d.cursor_seq) >= (d.drops_checked_xid, d.drops_checked_seq)
        ) as checked
      from destinations d
      where ${destinationId}::int is null or d.id = ${destinationId}
    ), expired as (
      select d.id, d.checked, d.drops_checked_cutoff, last.xid, last.seq
      from dests d
      left join lateral (
        select e.xid, e.seq from (
          -- Events of xids the last accounting did not see, walked back in the position index
          -- of the days received_at < cutoff leaves (recent xids are rare there).
          (
            select f.xid, f.seq from feed_events f
            where f.environment_id = d.environment_id
              and (f.xid, f.seq) > (d.cursor_xid, d.cursor_seq)
              and f.xid >= case when d.checked then d.drops_checked_horizon else 0 end
              and f.xid < (select x from horizon)
              and f.received_at < ${cutoff}
              and (cardinality(d.event_types) = 0 or f.type = any(d.event_types))
            order by f.xid desc, f.seq desc
            limit 1
          )
          union all
          -- Events the last accounting saw that have expired since, in the received_at index
          -- (the + 0 keep the position indexes out of this branch's plan).
          (
            select f.xid, f.seq from feed_events f
            where d.checked and d.drops_checked_horizon > d.cursor_xid
              and f.received_at >= d.drops_checked_cutoff
              and f.received_at < ${cutoff}
              and f.environment_id + 0 = d.environment_id
              and (f.xid + 0, f.seq + 0) > (d.cursor_xid, d.cursor_seq)
              and f.xid + 0 < d.drops_checked_horizon
              and f.xid + 0 < (select x from horizon)
              and (cardinality(d.event_types) = 0 or f.type = any(d.event_types))
            order by f.xid desc, f.seq desc
            limit 1
          )
        ) e
        order by e.xid desc, e.seq desc
        limit 1
      ) last on true
    ), counted as materialized ( -- n is read twice below: counted once
      select x.id, x.xid, x.seq, case when x.xid is not null then (
        select count(*) from feed_events f
        where f.environment_id = d.environment_id
          and (f.xid, f.seq) > (d.cursor_xid, d.cursor_seq)
          and (f.xid, f.seq) <= (x.xid, x.seq)
          and (cardinality(d.event_types) = 0 or f.type = any(d.event_types))
      ) end as n
      from expired x join destinations d on d.id = x.id
      where x.xid is not null
        -- Nothing to drop: the record is rewritten only when missing or a while old.
        or not x.checked
        or x.drops_checked_cutoff < ${cutoff}::timestamptz - ${CHECKED_REFRESH}::interval
    )
    -- (x.xid, x.seq) is after the destination's place by construction: it only moves forward.
    update destinations d set
      dropped = d.dropped + coalesce(c.n, 0),
      cursor_xid = coalesce(c.xid, d.cursor_xid),
      cursor_seq = coalesce(c.seq, d.cursor_seq),
      batch_id = case when c.xid is null then d.batch_id end,
      batch_last_xid = case when c.xid is null then d.batch_last_xid end,
      batch_last_seq = case when c.xid is null then d.batch_last_seq end,
      -- What this accounting established, from the place it counted from (or moved to).
      drops_checked_xid = coalesce(c.xid, dests.cursor_xid),
      drops_checked_seq = coalesce(c.seq, dests.cursor_seq),
      drops_checked_cutoff = ${cutoff},
      drops_checked_horizon = (select x from horizon)
    from counted c join dests on dests.id = c.id
    where d.id = c.id
    returning d.id, d.environment_id, c.n::int as dropped, c.xid::text as through_xid,
      c.seq::text as through_seq
  `;
}

/** Logs what accountDrops counted: drops are never silent. */
export function logDrops(
  logger: Logger,
  drops: readonly DestinationDrop[],
): void {
  for (const d of drops) {
    logger.warn("destination events dropped: they left the feed's seven days undelivered", {
      destination_id: d.id,
      environment_id: d.environment_id,
      dropped: d.dropped,
      through_xid: d.through.xid,
      through_seq: d.through.seq,
    });
  }
}
