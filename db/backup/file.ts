// The backup file: gzip-compressed lines of text, the same whichever database wrote it and
// whichever reads it.
//
//   #backup {header as JSON}        (db/backup/dump.ts DumpHeader)
//   #table <name>                    then one line per row: its row_to_json text
//   {"id":1,...}
//   …
//   #end {"rows": <all rows>}
//
// A row's JSON never starts with # and holds no raw line break, so each line is one thing. The
// file is written as FILE.partial and renamed to FILE once #end is written and flushed: a
// backup interrupted half-way leaves no FILE to mistake for a whole one, and the next run
// overwrites the partial one. A reader refuses a file without its #end line.
import type { DumpHeader, DumpSink, DumpTable } from "./dump.ts";

const HEADER = "#backup ";
const TABLE = "#table ";
const END = "#end ";

export class BackupFileError extends Error {
  override name = "BackupFileError";
}

export interface WrittenBackup {
  header: DumpHeader;
  rows: number;
  /** Bytes of text before compression, and of the file. */
  textBytes: number;
  fileBytes: number;
}

/**
 * Writes `path` from what `dump` sends to its sink, through FILE.partial. `onRows` is told the
 * rows and text bytes written so far (for progress).
 */
export async function writeBackupFile(
  path: string,
  dump: (sink: DumpSink) => Promise<DumpHeader>,
  onRows: (rows: number, textBytes: number, header: DumpHeader) => void = () => {},
): Promise<WrittenBackup> {
  const partial = `${path}.partial`;
  const file = await Deno.open(partial, { write: true, create: true, truncate: true });
  const gzip = new CompressionStream("gzip");
  const piped = gzip.readable.pipeTo(file.writable);
  const writer = gzip.writable.getWriter();
  const encoder = new TextEncoder();
  let textBytes = 0;
  let rows = 0;
  let current: string | null = null;
  let header: DumpHeader | null = null;
  const write = async (text: string) => {
    const bytes = encoder.encode(text);
    textBytes += bytes.length;
    await writer.ready;
    await writer.write(bytes);
  };
  try {
    header = await dump({
      async header(h) {
        header = h;
        await write(`${HEADER}${JSON.stringify(h)}\n`);
      },
      async rows(table: DumpTable, lines: string[]) {
        if (table.name !== current) {
          current = table.name;
          await write(`${TABLE}${table.name}\n`);
        }
        await write(lines.join("\n") + "\n");
        rows += lines.length;
        onRows(rows, textBytes, header!);
      },
    });
    await write(`${END}${JSON.stringify({ rows })}\n`);
    await writer.close();
    await piped;
  } catch (err) {
    await writer.abort(err).catch(() => {});
    await piped.catch(() => {});
    await Deno.remove(partial).catch(() => {});
    throw err;
  }
  await Deno.rename(partial, path);
  const fileBytes = (await Deno.stat(path)).size;
  return { header: header!, rows, textBytes, fileBytes };
}

export type BackupRecord =
  | { kind: "header"; header: DumpHeader }
  | { kind: "rows"; table: DumpTable; lines: string[] }
  | { kind: "end"; rows: number };

/** Lines handed on at a time. */
const BATCH_LINES = 2000;

/**
 * The records of the backup file at `path`, read as a stream. Throws BackupFileError for a file
 * that is not a backup, is cut short, or whose rows disagree with its header.
 */
export async function* readBackupFile(
  path: string,
  onBytes: (fileBytes: number) => void = () => {},
): AsyncGenerator<BackupRecord> {
  const file = await Deno.open(path, { read: true });
  let fileBytes = 0;
  const counted = file.readable.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        fileBytes += chunk.length;
        onBytes(fileBytes);
        controller.enqueue(chunk);
      },
    }),
  );
  let header: DumpHeader | null = null;
  let table: DumpTable | null = null;
  let batch: string[] = [];
  let rows = 0;
  let ended = false;
  try {
    const gunzip = new DecompressionStream("gzip") as unknown as TransformStream<
      Uint8Array,
      Uint8Array
    >;
    for await (const line of lines(counted.pipeThrough(gunzip))) {
      if (ended) throw new BackupFileError("there is more after its #end line");
      if (header === null) {
        if (!line.startsWith(HEADER)) {
          throw new BackupFileError("it is not a backup of this service");
        }
        header = parseHeader(line.slice(HEADER.length));
        yield { kind: "header", header };
      } else if (line.startsWith(TABLE)) {
        if (table && batch.length > 0) yield { kind: "rows", table, lines: batch };
        batch = [];
        const name = line.slice(TABLE.length);
        table = header.tables.find((t) => t.name === name) ?? null;
        if (!table) throw new BackupFileError(`table ${name} is not in its header`);
      } else if (line.startsWith(END)) {
        if (table && batch.length > 0) yield { kind: "rows", table, lines: batch };
        batch = [];
        const end = JSON.parse(line.slice(END.length)) as { rows: number };
        if (end.rows !== rows) {
          throw new BackupFileError(`${rows} rows read, its #end line says ${end.rows}`);
        }
        ended = true;
        yield { kind: "end", rows };
      } else {
        if (!table || !line.startsWith("{")) throw new BackupFileError("a line is not a row");
        batch.push(line);
        rows++;
        if (batch.length >= BATCH_LINES) {
          yield { kind: "rows", table, lines: batch };
          batch = [];
        }
      }
    }
  } catch (err) {
    if (err instanceof BackupFileError) throw err;
    // A gzip stream cut short, or not gzip at all.
    throw new BackupFileError(`it cannot be read (${err instanceof Error ? err.message : err})`);
  }
  if (!ended) throw new BackupFileError("it ends before its #end line: a backup cut short");
}

function parseHeader(text: string): DumpHeader {
  let h: DumpHeader;
  try {
    h = JSON.parse(text);
  } catch {
    throw new BackupFileError("its header is not JSON");
  }
  if (h?.format !== "link-event-feed-backup" || !Array.isArray(h.tables)) {
    throw new BackupFileError("it is not a backup of this service");
  }
  if (h.version !== 1) throw new BackupFileError(`its format version ${h.version} is unknown here`);
  return h;
}

/** The lines of a byte stream of UTF-8 text (without their line breaks). */
async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let rest = "";
  const decoder = new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>;
  for await (const text of stream.pipeThrough(decoder)) {
    rest += text;
    let start = 0;
    for (let nl = rest.indexOf("\n"); nl !== -1; nl = rest.indexOf("\n", start)) {
      yield rest.slice(start, nl);
      start = nl + 1;
    }
    rest = rest.slice(start);
  }
  if (rest !== "") yield rest;
}
