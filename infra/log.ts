// JSON lines on stdout. Callers pass fields, never secrets: no header values or bodies are logged.
// Fields are never named time, level or msg, the line's own keys.
type Level = "debug" | "info" | "warn" | "error";
const RANK: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(
  level: Level,
  write: (line: string) => void,
): Logger {
  // The line is joined as text rather than stringified from a merged copy of the fields: one
  // is written for every request, so its cost is on every hot path.
  const emit = (l: Level, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[l] < RANK[level]) return;
    const head = `{"time":"${isoNow()}","level":"${l}","msg":${JSON.stringify(msg)}`;
    const rest = fields ? JSON.stringify(fields) : "{}";
    write(rest.length > 2 ? `${head},${rest.slice(1)}` : `${head}}`);
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
  };
}

// The time as ISO 8601, formatted once a millisecond: busy, many lines share one, and
// formatting a Date costs more than the rest of the line.
let lastMs = -1;
let lastIso = "";
function isoNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}

const encoder = new TextEncoder();

/** Writes all of `bytes` to a file descriptor whose writeSync may take only part of them. */
export function writeAllSync(file: { writeSync(p: Uint8Array): number }, bytes: Uint8Array) {
  for (let off = 0; off < bytes.length;) off += file.writeSync(bytes.subarray(off));
}

export interface BatchedLines {
  /** Queues one line (its newline is added). */
  write(line: string): void;
  /** Writes what is queued now. */
  flush(): void;
}

/**
 * Log lines written in batches: the lines of one turn of the event loop go out in one write
 * when the turn ends (or as soon as 64 KiB are queued), not in a system call per line, which
 * cost more than building the line on every request. What a crash can lose: an uncaught error,
 * `Deno.exit` and a normal end write the queue first (installFlushOnExit); only a process killed
 * outright (SIGKILL, the OOM killer) loses the lines of the turn it was in, at most 64 KiB and
 * about a millisecond's worth. Writes stay synchronous, so a slow reader of the pipe slows the
 * process rather than letting lines pile up in memory.
 */
export function batchedLines(
  writeAll: (bytes: Uint8Array) => void,
  maxBytes = 64 * 1024,
): BatchedLines {
  let queued: string[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (queued.length === 0) return;
    const text = queued.join("");
    queued = [];
    size = 0;
    writeAll(encoder.encode(text));
  };
  return {
    write(line) {
      queued.push(line, "\n");
      size += line.length + 1;
      if (size >= maxBytes) flush();
      else if (timer === undefined) timer = setTimeout(flush, 0);
    },
    flush,
  };
}

/** The production logger's stdout. */
export const stdoutLines: BatchedLines = batchedLines((bytes) => writeAllSync(Deno.stdout, bytes));

/**
 * Writes the queue before the process ends: at `Deno.exit` and a normal end (unload), and on an
 * uncaught error or rejection, which end the process after their listeners ran.
 */
export function installFlushOnExit(lines: BatchedLines): void {
  for (const event of ["unload", "error", "unhandledrejection"]) {
    globalThis.addEventListener(event, () => lines.flush());
  }
}

/** What an unexpected error may put in a log: its kind and message, no bound parameters. */
export function describeError(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    return { error: err.name, message: err.message, stack: err.stack };
  }
  return { error: String(err) };
}
