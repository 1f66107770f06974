// Events that leave the feed's seven days before a destination could receive them: counted in
// the destination's `dropped` and logged, in the transaction that moves it past them. Called by
// the deliverer before each batch and by the retention purge before it deletes, so an event is
// never purged uncounted.
import type { Db } from "../db/connect.ts";
import type { Logger } from "./log.ts";

export interface DestinationDrop {
  id: number;
  environment_id: number;
  dropped: number;
  through: string;
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
  return await db<DestinationDrop[]>`
    -- Driven by the received_at index: expired rows are few (the purge removes them), while
    -- a destination's pending events can be many; this must not cost O(pending) per batch.
    with old as materialized (
      select environment_id, seq, type from feed_events where received_at < ${cutoff}
    ), expired as (
      select d.id, (
        select max(f.seq) from old f
        where f.environment_id = d.environment_id and f.seq > d.cursor_seq
          and (cardinality(d.event_types) = 0 or f.type = any(d.event_types))
      ) as through
      from destinations d
      where ${destinationId}::int is null or d.id = ${destinationId}
    ), counted as (
      select x.id, x.through, (
        select count(*) from feed_events f
        where f.environment_id = d.environment_id and f.seq > d.cursor_seq
          and f.seq <= x.through
          and (cardinality(d.event_types) = 0 or f.type = any(d.event_types))
      ) as n
      from expired x join destinations d on d.id = x.id
      where x.through is not null
    )
    update destinations d set
      dropped = d.dropped + c.n,
      cursor_seq = greatest(d.cursor_seq, c.through),
      batch_id = null,
      batch_last_seq = null
    from counted c
    where d.id = c.id
    returning d.id, d.environment_id, c.n::int as dropped, c.through::text as through
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
      through_seq: d.through,
    });
  }
}
