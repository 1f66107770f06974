// deno task backup -- FILE | deno task restore -- FILE | deno task move -- postgres://…
// (docs/operations.md, "Backup, restore and move"). One file format for both databases
// (db/backup/file.ts); a restore and a move load everything in one transaction of the target,
// migrations included, so an interrupted or failed one leaves it as empty as it found it.
import { fail, toolConfig } from "./open.ts";
import { connect, type Sql } from "../db/connect.ts";
import { dumpDatabase, type DumpHeader, type DumpSink } from "../db/backup/dump.ts";
import {
  BackupFileError,
  type BackupRecord,
  readBackupFile,
  writeBackupFile,
} from "../db/backup/file.ts";
import { loader, LoadError, nonEmptyTables } from "../db/backup/load.ts";
import { startEmbeddedPostgres } from "../db/embedded.ts";
import { migrateInTransaction, migrationList } from "../db/migrate.ts";
import { alignFeedPositions, feedPositionBound } from "../services/feed/positions.ts";
import { formatBytes, Progress } from "./progress.ts";

const USAGE = `usage:
  deno task backup -- FILE          write a consistent copy of the database to FILE
  deno task restore -- FILE         load FILE into the database, which must be empty
  deno task move -- postgres://…    copy the embedded database (DATA_DIR) into that PostgreSQL

The database is the server's: DATABASE_URL, or the embedded one in DATA_DIR. The embedded one
serves one process: stop the server first. A PostgreSQL may go on serving during a backup.`;

function say(message: string): void {
  Deno.stderr.writeSync(new TextEncoder().encode(message + "\n"));
}

class Interrupted extends Error {
  override name = "Interrupted";
}

/** A restore or move that cannot be done here, said before anything is written. */
class Refused extends Error {
  override name = "Refused";
}

// Ctrl-C (or SIGTERM) stops at the next batch: a backup removes its partial file, a restore
// rolls its transaction back; either can then simply be run again. A second one a second or
// more later stops at once (`deno task` passes a terminal's Ctrl-C on to the process it runs,
// which the terminal has sent it too: one press arrives twice): the partial file is removed,
// and the database drops the restore's transaction with its connection.
let interrupted = 0;
let partialFile: string | null = null;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => {
    if (interrupted && performance.now() - interrupted > 1000) {
      if (partialFile) {
        try {
          Deno.removeSync(partialFile);
        } catch { /* not written yet, or gone */ }
      }
      say("stopped");
      Deno.exit(130);
    }
    if (interrupted) return;
    interrupted = performance.now();
    say("\ninterrupted: stopping at the next batch (again to stop at once)");
  });
}
function checkInterrupted(): void {
  if (interrupted) throw new Interrupted("interrupted");
}

interface Opened {
  sql: Sql;
  url: string;
  kind: "embedded" | "postgresql";
  close(): Promise<void>;
}

/** The embedded database in `dataDir`; `create`: made when there is none yet. */
async function openEmbedded(dataDir: string, create: boolean): Promise<Opened> {
  if (!create) {
    try {
      await Deno.stat(`${dataDir}/PG_VERSION`);
    } catch {
      fail(`there is no embedded database in DATA_DIR (${dataDir})`);
    }
  }
  const embedded = await startEmbeddedPostgres(dataDir).catch((err) => fail(err.message));
  const sql = connect(embedded.url, 1);
  return {
    sql,
    url: embedded.url,
    kind: "embedded",
    async close() {
      await sql.end({ timeout: 5 });
      await embedded.stop();
    },
  };
}

function openPostgres(url: string): Opened {
  const sql = connect(url, 1);
  return { sql, url, kind: "postgresql", close: () => sql.end({ timeout: 5 }) };
}

/** Reads `source` into `sink`, showing progress, stopping when interrupted. */
function dumpInto(source: Opened, sink: DumpSink, label: string) {
  let progress: Progress | null = null;
  let rows = 0;
  let bytes = 0;
  return {
    run: () =>
      dumpDatabase(source.sql, { source: source.kind, bound: feedPositionBound }, {
        async header(h) {
          progress = new Progress(label, h.tables.reduce((n, t) => n + t.rows, 0));
          progress.update(0, 0, true);
          await sink.header(h);
        },
        async rows(table, lines) {
          checkInterrupted();
          await sink.rows(table, lines);
          rows += lines.length;
          for (const l of lines) bytes += l.length + 1;
          progress!.update(rows, bytes);
        },
      }),
    done: () => progress?.done(rows, bytes),
  };
}

/**
 * What the target needs before it takes the backup's rows: its migrations up to the backup's
 * (`upTo`, or all of them when the backup is of this version). A backup of a newer version, or
 * of migrations this one does not have, cannot be restored here.
 */
