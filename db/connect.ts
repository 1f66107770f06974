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
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Pool size on a real PostgreSQL; the embedded database is always 1. */
  max?: number;
}

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
    connection: { application_name: "link-event-feed", ...settings },
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
    await migrate(url);
  } catch (err) {
    await embedded?.stop();
    throw err;
  }
  const sql = connect(url, embedded ? 1 : options.max ?? 10);
  return {
    sql,
    url,
    embedded: embedded !== null,
    async close() {
      await sql.end({ timeout: 5 });
      await embedded?.stop();
    },
  };
}
