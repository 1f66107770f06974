import type { Db } from "../../db/connect.ts";
import { onCitus } from "../../db/cluster.ts";
import { jsonColumn } from "../../db/params.ts";
import { deleteDefaultRowsBefore } from "../maintenance/partitions.ts";

/** The NOTIFY channel of captures; the payload is the environment id. */
export const FEED_CHANNEL = "feed_captured";

/**
 * Capture runs for an environment while it has an active feed token or a destination. Both
 * functions lock the environment row, as capturing ingestion does, so a capture never races
 * the removal of the environment's feed.
 */
export async function startCapture(db: Db, environmentId: number, at: Date): Promise<void> {
  await lockCaptureOnCitus(db, environmentId, "exclusive");
  await db`
    update environments set capture_started_at = coalesce(capture_started_at, ${at})
    where id = ${environmentId}
  `;
}

/** Stops capture and removes the captured feed when nothing reads or receives it any more. */
export async function stopCaptureIfIdle(db: Db, environmentId: number): Promise<boolean> {
  // Lock first, then look: under READ COMMITTED the check below then takes a snapshot that
  // includes any token or destination committed by a transaction that held the lock before us.
  await lockCaptureOnCitus(db, environmentId, "exclusive");
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
 * Capturing writers of one environment do not wait for each other. Each row records its
 * transaction's id (`xid`) and a number from a sequence (`seq`); the feed is ordered by
 * (xid, seq), and readers serve only rows of transactions older than the oldest transaction of
 * this database still running (the horizon, services/feed/feed.ts), every one of which has ended: a
 * row can never become visible behind a position a reader has already passed, whatever order
 * the writers commit in.
 *
 * The environment row is locked FOR SHARE: shared between capturing writers, but a transaction
 * that starts or stops capture (an UPDATE, or stopCaptureIfIdle's FOR UPDATE) waits for them,
 * and they for it, so a capture never races the removal of the feed. Call this last in the
 * transaction, to hold that lock for as short a time as possible, and announceCapture once it
 * has committed. True when the environment captures (and the events were appended).
 */
export async function captureEvents(
  db: Db,
  environmentId: number,
  receivedAt: Date,
  events: readonly CapturedEvent[],
): Promise<boolean> {
  if (events.length === 0) return false;
  await lockCaptureOnCitus(db, environmentId, "share");
  // One statement: the lock and the rows.
  const [env] = await db<{ captures: boolean }[]>`
    with env as (
      ${capturingEnvironment(db, environmentId)}
    ), captured as (
      insert into feed_events (environment_id, type, received_at, body)
      select env.id, type, ${receivedAt}, body
      from env cross join rows from (
        json_array_elements_text((${jsonColumn(events.map((e) => e.type))}::text)::json),
        json_array_elements_text((${jsonColumn(events.map((e) => e.body))}::text)::json)
      ) with ordinality as t(type, body, ord)
      order by ord
    )
    select true as captures from env
  `;
  return env !== undefined;
}

/**
 * The environment's row if it captures, locked FOR SHARE (see captureEvents). Ingestion
 * (services/events/record.ts) captures in the statement that stores the events, under this same lock.
 */
export function capturingEnvironment(db: Db, environmentId: number) {
  return db`
    select id from environments
    where id = ${environmentId} and capture_started_at is not null
    ${onCitus() ? db`` : db`for share`}
  `;
}

// The first key of pg_advisory_xact_lock(int, int); the second is the environment id.
const CAPTURE_LOCK_KEY = 4_242_031;

/**
 * On Citus, the environment row's lock is taken as a transaction advisory lock on the
 * coordinator instead (shared by capturing writers, exclusive for starting and stopping
 * capture), before the statement that reads the row. Citus implements a row lock on a
 * reference table as a lock on the whole table, which capturing writers then deadlock on with
 * each other (docs/SCALING.md, "Running on Citus"). Call it before capturingEnvironment's
 * statement; nothing on a single PostgreSQL.
 */
export async function lockCaptureOnCitus(
  db: Db,
  environmentId: number,
  mode: "share" | "exclusive",
): Promise<void> {
  if (!onCitus()) return;
  if (mode === "share") {
    await db`select pg_advisory_xact_lock_shared(${CAPTURE_LOCK_KEY}::int, ${environmentId}::int)`;
  } else {
    await db`select pg_advisory_xact_lock(${CAPTURE_LOCK_KEY}::int, ${environmentId}::int)`;
  }
}

/**
 * Wakes the push destinations and live readers of the environment, on every instance (see
 * services/feed/wakeup.ts), after a capture has committed. Not inside the capturing
 * transaction: PostgreSQL takes a server-wide lock from the commit of a transaction that ran
 * NOTIFY until its end, which would make capturing transactions commit one at a time (their WAL
 * flush included). If the process dies between the commit and this call, the wake-up is lost,
 * not the events: destinations and live readers also poll, and find them at their next poll.
 */
export async function announceCapture(db: Db, environmentId: number): Promise<void> {
  await db`select pg_notify(${FEED_CHANNEL}, ${String(environmentId)})`;
}

/** The captured feed's table, partitioned by day (services/maintenance/partitions.ts). */
export const FEED_EVENTS_TABLE = "feed_events";

/**
 * Deletes up to `batch` captured events received before `cutoff` from the default partition;
 * expired days are dropped whole by services/feed/retention.ts.
 */
export function deleteFeedEventsBefore(db: Db, cutoff: Date, batch: number): Promise<number> {
  return deleteDefaultRowsBefore(db, FEED_EVENTS_TABLE, cutoff, batch);
}
