// Start-up waits for its database. An instance that starts while PostgreSQL is still coming up,
// restarting, or dropping connections (a failover, pg_terminate_backend, a proxy's restart) must
// not die of it: every step of start-up that talks to the database is idempotent (migrations run
// under their lock, settings are read or created once, partitions are created if absent), so a
// step that failed because the database was unavailable (services/errors.ts,
// isDatabaseUnavailable) is simply run again, after a growing pause, until it passes or
// `patienceMs` has gone by. Any other error (a bad password, an unknown host, a failing migration)
// stops start-up at once, as before.
import type { Logger } from "../../infra/log.ts";
import { describeError } from "../../infra/log.ts";
import { isDatabaseUnavailable } from "../errors.ts";

/** How long start-up keeps trying before it gives up (and the process exits for its supervisor). */
export const START_UP_PATIENCE_MS = 120_000;
const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 5_000;

export interface WaitOptions {
  logger: Logger;
  patienceMs?: number;
  /** Milliseconds since some fixed moment (tests pass their own). */
  now?: () => number;
  /** Waits `ms` (tests pass one that only records it). */
  sleep?: (ms: number) => Promise<void>;
}

/** The pause before attempt `attempt + 1` (attempt counts from 1): doubling, capped. */
export function pauseAfter(attempt: number): number {
  return Math.min(LONGEST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** (attempt - 1));
}

/**
 * Runs `step` (start-up's `what`) until it resolves. A failure for which the database is to blame
 * is logged and retried after pauseAfter(attempt), as long as the patience lasts; the last such
 * failure is thrown once it has run out. Any other failure is thrown at once.
 */
export async function untilDatabaseAnswers<T>(
  what: string,
  step: () => Promise<T>,
  options: WaitOptions,
): Promise<T> {
  const now = options.now ?? (() => performance.now());
  const sleep = options.sleep ??
    ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const deadline = now() + (options.patienceMs ?? START_UP_PATIENCE_MS);
  for (let attempt = 1;; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      const pause = pauseAfter(attempt);
      if (now() + pause > deadline) throw err;
      options.logger.warn("database unavailable during start-up; trying again", {
        step: what,
        attempt,
        retry_in_ms: pause,
        ...describeError(err),
      });
      await sleep(pause);
    }
  }
}
