// Loading what db/backup/dump.ts read into an empty database, in one transaction (the caller's):
// a load that is interrupted, or fails, leaves the database as empty as it was, so running it
// again is safe. Rows go in by json_populate_recordset, in batches of about a megabyte of JSON,
// with their identity values (OVERRIDING SYSTEM VALUE); the partitions of the source are made
// first, so every row lands in its own day or month, and the sequences are set last.
import type { Db, Sql } from "../connect.ts";
import { type DumpHeader, type DumpTable, ident } from "./dump.ts";

/** JSON text per INSERT: big enough to amortise a round trip, small enough for PGlite's memory. */
const BATCH_BYTES = 1024 * 1024;

export class LoadError extends Error {
  override name = "LoadError";
}

/** The tables kept by a dump that hold any row: a load needs them all empty. */
export async function nonEmptyTables(db: Db, tables: readonly string[]): Promise<string[]> {
  const full: string[] = [];
  for (const name of tables) {
    const exists = await db<{ found: boolean }[]>`
      select to_regclass(${name}) is not null as found
    `;
    if (!exists[0]!.found) continue;
    const [row] = await (db as Sql).unsafe<{ any: boolean }[]>(
      `select exists (select from ${ident(name)}) as any`,
    );
    if (row!.any) full.push(name);
  }
  return full;
}

/**
 * A loader into `tx` (a transaction) for the dump whose header is `header`. Its tables must
 * exist (migrated to the dump's migrations) and be empty. `rows` takes a dump's rows table by
 * table, in the header's order; `finish` checks every table got all its rows and sets the
 * sequences.
 */
export function loader(tx: Db, header: DumpHeader) {
  const sql = tx as Sql;
  const loaded = new Map<string, number>();
  const prepared = new Set<string>();
  let pending: { table: DumpTable; lines: string[]; bytes: number } | null = null;

  async function prepare(table: DumpTable): Promise<void> {
    if (prepared.has(table.name)) return;
    prepared.add(table.name);
    const existing = new Set(
      (await sql<{ name: string }[]>`
        select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = ${table.name}::regclass
      `).map((p) => p.name),
    );
    for (const p of table.partitions) {
      if (existing.has(p.name)) continue;
      await sql.unsafe(
        `create table ${ident(p.name)} partition of ${ident(table.name)} ${p.bound}`,
      );
    }
  }

  async function flush(): Promise<void> {
    if (!pending || pending.lines.length === 0) return;
    const { table, lines } = pending;
    pending = null;
    const columns = table.columns.map(ident).join(", ");
    await sql.unsafe(
      `insert into ${ident(table.name)} (${columns}) overriding system value
       select ${columns} from json_populate_recordset(null::${
        ident(table.name)
      }, ($1::text)::json)`,
      [`[${lines.join(",")}]`],
    );
    loaded.set(table.name, (loaded.get(table.name) ?? 0) + lines.length);
  }

  return {
    async rows(table: DumpTable, lines: readonly string[]): Promise<void> {
      if (pending && pending.table.name !== table.name) await flush();
      await prepare(table);
      for (const line of lines) {
        pending ??= { table, lines: [], bytes: 0 };
        pending.lines.push(line);
        pending.bytes += line.length;
        if (pending.bytes >= BATCH_BYTES) await flush();
      }
    },
    async finish(): Promise<void> {
      await flush();
      for (const table of header.tables) {
        await prepare(table);
        const got = loaded.get(table.name) ?? 0;
        if (got !== table.rows) {
          throw new LoadError(`${table.name}: ${got} rows loaded, the backup holds ${table.rows}`);
        }
      }
      for (const s of header.sequences) {
        if (!/^-?[0-9]+$/.test(s.lastValue)) throw new LoadError(`sequence ${s.name}: bad value`);
        await sql`select setval(${s.name}::regclass, ${s.lastValue}::bigint, ${s.isCalled})`;
      }
    },
  };
}
