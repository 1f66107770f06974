// What attribution keeps beyond the history, and when it goes (services/feed/retention.ts runs
// these in its pass, under its lock).
import type { Db } from "../../db/connect.ts";
import { onCitus } from "../../db/cluster.ts";
import { utcMidnight } from "../analytics/rollups.ts";
import { purgeInstallDays } from "./install_days.ts";

/** The longest attribution window (attribution_window_days): touches older attribute nothing. */
export const MAX_WINDOW_DAYS = 90;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Deletes up to `batch` rows of attribution's tables that can no longer count: users' touches
 * that occurred before the longest window, and attributed installs (with their days) before the
 * UTC day of the rollups' cutoff (the funnel reads them beside the rollups, so they are kept as
 * long, to the day).
 */
export async function purgeAttribution(
  db: Db,
  now: Date,
  rollupCutoff: Date,
  batch: number,
): Promise<number> {
  const touchCutoff = new Date(now.getTime() - MAX_WINDOW_DAYS * DAY_MS);
  // Installs go by whole UTC days, as their days do (./install_days.ts): those days keep counting
  // the installs this table holds.
  const installCutoff = utcMidnight(rollupCutoff);
  const days = await purgeInstallDays(db, installCutoff);
  if (onCitus()) {
    // Citus plans no distributed DELETE by ctid: all at once, each shard's on its worker.
    const a = await db`delete from attribution_touches where occurred_at < ${touchCutoff}`;
    const b = await db`delete from attributed_installs where occurred_at < ${installCutoff}`;
    return a.count + b.count + days;
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
        select ctid from attributed_installs where occurred_at < ${installCutoff} limit ${batch}
      ))
    `,
  ]);
  return Math.max(touches.count, installs.count, days);
}
