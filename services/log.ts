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
  level: Level = "info",
  write: (line: string) => void = writeStdout,
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
function writeStdout(line: string) {
  Deno.stdout.writeSync(encoder.encode(line + "\n"));
}

/** What an unexpected error may put in a log: its kind and message, no bound parameters. */
export function describeError(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    return { error: err.name, message: err.message, stack: err.stack };
  }
  return { error: String(err) };
}
