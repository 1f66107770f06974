import type { Db } from "../db/connect.ts";
import { jsonColumn } from "../db/params.ts";

/** The NOTIFY channel of captures; the payload is the environment id. */
export const FEED_CHANNEL = "feed_captured";

/**
 * Capture runs for an environment while it has an active feed token or a destination. Both
 * functions lock the environment row, as capturing ingestion does, so a capture never races
 * the removal of the environment's feed.
 */
export async function startCapture(db: Db, environmentId: number, at: Date): Promise<void> {
  await db`
    update environments set capture_started_at = coalesce(capture_started_at, ${at})
    where id = ${environmentId}
  `;
}

/** Stops capture and removes the captured feed when nothing reads or receives it any more. */
export async function stopCaptureIfIdle(db: Db, environmentId: number): Promise<boolean> {
  // Lock first, then look: under READ COMMITTED the check below then takes a snapshot that
  // includes any token or destination committed by a transaction that held the lock before us.
  await db`select id from environments where id = ${environmentId} for update`;
  const [env] = await db<{ idle: boolean }[]>`
    select not exists (
        select 1 from feed_tokens where environment_id = ${environmentId} and revoked_at is null
      ) and not exists (
        select 1 from destinations where environment_id = ${environmentId}
      ) as idle
  `;
  if (!env?.idle) return false;
  await db`update environments set capture_started_at = null where id = ${environmentId}`;
  await db`delete from feed_events where environment_id = ${environmentId}`;
  return true;
}

/** A recorded event as the feed stores it: its envelope, serialised once. */
export interface CapturedEvent {
  type: string;
  body: string;
}

/**
 * Appends events to the environment's feed if it captures, inside the caller's transaction.
 *
 * Arrival order that never skips: the sequence numbers come from an UPDATE of the environment
 * row, which holds that row's lock until the transaction ends. Two capturing transactions of one
 * environment therefore take their numbers one after the other and the first commits (and
 * becomes visible) before the second can even number its events: commit order is sequence
 * order, so a reader that has seen sequence n can never later find a smaller one appear.
 * Call this last in the transaction, to hold the lock for as short a time as possible.
 */
export async function captureEvents(
  db: Db,
  environmentId: number,
  receivedAt: Date,
  events: readonly CapturedEvent[],
): Promise<void> {
  if (events.length === 0) return;
  // The NOTIFY (delivered at commit, and only then) wakes push destinations and live readers
  // of this environment on every instance; see services/feed_wakeup.ts. It rides on the same
  // statement: no extra round trip.
  const [env] = await db<{ last: string }[]>`
    update environments set feed_seq = feed_seq + ${events.length}
    where id = ${environmentId} and capture_started_at is not null
    returning feed_seq as last, pg_notify(${FEED_CHANNEL}, id::text) is null as notified
  `;
  if (!env) return; // the environment does not capture
  const first = BigInt(env.last) - BigInt(events.length) + 1n;
  await db`
    insert into feed_events (environment_id, seq, type, received_at, body)
    select ${environmentId}, ${first.toString()}::bigint + ord - 1, type, ${receivedAt}, body
    from rows from (
      json_array_elements_text((${jsonColumn(events.map((e) => e.type))}::text)::json),
      json_array_elements_text((${jsonColumn(events.map((e) => e.body))}::text)::json)
    ) with ordinality as t(type, body, ord)
  `;
}

/** Deletes up to `batch` captured events received before `cutoff` (retention). */
export async function deleteFeedEventsBefore(db: Db, cutoff: Date, batch: number): Promise<number> {
  const rows = await db`
    delete from feed_events f
    using (
      select environment_id, seq from feed_events where received_at < ${cutoff} limit ${batch}
    ) old
    where f.environment_id = old.environment_id and f.seq = old.seq
  `;
  return rows.count;
}
