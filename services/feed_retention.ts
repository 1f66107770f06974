// Retention: the feed keeps seven days of captured events, the analytics history its
// configured window. Purges delete in bounded batches, each in its own short transaction, and
// only one instance purges at a time.
import type { Db, Sql } from "../db/connect.ts";
import { deleteAnalyticsEventsBefore } from "./events.ts";
import { deleteFeedEventsBefore } from "./feed_capture.ts";
import { accountDrops, type DestinationDrop } from "./destination_drops.ts";
import { purgeRateHits } from "./rate_limit.ts";

export const FEED_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
// pg_try_advisory_xact_lock key of the purge; any constant shared by every instance.
const PURGE_LOCK_KEY = 4_242_003;

/** Events received before this instant are outside the feed: neither served nor kept. */
export function feedRetentionCutoff(now: Date): Date {
  return new Date(now.getTime() - FEED_RETENTION_MS);
}

/** Analytics events received before this instant are outside the history: not exported, purged. */
export function analyticsRetentionCutoff(now: Date, retentionDays: number): Date {
  return new Date(now.getTime() - retentionDays * DAY_MS);
}

export interface PurgeOptions {
  /** Rows deleted per transaction. */
  batchSize?: number;
  /** Batches per table and pass; what is left waits for the next pass. */
  maxBatches?: number;
  /** Checked between batches: an instance shutting down does not wait for a long pass. */
  signal?: AbortSignal;
  /** Told of destination events counted as dropped before their deletion, to log them. */
  onDrops?: (drops: DestinationDrop[]) => void;
}

export interface PurgeResult {
  /** False when another instance held the purge lock: this pass did nothing. */
  ran: boolean;
  feedEvents: number;
  analyticsEvents: number;
  rateHits: number;
}

type BatchDelete = (tx: Db, batch: number) => Promise<number>;

/**
 * One retention pass over the feed, the analytics history and stale rate-limit hits, as of
 * `now`. Stops early when another instance is purging.
 */
export async function purgeExpired(
  sql: Sql,
  now: Date,
  analyticsRetentionDays: number,
  options: PurgeOptions = {},
): Promise<PurgeResult> {
  const batchSize = options.batchSize ?? 5000;
  const maxBatches = options.maxBatches ?? 100;
  const feedCutoff = feedRetentionCutoff(now);
  const analyticsCutoff = analyticsRetentionCutoff(now, analyticsRetentionDays);
  const result: PurgeResult = { ran: true, feedEvents: 0, analyticsEvents: 0, rateHits: 0 };
  let accounted = false;
  const steps: [keyof Omit<PurgeResult, "ran">, BatchDelete][] = [
    ["feedEvents", async (tx, n) => {
      // Pending destination events are counted as dropped before they go (destination_drops.ts);
      // once a pass: its cutoff is fixed, so the first batch's accounting covers them all.
      if (!accounted) {
        const drops = await accountDrops(tx, feedCutoff, null);
        if (drops.length > 0) options.onDrops?.(drops);
        accounted = true;
      }
      return await deleteFeedEventsBefore(tx, feedCutoff, n);
    }],
    ["analyticsEvents", (tx, n) => deleteAnalyticsEventsBefore(tx, analyticsCutoff, n)],
    ["rateHits", (tx, n) => purgeRateHits(tx, now, n)],
  ];
  for (const [key, step] of steps) {
    for (let i = 0; i < maxBatches && !options.signal?.aborted; i++) {
      const deleted = await deleteBatchIfLeader(sql, (tx) => step(tx, batchSize));
      if (deleted === null) return { ...result, ran: false };
      result[key] += deleted;
      if (deleted < batchSize) break;
    }
  }
  return result;
}

/** Runs one batch under the purge lock; null when another instance holds it. */
function deleteBatchIfLeader(sql: Sql, batch: (tx: Db) => Promise<number>) {
  return sql.begin(async (tx) => {
    const [lock] = await tx<{ locked: boolean }[]>`
      select pg_try_advisory_xact_lock(${PURGE_LOCK_KEY}) as locked
    `;
    return lock!.locked ? await batch(tx) : null;
  });
}