function migrationPlan(header: DumpHeader): { upTo: number | undefined } {
  const ours = migrationList();
  const theirs = header.migrations;
  for (const [i, m] of theirs.entries()) {
    const mine = ours[i];
    if (!mine || mine.id !== m.id || mine.name !== m.name) {
      throw new Refused(
        `the backup was made by another version of the service (its migration ${m.id} ` +
          `"${m.name}" is not this version's): restore it with the version that made it`,
      );
    }
  }
  return { upTo: theirs.length === ours.length ? undefined : theirs.at(-1)?.id ?? 0 };
}

/**
 * Loads `records` (the header first) into `target` in one transaction: its migrations up to the
 * backup's, the rows, the rest of the migrations, then the feed's positions aligned.
 */
async function loadInto(
  target: Opened,
  header: DumpHeader,
  records: AsyncIterable<BackupRecord>,
  onRows: (rows: number) => void,
): Promise<{ rows: number; offset: string; raised: boolean }> {
  const plan = migrationPlan(header);
  return await target.sql.begin(async (tx) => {
    const [citus] = await tx<{ on: boolean }[]>`
      select exists (select from pg_extension where extname = 'citus') as on
    `;
    if (citus!.on) {
      throw new Refused("the target is a Citus cluster: restore and move need one PostgreSQL");
    }
    const full = await nonEmptyTables(tx, header.tables.map((t) => t.name));
    if (full.length > 0) {
      throw new Refused(
        `the target database is not empty (${full.slice(0, 5).join(", ")}${
          full.length > 5 ? ", …" : ""
        } hold rows): restore into a new database, or a new DATA_DIR`,
      );
    }
    await migrateInTransaction(tx, { upTo: plan.upTo });
    const load = loader(tx, header);
    let rows = 0;
    for await (const record of records) {
      checkInterrupted();
      if (record.kind !== "rows") continue;
      await load.rows(record.table, record.lines);
      rows += record.lines.length;
      onRows(rows);
    }
    await load.finish();
    if (plan.upTo !== undefined) await migrateInTransaction(tx);
    const aligned = await alignFeedPositions(tx, header.feedPositionBound);
    checkInterrupted();
    return { rows, ...aligned };
  });
}

async function backup(file: string): Promise<void> {
  const config = toolConfig();
  const source = config.databaseUrl
    ? openPostgres(config.databaseUrl)
    : await openEmbedded(config.dataDir, false);
  const started = performance.now();
  try {
    let dump: ReturnType<typeof dumpInto> | null = null;
    partialFile = `${file}.partial`;
    const written = await writeBackupFile(file, (sink) => {
      dump = dumpInto(source, sink, `backup ${file}`);
      return dump.run();
    });
    (dump as ReturnType<typeof dumpInto> | null)?.done();
    say(
      `backup written: ${file}, ${written.header.tables.length} tables, ${written.rows} rows, ` +
        `${formatBytes(written.fileBytes)} (${formatBytes(written.textBytes)} uncompressed), ` +
        `in ${seconds(started)}`,
    );
  } finally {
    await source.close();
  }
}

async function restore(file: string): Promise<void> {
  const config = toolConfig();
  let fileBytes = 0;
  const records = readBackupFile(file, (n) => (fileBytes = n));
  let first: IteratorResult<BackupRecord>;
  try {
    first = await records.next();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) fail(`${file}: no such file`);
    throw err;
  }
  if (first.done || first.value.kind !== "header") fail(`${file}: not a backup`);
  const header = first.value.header;
  const total = header.tables.reduce((n, t) => n + t.rows, 0);
  const target = config.databaseUrl
    ? openPostgres(config.databaseUrl)
    : await openEmbedded(config.dataDir, true);
  const started = performance.now();
  const progress = new Progress(`restore ${file}`, total);
  progress.update(0, fileBytes, true);
  let loaded = 0;
  try {
    const result = await loadInto(target, header, records, (rows) => {
      loaded = rows;
      progress.update(rows, fileBytes);
    });
    progress.done(result.rows, fileBytes);
    say(
      `restored: ${header.tables.length} tables, ${result.rows} rows into the ${target.kind} ` +
        `database, in ${seconds(started)}${feedNote(result)}`,
    );
  } catch (err) {
    progress.done(loaded, fileBytes);
    throw err;
  } finally {
    await target.close();
  }
}

