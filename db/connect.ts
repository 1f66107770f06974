import postgres from "postgres";
import type { Config } from "../config.ts";
import { startEmbeddedPostgres } from "./embedded.ts";
import { migrate } from "./migrate.ts";
import { repairPoolQueues } from "./pool_queues.ts";
import { driverTarget } from "./target.ts";

export type Sql = postgres.Sql;
/** What services take: the pool or a transaction, so callers can compose them in one transaction. */
export type Db = postgres.ISql;

export interface Database {
  sql: Sql;
  url: string;
  embedded: boolean;
  /** The pool's size: options.max, or 1 on the embedded database. */
  poolMax: number;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Pool size on a real PostgreSQL; the embedded database is always 1. */
  max?: number;
  /**
   * Called before the first migration of a database that holds none yet (a new instance),
   * never for one already set up; what it throws stops the opening, with nothing migrated.
   */
  beforeFirstMigration?: () => void;
}

/**
 * What this process's connections call themselves (pg_stat_activity.application_name): the
 * service's name and a random tag, so an instance can tell its own connections from the other
 * instances' (the pool's metrics, services/monitoring/metrics.ts).
 */
export const APPLICATION_NAME = `link-event-feed/${crypto.randomUUID().slice(0, 8)}`;

/**
 * A pool on `url`. `settings` are session settings every connection of it starts with (e.g. the
 * deliverer's records pool: `{ synchronous_commit: "off" }`).
 */
export function connect(url: string, max: number, settings: Record<string, string> = {}): Sql {
  const target = driverTarget(url);
  const sql = postgres(target.url, {
    ...(target.path ? { path: target.path } : {}),
    max,
    onnotice: () => {}, // PGlite sends DEBUG notices; PostgreSQL's NOTICEs are not for clients either
    connection: { application_name: APPLICATION_NAME, ...settings },
  });
  // In the background: a pool that cannot reach its database yet fails its own queries anyway,
  // and one that is ended at once has nothing to repair (pool_queues.ts says what this is).
  repairPoolQueues(sql).catch(() => {});
  return sql;
}

/** Opens the configured database (or starts the embedded one) and applies migrations. */
export async function openDatabase(
  config: Pick<Config, "databaseUrl" | "dataDir">,
  options: OpenOptions = {},
): Promise<Database> {
  const embedded = config.databaseUrl ? null : await startEmbeddedPostgres(config.dataDir);
  const url = config.databaseUrl ?? embedded!.url;
  try {
    await migrate(url, { beforeFirst: options.beforeFirstMigration });
  } catch (err) {
    await embedded?.stop();
    throw err;
  }
  const poolMax = embedded ? 1 : options.max ?? 10;
  const sql = connect(url, poolMax);
  return {
    sql,
    url,
    embedded: embedded !== null,
    poolMax,
    async close() {
      await sql.end({ timeout: 5 });
      await embedded?.stop();
    },
  };
}
