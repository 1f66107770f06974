// The production logger against a pipe that a reader drains, as a process manager or a log
// collector reads stdout: a write per line (the logger before batching) against the batched
// writer the service uses (infra/log.ts), in CPU time per line of the same real log line.
import process from "node:process";
import { batchedLines, createLogger, writeAllSync } from "../infra/log.ts";
import { report, type Row } from "./rows.ts";

let pipe: Deno.FsFile | undefined;

/**
 * A FIFO drained by `cat > /dev/null`, opened for writing once per bench process. Every service
 * the bench serves logs into it, so the figures include what logging costs in production.
 */
export function drainedPipe(): Deno.FsFile {
  if (pipe) return pipe;
  const dir = Deno.makeTempDirSync({ prefix: "bench_log_" });
  const fifo = `${dir}/stdout`;
  const made = new Deno.Command("mkfifo", { args: [fifo] }).outputSync();
  if (!made.success) throw new Error(`mkfifo failed: ${new TextDecoder().decode(made.stderr)}`);
  // Unreferenced: the reader never keeps the bench process alive; it ends with the pipe.
  new Deno.Command("sh", { args: ["-c", `cat "$0" > /dev/null`, fifo] }).spawn().unref();
  // Blocks until cat has opened the other end.
  pipe = Deno.openSync(fifo, { write: true });
  return pipe;
}

/** The service's log writer: batched, into the drained pipe. */
export function benchLogWriter(): (line: string) => void {
  const out = drainedPipe();
  return batchedLines((bytes) => writeAllSync(out, bytes)).write;
}

const FIELDS = {
  request_id: "01JD7Z3J6X9QK2V8M4N5P6R7S8",
  method: "GET",
  path: "/api/v1/sdk/link/abcdEFGH12",
  status: 200,
  ms: 1.234,
};

/**
 * CPU microseconds per line through `write`, logging `perTurn` lines per turn of the event loop
 * (the wait between turns costs no CPU, so it does not count).
 */
async function cpuPerLine(write: (line: string) => void, seconds: number, perTurn: number) {
  const logger = createLogger("info", write);
  let lines = 0;
  const start = process.cpuUsage();
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    for (let i = 0; i < perTurn; i++) logger.info("request", FIELDS);
    lines += perTurn;
    await new Promise((r) => setTimeout(r, 0));
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / lines;
}

export async function loggingBenchmarks(seconds: number): Promise<Row[]> {
  const out = drainedPipe();
  const encoder = new TextEncoder();
  const perLine = (line: string) => writeAllSync(out, encoder.encode(line + "\n"));
  // 32 lines a turn: a server at -c32 answers about that many requests per turn.
  const single = await cpuPerLine(perLine, seconds, 32);
  const batched = await cpuPerLine(benchLogWriter(), seconds, 32);
  const problems = [single, batched].some((v) => !(v > 0)) ? ["no line was written"] : [];
  return [{
    name: "log lines into a drained pipe, 32 a turn: CPU per line, batched vs a write per line",
    figure: `${batched.toFixed(2)} µs vs ${single.toFixed(2)} µs = ${
      (batched / single).toFixed(2)
    }×`,
    target: "reported",
    outcome: report(problems),
  }];
}