async function move(targetUrl: string): Promise<void> {
  if (!/^postgres(ql)?:\/\//.test(targetUrl)) fail(`move: ${targetUrl} is not a postgres:// URL`);
  const config = toolConfig();
  const source = await openEmbedded(config.dataDir, false);
  const target = openPostgres(targetUrl);
  const started = performance.now();
  try {
    // The source's rows stream into the target's transaction as they are read.
    const queue = new RowQueue();
    let header: DumpHeader | null = null;
    const dump = dumpInto(source, {
      header: async (h) => {
        header = h;
        await queue.push({ kind: "header", header: h });
      },
      rows: (table, lines) => queue.push({ kind: "rows", table, lines }),
    }, `move to ${new URL(targetUrl).host}`);
    const reading = dump.run().then(
      () => queue.end(),
      (err) => {
        queue.fail(err);
        throw err;
      },
    );
    let result;
    try {
      const first = await queue.next();
      if (first.done || first.value.kind !== "header") throw new Error("no header read");
      result = await loadInto(target, header!, queue, () => {});
    } catch (err) {
      // The dump stops at its next batch too, and its snapshot is let go.
      queue.abort(err);
      await reading.catch(() => {});
      throw err;
    }
    await reading;
    dump.done();
    say(
      `moved: ${header!.tables.length} tables, ${result.rows} rows from ${config.dataDir} into ` +
        `${new URL(targetUrl).host}, in ${seconds(started)}${feedNote(result)}\n` +
        `Start the service with DATABASE_URL set to it (and ADMIN_TOKEN: the token the embedded ` +
        `database printed keeps working when you set it to that).`,
    );
  } finally {
    await target.close();
    await source.close();
  }
}

/**
 * Records handed from the dump (a producer) to the load (a consumer) one at a time: the dump
 * waits while the load takes the previous batch, so at most one batch is held in memory.
 */
class RowQueue implements AsyncIterable<BackupRecord> {
  #waiting: { record: BackupRecord; taken: () => void; refused: (e: unknown) => void } | null =
    null;
  #aborted: unknown = null;
  #reader: ((r: IteratorResult<BackupRecord>) => void) | null = null;
  #ended = false;
  #error: unknown = null;

  push(record: BackupRecord): Promise<void> {
    if (this.#aborted) return Promise.reject(this.#aborted);
    return new Promise((taken, refused) => {
      this.#waiting = { record, taken, refused };
      this.#wake();
    });
  }

  /** The consumer gave up: the producer's pushes fail from now on. */
  abort(err: unknown): void {
    this.#aborted = err;
    this.#waiting?.refused(err);
    this.#waiting = null;
  }

  end(): void {
    this.#ended = true;
    this.#wake();
  }

  fail(err: unknown): void {
    this.#error = err;
    this.#wake();
  }

  next(): Promise<IteratorResult<BackupRecord>> {
    if (this.#error) return Promise.reject(this.#error);
    return new Promise((resolve) => {
      this.#reader = resolve;
      this.#wake();
    });
  }

  #wake(): void {
    const reader = this.#reader;
    if (!reader) return;
    if (this.#waiting) {
      const { record, taken } = this.#waiting;
      this.#waiting = null;
      this.#reader = null;
      reader({ value: record, done: false });
      taken();
    } else if (this.#ended) {
      this.#reader = null;
      reader({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<BackupRecord> {
    return { next: () => this.next() };
  }
}

function feedNote(r: { offset: string; raised: boolean }): string {
  return r.raised
    ? `\nfeed positions: this database's transaction ids were behind the backup's; its feed ` +
      `positions now start after them (offset ${r.offset}), so saved cursors read on`
    : "";
}

function seconds(since: number): string {
  return `${((performance.now() - since) / 1000).toFixed(1)} s`;
}

// `deno task backup -- FILE` hands on the literal `--`.
const [command, ...rest] = Deno.args.filter((a) => a !== "--");
const argument = rest[0];
if (!command || !argument || rest.length > 1 || argument === "-h" || argument === "--help") {
  fail(USAGE);
}
try {
  if (command === "backup") await backup(argument);
  else if (command === "restore") await restore(argument);
  else if (command === "move") await move(argument);
  else fail(USAGE);
} catch (err) {
  if (err instanceof Interrupted) {
    fail(
      command === "backup"
        ? "interrupted: no backup written (run it again)"
        : "interrupted: nothing was loaded, the target is as it was (run it again)",
      130,
    );
  }
  if (err instanceof Refused) fail(err.message, 2);
  if (err instanceof BackupFileError) fail(`${argument}: ${err.message}`, 1);
  if (err instanceof LoadError) fail(`the backup does not load: ${err.message}`, 1);
  fail(`${command} failed: ${err instanceof Error ? err.message : err}`, 1);
}
Deno.exit(0);
