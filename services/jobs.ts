import type { Sql } from "../db/connect.ts";
import type { Clock } from "./clock.ts";
import type { Logger } from "./log.ts";
import type { Config } from "../config.ts";

export interface BackgroundJobs {
  stop(): Promise<void>;
}

/** Periodic work of every instance (retention purges); each job coordinates through PostgreSQL. */
export function startBackgroundJobs(
  _deps: { sql: Sql; clock: Clock; logger: Logger; config: Config },
): BackgroundJobs {
  return { stop: () => Promise.resolve() };
}
