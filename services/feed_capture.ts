import type { Db } from "../db/connect.ts";

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
