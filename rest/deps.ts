import type { Config } from "../config.ts";
import type { Sql } from "../db/connect.ts";
import type { Clock } from "../services/clock.ts";
import type { Logger } from "../services/log.ts";
import type { ViewRecorder } from "../services/view_recorder.ts";

/** What the app is built from: main.ts passes the real ones, tests their own clock and logger. */
export interface AppDeps {
  sql: Sql;
  config: Config;
  clock: Clock;
  logger: Logger;
  /** SHA-256 digest of the instance admin token. */
  adminTokenHash: string;
  /** HMAC key of feed cursors: CURSOR_SECRET, or the one generated once and kept in the database. */
  cursorSecret: string;
  /** Link-host views, written behind the responses; main.ts flushes it at shutdown. */
  views: ViewRecorder;
}

export interface AppEnv {
  Variables: { requestId: string };
}
