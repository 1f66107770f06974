// What attribution keeps beyond the history, and when it goes (services/feed/retention.ts runs
// these in its pass, under its lock).
import type { Db } from "../../db/connect.ts";
import { onCitus } from "../../db/cluster.ts";

/** The longest attribution window (attribution_window_days): touches older attribute nothing. */
export const MAX_WINDOW_DAYS = 90;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Deletes up to `batch` rows of attribution's tables that can no longer count: users' touches
 * that occurred before the longest window, and attributed installs before the rollups' cutoff
 * (the funnel reads them beside the rollups, so they are kept as long).
 */
export async function purgeAttribution(
  db: Db,
  now: Date,
  rollupCutoff: Date,
  batch: number,
): Promise<number> {
  const touchCutoff = new Date(now.getTime() - MAX_WINDOW_DAYS * DAY_MS);
  if (onCitus()) {
    // Citus plans no distributed DELETE by ctid: all at once, each shard's on its worker.
    const a = await db`delete from attribution_touches where occurred_at < ${touchCutoff}`;
    const b = await db`delete from attributed_installs where occurred_at < ${rollupCutoff}`;
    return a.count + b.count;
  }
  const [touches, installs] = await Promise.all([
    db`
      delete from attribution_touches
      where ctid = any(array(
        select ctid from attribution_touches where occurred_at < ${touchCutoff} limit ${batch}
      ))
    `,
    db`
      delete from attributed_installs
      where ctid = any(array(
        select ctid from attributed_installs where occurred_at < ${rollupCutoff} limit ${batch}
      ))
    `,
  ]);
  return Math.max(touches.count, installs.count);
}
