import { fileURLToPath } from "node:url";
import postgres from "postgres";
import shift from "postgres-shift";
import { setOnCitus } from "./cluster.ts";
import { driverTarget } from "./target.ts";

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
// Any constant works; it only has to be the same for every instance of this service.
const MIGRATION_LOCK_KEY = 4_242_001;

/**
 * Applies pending migrations. A session-level advisory lock on a dedicated single connection
 * makes instances that start together take turns: the second finds the work done.
 */
export async function migrate(url: string): Promise<void> {
  const target = driverTarget(url);
  const sql = postgres(target.url, {
    ...(target.path ? { path: target.path } : {}),
    max: 1,
    onnotice: () => {},
  });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
    await shift({ sql, path: MIGRATIONS_DIR });
    await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`;
    const [ext] = await sql<{ citus: boolean }[]>`
      select exists (select from pg_extension where extname = 'citus') as citus
    `;
    setOnCitus(ext!.citus);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
