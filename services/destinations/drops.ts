// Events that leave the feed's seven days before a destination could receive them: counted in
// the destination's `dropped` and logged, in the transaction that moves it past them. Called by
// the deliverer before each batch and by the retention purge before it deletes, so an event is
// never purged uncounted.
import type { Db } from "../../db/connect.ts";
import type { FeedPoint } from "../feed/cursor.ts";
import type { Logger } from "../log.ts";

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
  through_xid: string;
  through_seq: string;
}

/**
 * Counts as dropped the pending matching events that left the feed's seven days (as of
 * `cutoff`), moves each affected destination past them, and abandons its batch in flight (the
 * rest is sent again under a new webhook-id). `destinationId` null: every destination.
 */
export async function accountDrops(
  db: Db,
  cutoff: Date,
  destinationId: number | null,
): Promise<DestinationDrop[]> {
  const rows = await db<DropRow[]>`
    -- Driven by the received_at index: expired rows are few (the purge removes them), while
    -- a destination's pending events can be many; this must not cost O(pending) per batch.
    -- Only events before the feed's horizon (services/feed/feed.ts) count: a destination moved past
    -- a later one could skip an event still to commit before it.
    with old as materialized (
      select environment_id, xid, seq, type from feed_events
      where received_at < ${cutoff}
        and xid < feed_horizon()
    ), expired as (
      select d.id, last.xid, last.seq
      from destinations d
      cross join lateral (
        select f.xid, f.seq from old f
        where f.environment_id = d.environment_id
          and (f.xid, f.seq) > (d.cursor_xid, d.cursor_seq)
          and (cardinality(d.event_types) = 0 or f.type = any(d.event_types))
        order by f.xid desc, f.seq desc
        limit 1
      ) last
      where ${destinationId}::int is null or d.id = ${destinationId}
    ), counted as (
      select x.id, x.xid, x.seq, (
        select count(*) from feed_events f
        where f.environment_id = d.environment_id
          and (f.xid, f.seq) > (d.cursor_xid, d.cursor_seq)
          and (f.xid, f.seq) <= (x.xid, x.seq)
          and (cardinality(d.event_types) = 0 or f.type = any(d.event_types))
      ) as n
      from expired x join destinations d on d.id = x.id
    )
    -- (x.xid, x.seq) is after the destination's place by construction: it only moves forward.
    update destinations d set
      dropped = d.dropped + c.n,
      cursor_xid = c.xid,
      cursor_seq = c.seq,
      batch_id = null,
      batch_last_xid = null,
      batch_last_seq = null
    from counted c
    where d.id = c.id
    returning d.id, d.environment_id, c.n::int as dropped, c.xid::text as through_xid,
      c.seq::text as through_seq
  `;
  return rows.map((r) => ({
    id: r.id,
    environment_id: r.environment_id,
    dropped: r.dropped,
    through: { xid: r.through_xid, seq: r.through_seq },
  }));
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
