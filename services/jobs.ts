import type { Sql } from "../db/connect.ts";
import type { Clock } from "./clock.ts";
import { logDrops } from "./destination_drops.ts";
import { purgeExpired } from "./feed_retention.ts";
import { describeError, type Logger } from "./log.ts";
import type { Config } from "../config.ts";

export interface BackgroundJobs {
  stop(): Promise<void>;
}

export interface JobOptions {
  /** Pause between retention passes. */
  intervalMs?: number;
  /** Pause before the first pass, so that start-up is not slowed by a purge. */
  firstDelayMs?: number;
}

/**
 * Periodic work of every instance (retention purges); each job coordinates through PostgreSQL,
 * so any number of instances may run it. Timers do not keep the process alive, and stop()
 * waits for a pass in progress.
 */
export function startBackgroundJobs(
  deps: { sql: Sql; clock: Clock; logger: Logger; config: Config },
  options: JobOptions = {},
): BackgroundJobs {
  // Often enough that expired rows never pile up ahead of a reader starting from the beginning.
  const intervalMs = options.intervalMs ?? 60_000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> = Promise.resolve();
  const stopping = new AbortController();

  async function pass() {
    try {
      const result = await purgeExpired(
        deps.sql,
        deps.clock.now(),
        deps.config.analyticsRetentionDays,
        { signal: stopping.signal, onDrops: (drops) => logDrops(deps.logger, drops) },
      );
      if (result.feedEvents + result.analyticsEvents + result.rateHits > 0) {
        deps.logger.info("retention purge", { ...result });
      }
    } catch (err) {
      deps.logger.warn("retention purge failed", describeError(err));
    }
  }

  function schedule(delayMs: number) {
    if (stopping.signal.aborted) return;
    const id = setTimeout(() => {
      running = pass().then(() => schedule(intervalMs));
    }, delayMs);
    Deno.unrefTimer(id);
    timer = id;
  }

  schedule(options.firstDelayMs ?? 10_000);
  return {
    async stop() {
      stopping.abort();
      clearTimeout(timer);
      await running;
    },
  };
}
