import type { Sql } from "../../db/connect.ts";
import type { Clock } from "../../infra/clock.ts";
import { logDrops } from "../destinations/drops.ts";
import { purgeExpired } from "../feed/retention.ts";
import { describeError, type Logger } from "../../infra/log.ts";
import { ensureAllPartitions } from "./partitions.ts";
import type { Config } from "../../config.ts";
import { mergeRollups, utcHour } from "../analytics/rollups.ts";
import { fetchRatesIfDue } from "../fx/fetch.ts";
import { foldInstalls } from "../attribution/install_days.ts";

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
 * Creates the history tables' partitions around now (services/maintenance/partitions.ts) and logs what it
 * did. Run by every pass of the background job and once at start-up, so that a fresh install
 * has today's partitions before its first event. Never throws: a failure is logged, and the
 * next pass tries again (until then, rows land in the default partition).
 */
export async function maintainPartitions(
  deps: { sql: Sql; clock: Clock; logger: Logger },
  signal?: AbortSignal,
): Promise<void> {
  try {
    const result = await ensureAllPartitions(deps.sql, deps.clock.now(), { signal });
    for (const created of result.created) {
      deps.logger.info("history partition created", { ...created });
    }
    if (result.deferred.length > 0) {
      deps.logger.warn("history partition creation deferred: its lock was not granted in time", {
        partitions: result.deferred,
      });
    }
  } catch (err) {
    deps.logger.warn("history partition creation failed", describeError(err));
  }
}

/**
 * Merges the analytics rollups of the hours that have ended (services/analytics/rollups.ts), and
 * folds the attributed installs stored since the last pass into their days
 * (services/attribution/install_days.ts): queries read fewer rows, and the figures stay the
 * same. Never throws: the next pass retries.
 */
export async function maintainRollups(
  deps: { sql: Sql; clock: Clock; logger: Logger },
  signal?: AbortSignal,
): Promise<void> {
  try {
    const result = await mergeRollups(deps.sql, utcHour(deps.clock.now()), { signal });
    if (result.rows > 0) deps.logger.debug("analytics rollups merged", { ...result });
  } catch (err) {
    deps.logger.warn("analytics rollup merge failed", describeError(err));
  }
  try {
    const installs = await foldInstalls(deps.sql);
    if (installs > 0) deps.logger.debug("attributed installs folded", { installs });
  } catch (err) {
    deps.logger.warn("attributed installs fold failed", describeError(err));
  }
}

/**
 * Periodic work of every instance (partitions, rollup merges, retention purges); each job coordinates through
 * PostgreSQL, so any number of instances may run it. Timers do not keep the process alive, and
 * stop() waits for a pass in progress.
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

  // This instance's name on the exchange rates' fetch lease (services/fx/fetch.ts).
  const instanceId = `${Deno.pid}:${crypto.randomUUID()}`;

  async function pass() {
    // First and whatever the purge does: the coming days' partitions never wait for retention.
    await maintainPartitions(deps, stopping.signal);
    await maintainRollups(deps, stopping.signal);
    if (deps.config.fxRatesUrl !== null) {
      // Never throws but for its lease's statement (the database gone): logged, retried next pass.
      await fetchRatesIfDue(deps, {
        url: deps.config.fxRatesUrl,
        instanceId,
        signal: stopping.signal,
      }).catch((err) => deps.logger.warn("exchange rates fetch failed", describeError(err)));
    }
    try {
      const result = await purgeExpired(
        deps.sql,
        deps.clock.now(),
        deps.config.analyticsRetentionDays,
        {
          signal: stopping.signal,
          onDrops: (drops) => logDrops(deps.logger, drops),
          rollupDays: deps.config.analyticsRollupDays,
        },
      );
      const { droppedPartitions, deferredPartitions, ...counts } = result;
      for (const dropped of droppedPartitions ?? []) {
        deps.logger.info("history partition dropped", { ...dropped });
      }
      if (deferredPartitions) {
        deps.logger.warn("history partition drop deferred: its lock was not granted in time", {
          partitions: deferredPartitions,
        });
      }
      if (
        result.feedEvents + result.analyticsEvents + result.rateHits + (result.analyticsKeys ?? 0) +
            (result.analyticsRollups ?? 0) > 0
      ) {
        deps.logger.info("retention purge", { ...counts });
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
