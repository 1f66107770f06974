// Reading a whole database for a backup or a move (docs/operations.md, "Backup, restore and
// move"), the same on the embedded database and on PostgreSQL: plain SQL in one REPEATABLE READ,
// READ ONLY transaction, so every table is read from one snapshot while the service may go on
// writing (pg_dump is not there inside the embedded database, and COPY FROM STDIN hangs under
// postgres.js in Deno). Each row is its row_to_json text, which json_populate_recordset reads
// back into the same types exactly (db/backup/load.ts), on either database.
import type { Sql } from "../connect.ts";

export const DUMP_FORMAT = "link-event-feed-backup";
export const DUMP_VERSION = 1;

/**
 * Tables whose rows are not kept: the live-tail streams open at the time, each a connection to
 * a process that will not exist after a restore (restored, they would hold their token's stream
 * slots until they expired). Their sequences are kept.
 */
const NOT_KEPT = new Set(["live_streams", "migrations"]);

export interface DumpTable {
  name: string;
  /** The columns written, in order: every stored column (generated ones are computed again). */
  columns: string[];
  /** Rows in the snapshot. */
  rows: number;
  /** A partitioned table's partitions, each with its bound as PostgreSQL prints it. */
  partitions: { name: string; bound: string }[];
}

export interface DumpHeader {
  format: typeof DUMP_FORMAT;
  version: number;
  createdAt: string;
  /** "embedded" or "postgresql": where it was read. */
  source: string;
  serverVersion: string;
  /** The migrations applied to the source: a restore needs the same, or fewer (then it upgrades). */
  migrations: { id: number; name: string }[];
  /** Every feed position the source issued is below this one (services/feed/positions.ts). */
  feedPositionBound: string;
  /** In an order that loads each table after those it refers to. */
  tables: DumpTable[];
  sequences: { name: string; lastValue: string; isCalled: boolean }[];
}

export interface DumpSink {
  header(header: DumpHeader): Promise<void>;
  /** Rows of `table`, each the JSON text of one row, in batches. */
  rows(table: DumpTable, lines: string[]): Promise<void>;
}

/** Rows fetched per round trip of the cursor. */
const FETCH_ROWS = 2000;

/**
 * Reads the database of `sql` into `sink`, in one snapshot. `bound` reads the feed's position
 * bound inside the same snapshot (services/feed/positions.ts feedPositionBound).
 */
export async function dumpDatabase(
  sql: Sql,
  options: { source: string; bound: (tx: Sql) => Promise<string> },
  sink: DumpSink,
): Promise<DumpHeader> {
  return await sql.begin("isolation level repeatable read read only", async (tx) => {
    const db = tx as unknown as Sql;
    await tx`set local timezone = 'UTC'`;
    const [citus] = await tx<{ on: boolean }[]>`
      select exists (select from pg_extension where extname = 'citus') as on
    `;
    if (citus!.on) {
      throw new Error("this database is a Citus cluster: back it up with Citus's own tools");
    }
    const header = await readHeader(db, options.source, await options.bound(db));
    await sink.header(header);
    for (const table of header.tables) {
      const query = tx.unsafe(`select row_to_json(t)::text as line from ${ident(table.name)} t`);
      for await (const rows of query.cursor(FETCH_ROWS)) {
        await sink.rows(table, rows.map((r) => r.line as string));
      }
    }
    return header;
  });
}

async function readHeader(db: Sql, source: string, bound: string): Promise<DumpHeader> {
  const [version] = await db<{ v: string }[]>`select current_setting('server_version') as v`;
  const migrations = await db<{ id: number; name: string }[]>`
    select migration_id as id, name from migrations order by migration_id
  `;
  const found = await db<{ name: string; partitioned: boolean }[]>`
    select c.relname as name, c.relkind = 'p' as partitioned
    from pg_class c
    where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p')
      and not c.relispartition
    order by c.relname
  `;
  const names = found.map((t) => t.name).filter((n) => !NOT_KEPT.has(n));
  const references = await db<{ child: string; parent: string }[]>`
    select c.conrelid::regclass::text as child, c.confrelid::regclass::text as parent
    from pg_constraint c
    where c.contype = 'f' and c.connamespace = current_schema()::regnamespace
  `;
  const tables: DumpTable[] = [];
  for (const name of dependencyOrder(names, references)) {
    const columns = await db<{ name: string }[]>`
      select a.attname as name from pg_attribute a
      where a.attrelid = ${name}::regclass and a.attnum > 0 and not a.attisdropped
        and a.attgenerated = ''
      order by a.attnum
    `;
    const [count] = await db.unsafe<{ n: string }[]>(
      `select count(*)::text as n from ${ident(name)}`,
    );
    const partitions = await db<{ name: string; bound: string }[]>`
      select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
      from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = ${name}::regclass
      order by c.relname
    `;
    tables.push({
      name,
      columns: columns.map((c) => c.name),
      rows: Number(count!.n),
      partitions: [...partitions],
    });
  }
  const sequenceNames = await db<{ name: string }[]>`
    select c.relname as name from pg_class c
    where c.relnamespace = current_schema()::regnamespace and c.relkind = 'S'
      and c.relname <> 'migrations_migration_id_seq'
    order by c.relname
  `;
  const sequences = [];
  for (const { name } of sequenceNames) {
    const [s] = await db.unsafe<{ last_value: string; is_called: boolean }[]>(
      `select last_value::text, is_called from ${ident(name)}`,
    );
    sequences.push({ name, lastValue: s!.last_value, isCalled: s!.is_called });
  }
  return {
    format: DUMP_FORMAT,
    version: DUMP_VERSION,
    createdAt: new Date().toISOString(),
    source,
    serverVersion: version!.v,
    migrations: [...migrations],
    feedPositionBound: bound,
    tables,
    sequences,
  };
}

/**
 * The tables in an order where each comes after every table it refers to (its foreign keys),
 * alphabetical among equals. A reference to itself or a cycle (the schema has none) would leave
 * tables out: that is an error rather than a backup that cannot be restored.
 */
export function dependencyOrder(
  names: readonly string[],
  references: readonly { child: string; parent: string }[],
): string[] {
  const wanted = new Set(names);
  const parents = new Map(names.map((n) => [n, new Set<string>()]));
  for (const r of references) {
    if (r.child !== r.parent && wanted.has(r.child) && wanted.has(r.parent)) {
      parents.get(r.child)!.add(r.parent);
    }
  }
  const done: string[] = [];
  const placed = new Set<string>();
  while (done.length < names.length) {
    const next = [...names].sort().find((n) =>
      !placed.has(n) && [...parents.get(n)!].every((p) => placed.has(p))
    );
    if (next === undefined) {
      throw new Error(
        `tables refer to each other in a cycle: ${names.filter((n) => !placed.has(n))}`,
      );
    }
    done.push(next);
    placed.add(next);
  }
  return done;
}

/** A name as an SQL identifier, quoted. */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
