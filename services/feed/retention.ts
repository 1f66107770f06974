// Retention: the feed keeps seven days of captured events, the analytics history its
// configured window, the analytics rollups and their margins theirs (ANALYTICS_ROLLUP_DAYS, by
// month). The analytics history drops its expired days whole (services/maintenance/partitions.ts);
// what is left (the default partition's rows, idempotency keys, the feed, rate-limit hits) is
// deleted in bounded batches. Each drop and batch is its own short transaction, and only one
// instance purges at a time (services/maintenance/lock.ts).
import type { Db, Sql } from "../../db/connect.ts";
import {
  ANALYTICS_EVENTS_TABLE,
  deleteAnalyticsEventsBefore,
  deleteAnalyticsKeysBefore,
} from "../events/record.ts";
import { deleteFeedEventsBefore, FEED_EVENTS_TABLE } from "./capture.ts";
import { accountDrops, type DestinationDrop } from "../destinations/drops.ts";
import { asMaintainer } from "../maintenance/lock.ts";
import { dropPartitionsBefore, type DroppedPartition } from "../maintenance/partitions.ts";
import { purgeRateHits } from "./rate_limit.ts";
import { purgeSdkRateCounts } from "../projects/sdk_limits.ts";
import { purgeAttribution } from "../attribution/purge.ts";
import {
  deleteRollupsBefore,
  LINK_DAYS_TABLE,
  MARGINS_TABLE,
  ROLLUPS_TABLE,
} from "../analytics/rollups.ts";

export const FEED_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Events received before this instant are outside the feed: neither served nor kept. */
export function feedRetentionCutoff(now: Date): Date {
  return new Date(now.getTime() - FEED_RETENTION_MS);
}

/** Default of ANALYTICS_ROLLUP_DAYS. */
export const ROLLUP_RETENTION_DAYS = 400;

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
  /** lock_timeout of a partition drop (services/maintenance/partitions.ts LOCK_TIMEOUT_MS). */
  lockTimeoutMs?: number;
  /** ANALYTICS_ROLLUP_DAYS: rollups of hours before now minus this many days go. */
  rollupDays?: number;
}

export interface PurgeResult {
  /** False when another instance held the purge lock: this pass did nothing more. */
  ran: boolean;
  feedEvents: number;
  /** Analytics events purged: the rows of dropped days and those deleted one by one. */
  analyticsEvents: number;
  rateHits: number;
  /** Present when the pass dropped whole days of history. */
  droppedPartitions?: DroppedPartition[];
  /** Present when a drop gave up waiting for its lock; the next pass tries again. */
  deferredPartitions?: string[];
  /** Present when the pass deleted expired client ids (idempotency keys) of the history. */
  analyticsKeys?: number;
  /** Present when the pass purged analytics rollup rows (dropped months and deleted rows). */
  analyticsRollups?: number;
  /** Present when the pass dropped SDK write counts of past minutes (services/sdk_limits.ts). */
  sdkRateCounts?: number;
  /** Present when the pass deleted users' touches or attributed installs past their time. */
  attribution?: number;
}

type Counted =
  | "feedEvents"
  | "analyticsEvents"
  | "rateHits"
  | "analyticsKeys"
  | "analyticsRollups"
  | "sdkRateCounts"
  | "attribution";
type BatchDelete = (tx: Db, batch: number) => Promise<number>;
/** Counts a result carries only when the pass did something of the kind. */
const OPTIONAL_COUNTS = new Set<Counted>([
  "analyticsKeys",
  "analyticsRollups",
  "sdkRateCounts",
  "attribution",
]);

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
  const rollupCutoff = analyticsRetentionCutoff(now, options.rollupDays ?? ROLLUP_RETENTION_DAYS);
  const result: PurgeResult = { ran: true, feedEvents: 0, analyticsEvents: 0, rateHits: 0 };
  let accounted = false;
  // Partitioned tables: their expired days are dropped whole, after the batches of the step
  // counting them (which delete the default partition's expired rows).
  const partitioned: [string, Date, "feedEvents" | "analyticsEvents" | "analyticsRollups"][] = [
    [FEED_EVENTS_TABLE, feedCutoff, "feedEvents"],
    [ANALYTICS_EVENTS_TABLE, analyticsCutoff, "analyticsEvents"],
    [ROLLUPS_TABLE, rollupCutoff, "analyticsRollups"],
    // The margins summarise the rollups' hours: they go with them, by the same months.
    [MARGINS_TABLE, rollupCutoff, "analyticsRollups"],
    [LINK_DAYS_TABLE, rollupCutoff, "analyticsRollups"],
  ];
  const steps: [Counted, BatchDelete][] = [
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
    ["analyticsKeys", (tx, n) => deleteAnalyticsKeysBefore(tx, analyticsCutoff, n)],
    ["analyticsRollups", (tx, n) => deleteRollupsBefore(tx, rollupCutoff, n)],
    ["rateHits", (tx, n) => purgeRateHits(tx, now, n)],
    ["sdkRateCounts", (tx, n) => purgeSdkRateCounts(tx, now, n)],
    ["attribution", (tx, n) => purgeAttribution(tx, now, rollupCutoff, n)],
  ];
  for (const [key, step] of steps) {
    for (let i = 0; i < maxBatches && !options.signal?.aborted; i++) {
      const deleted = await asMaintainer(sql, (tx) => step(tx, batchSize));
      if (deleted === null) return { ...result, ran: false };
      // The optional counts are there only when the pass did something of the kind.
      if (deleted > 0 || !OPTIONAL_COUNTS.has(key)) result[key] = (result[key] ?? 0) + deleted;
      if (deleted < batchSize) break;
    }
    // Whole days after the step's first batch, which does what must come before any deletion
    // (the feed's destination drops are counted there).
    for (const [table, cutoff, counted] of partitioned) {
      if (counted !== key || options.signal?.aborted) continue;
      const drops = await dropPartitionsBefore(sql, table, cutoff, options);
      if (drops.dropped.length > 0) {
        (result.droppedPartitions ??= []).push(...drops.dropped);
        result[key] = (result[key] ?? 0) + drops.dropped.reduce((n, d) => n + d.rows, 0);
      }
      if (drops.deferred.length > 0) (result.deferredPartitions ??= []).push(...drops.deferred);
      if (!drops.ran) return { ...result, ran: false };
    }
  }
  return result;
}
