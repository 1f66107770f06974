// A fresh database per test file: a new database on the PostgreSQL of DATABASE_URL when it is
// set (CI), else a throwaway embedded PGlite in memory.
import { connect, type Sql } from "../../db/connect.ts";
import { createDatabase, dropDatabase } from "../../db/databases.ts";
import { startEmbeddedPostgres } from "../../db/embedded.ts";
import { migrate } from "../../db/migrate.ts";

export interface TestDatabase {
  url: string;
  embedded: boolean;
  /**
   * A connection pool to the database. On a real PostgreSQL each call opens a new pool, as a
   * separate instance would; PGlite serves one connection, so there every call shares it.
   */
  pool(max?: number): Sql;
  close(): Promise<void>;
}

export async function createTestDatabase(
  options: { migrate?: boolean } = {},
): Promise<TestDatabase> {
  const base = Deno.env.get("DATABASE_URL");
  const pools: Sql[] = [];
  let url: string;
  let drop: () => Promise<void>;
  if (base) {
    const name = `t_${Date.now().toString(36)}_${crypto.randomUUID().slice(0, 8)}`;
    // On a Citus coordinator, a cluster of its own (db/databases.ts).
    url = await createDatabase(base, name);
    drop = () => dropDatabase(base, name);
  } else {
    const embedded = await startEmbeddedPostgres("memory://");
    url = embedded.url;
    drop = () => embedded.stop();
  }
  if (options.migrate !== false) await migrate(url);
  return {
    url,
    embedded: !base,
    pool(max = 4) {
      if (!base && pools.length > 0) return pools[0]!;
      const sql = connect(url, base ? max : 1);
      pools.push(sql);
      return sql;
    },
    async close() {
      await Promise.all(pools.map((p) => p.end({ timeout: 5 })));
      await drop();
    },
  };
}

/**
 * The same handle, counting every query sent through it (transactions and reserved connections
 * included): tests prove batching by counting, not by guessing.
 */
export function countingSql(sql: Sql): { sql: Sql; queries: string[] } {
  const queries: string[] = [];
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      apply(fn, self, args) {
        const strings = args[0];
        if (Array.isArray(strings) && "raw" in strings) queries.push(strings.join("$"));
        return Reflect.apply(fn as (...a: unknown[]) => unknown, self, args);
      },
      get(obj, key, receiver) {
        const value = Reflect.get(obj, key, receiver);
        if (key === "reserve" && typeof value === "function") {
          return async (...args: unknown[]) => wrap(await value.apply(obj, args));
        }
        if (key !== "begin" || typeof value !== "function") return value;
        return (...args: unknown[]) => {
          const last = args.length - 1;
          const callback = args[last] as (tx: object) => unknown;
          args[last] = (tx: object) => callback(wrap(tx));
          return value.apply(obj, args);
        };
      },
    });
  return { sql: wrap(sql), queries };
}

/**
 * Applies the migrations up to and including number `last`: a database as the previous version
 * left it, to test (or time) the next migration on it. Then migrate() applies the rest. Through
 * db/migrate.ts, as an instance's start migrates: it also tells the service whether the database
 * is a Citus cluster, which an app served on it afterwards depends on.
 */
export async function migrateUpTo(url: string, last: number): Promise<void> {
  await migrate(url, { upTo: last });
}
