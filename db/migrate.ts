import { fileURLToPath } from "node:url";
import postgres from "postgres";
import shift from "postgres-shift";
import { setOnCitus } from "./cluster.ts";
import { driverTarget } from "./target.ts";

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
// Any constant works; it only has to be the same for every instance of this service.
const MIGRATION_LOCK_KEY = 4_242_001;

/** The migrations of this version, as postgres-shift numbers and names them (in order). */
export function migrationList(): { id: number; name: string }[] {
  return [...Deno.readDirSync(MIGRATIONS_DIR)]
    .filter((e) => /^[0-9]{5}_/.test(e.name))
    .map((e) => ({ id: Number(e.name.slice(0, 5)), name: e.name.slice(6).replace(/-/g, " ") }))
    .sort((a, b) => a.id - b.id);
}

/**
 * Applies pending migrations (up to and including number `upTo` when given: a restore of an
 * older backup loads it at its own version first). A session-level advisory lock on a
 * dedicated single connection makes instances that start together take turns: the second
 * finds the work done.
 *
 * If that connection closes before the work is done, the attempt fails with CONNECTION_CLOSED at
 * once, whatever its statements were waiting for, and a caller that retries starts over on a new
 * connection (main.ts waits for its database this way). Two reasons not to go on: postgres.js
 * would reconnect and run the rest without the lock, which ended with the session; and a
 * statement sent in the moment between the socket's error and its close is never answered nor
 * failed (postgres-shift sends one from a failed query's catch), so the attempt would wait
 * forever (porsager/postgres#1130). Whatever had been applied is whole or not at all:
 * postgres-shift runs the migrations in one transaction.
 */
export async function migrate(
  url: string,
  options: {
    upTo?: number;
    /** Called, under the lock, when the database has no migration applied yet; may throw. */
    beforeFirst?: () => void;
  } = {},
): Promise<void> {
  const target = driverTarget(url);
  let wasLost = false;
  let lost: (err: Error) => void = () => {};
  const closed = new Promise<never>((_, reject) => lost = reject);
  closed.catch(() => {}); // the race below takes it; after the race, the end's own close lands here
  const sql = postgres(target.url, {
    ...(target.path ? { path: target.path } : {}),
    max: 1,
    // The lock lives as long as the connection: postgres.js must not retire it for its age.
    max_lifetime: null,
    onnotice: () => {},
    // Called for a connection that had opened (one that never did is retried by postgres.js).
    onclose: () => {
      wasLost = true;
      lost(connectionClosed());
    },
  });
  try {
    await Promise.race([closed, work()]);
  } finally {
    // After a lost connection postgres.js may wait for a statement that will never be answered.
    await sql.end({ timeout: wasLost ? 0 : 5 });
  }

  async function work(): Promise<void> {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
    if (options.beforeFirst) {
      // Two statements: naming a table that does not exist fails the whole statement.
      const [table] = await sql<{ present: boolean }[]>`
        select to_regclass('migrations') is not null as present
      `;
      const [row] = table!.present ? await sql`select 1 from migrations limit 1` : [];
      if (!row) options.beforeFirst();
    }
    if (options.upTo === undefined) await shift({ sql, path: MIGRATIONS_DIR });
    else await shiftUpTo(sql, options.upTo);
    await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`;
    const [ext] = await sql<{ citus: boolean }[]>`
      select exists (select from pg_extension where extname = 'citus') as citus
    `;
    setOnCitus(ext!.citus);
  }
}

/** With the code postgres.js gives a closed connection, so callers treat it as they treat that. */
function connectionClosed(): Error {
  return Object.assign(new Error("the migration's connection closed before it was done"), {
    code: "CONNECTION_CLOSED",
  });
}

/**
 * Applies pending migrations (up to `upTo` when given) inside the caller's transaction `tx`, so
 * that they commit or roll back with what else it does (a restore loads its rows between two
 * such calls). postgres-shift runs its migrations in a transaction of its own: here that is
 * `tx` itself. No advisory lock: the caller's database is one no instance serves yet.
 */
export async function migrateInTransaction(
  tx: postgres.TransactionSql,
  options: { upTo?: number } = {},
): Promise<void> {
  const inTx = Object.assign(
    (...args: Parameters<postgres.TransactionSql>) => tx(...args),
    {
      begin: (fn: (sql: postgres.TransactionSql) => unknown) => fn(tx),
      file: tx.file.bind(tx),
      unsafe: tx.unsafe.bind(tx),
    },
  ) as unknown as postgres.Sql;
  // postgres-shift finds out whether its table exists by a query that fails when it does not,
  // which would abort the transaction: it is made first, as postgres-shift makes it.
  await tx`
    create table if not exists migrations (
      migration_id serial primary key,
      created_at timestamp with time zone not null default now(),
      name text
    )
  `;
  if (options.upTo === undefined) await shift({ sql: inTx, path: MIGRATIONS_DIR });
  else await shiftUpTo(inTx, options.upTo);
}

/** postgres-shift over a folder of links to the migrations numbered up to `last`. */
async function shiftUpTo(sql: postgres.Sql, last: number): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "migrations-" });
  try {
    for (const entry of Deno.readDirSync(MIGRATIONS_DIR)) {
      if (/^[0-9]{5}_/.test(entry.name) && Number(entry.name.slice(0, 5)) <= last) {
        await Deno.symlink(`${MIGRATIONS_DIR}/${entry.name}`, `${dir}/${entry.name}`);
      }
    }
    await shift({ sql, path: dir });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
