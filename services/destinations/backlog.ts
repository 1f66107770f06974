// How far behind each destination is, for the metrics (services/monitoring/metrics.ts).
import type { Db } from "../../db/connect.ts";
import { feedRetentionCutoff } from "../feed/retention.ts";

/** Pending events are counted up to this many: a count walks them all, at every scrape. */
export const BACKLOG_COUNT_LIMIT = 100_000;

export interface DestinationBacklog {
  id: number;
  paused: boolean;
  /** Matching events within the feed's seven days after its place, up to BACKLOG_COUNT_LIMIT. */
  backlog: number;
  /** Age of the first of them (the next to deliver), in seconds; 0 when none waits. */
  lagSeconds: number;
  /** Events that left the seven days before they could be delivered (destinations.dropped). */
  dropped: number;
}

/**
 * Every destination's backlog. One statement per destination, each on the environment's feed
 * alone (on Citus routed to the worker holding it, as selectStatusesOnCitus does): the count
 * stops at BACKLOG_COUNT_LIMIT, and the next event to deliver is the first after the place in the
 * position index.
 */
export async function destinationBacklogs(db: Db, now: Date): Promise<DestinationBacklog[]> {
  const cutoff = feedRetentionCutoff(now);
  const rows = await db<
    {
      id: number;
      environment_id: number;
      paused: boolean;
      dropped: string;
      cursor_xid: string;
      cursor_seq: string;
      event_types: string[];
    }[]
  >`
    select id, environment_id, paused, dropped::text as dropped, cursor_xid::text as cursor_xid,
      cursor_seq::text as cursor_seq, event_types
    from destinations
    order by id
  `;
  const out: DestinationBacklog[] = [];
  for (const d of rows) {
    const [row] = await db<{ backlog: number; oldest: Date | null }[]>`
      select
        (select count(*)::int from (
          select 1 from feed_events f
          where f.environment_id = ${d.environment_id}
            and (f.xid, f.seq) > (${d.cursor_xid}::bigint, ${d.cursor_seq}::bigint)
            and f.received_at >= ${cutoff}
            and (cardinality(${d.event_types}::text[]) = 0 or f.type = any(${d.event_types}::text[]))
          limit ${BACKLOG_COUNT_LIMIT}
        ) pending) as backlog,
        (select f.received_at from feed_events f
          where f.environment_id = ${d.environment_id}
            and (f.xid, f.seq) > (${d.cursor_xid}::bigint, ${d.cursor_seq}::bigint)
            and f.received_at >= ${cutoff}
            and (cardinality(${d.event_types}::text[]) = 0 or f.type = any(${d.event_types}::text[]))
          order by f.xid, f.seq
          limit 1) as oldest
    `;
    out.push({
      id: d.id,
      paused: d.paused,
      backlog: row!.backlog,
      lagSeconds: row!.oldest ? Math.max(0, (now.getTime() - row!.oldest.getTime()) / 1000) : 0,
      dropped: Number(d.dropped),
    });
  }
  return out;
}
