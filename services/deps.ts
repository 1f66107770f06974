import type { Config } from "../config.ts";
import type { Sql } from "../db/connect.ts";
import type { Clock } from "../infra/clock.ts";
import type { CountryLookup } from "./link_host/geoip.ts";
import type { LiveTails } from "./feed/live_tail.ts";
import type { Logger } from "../infra/log.ts";
import type { ViewRecorder } from "./link_host/view_recorder.ts";

/**
 * What the services run with, and so what every transport is built from: main.ts passes the real
 * ones, tests their own clock and logger.
 */
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
  /**
   * Live-tail streams, woken by capture notifications; main.ts closes it at shutdown. When
   * absent, createApp makes one that polls.
   */
  liveTails?: LiveTails;
  /** The GeoIP database of GEOIP_DATABASE; absent: the country of a view is unknown. */
  geoip?: CountryLookup | null;
}
