// deno task soak [-- --seconds 120 --kill-every 30 --node-stop-at S --node-down S]: the three-instance soak (soak/run.ts) on the
// local PostgreSQL (SOAK_DATABASE_URL, DATABASE_URL, or postgres://postgres@127.0.0.1:5432/postgres),
// in a database of its own that is dropped at the end. Prints the summary; exit status 1 when a
// check failed. The kill interval can also come from SOAK_KILL_EVERY (seconds).
import { parseArgs } from "node:util";
import { formatReport } from "./report.ts";
import { DEFAULT_OPTIONS, runSoak } from "./run.ts";

const argv = Deno.args[0] === "--" ? Deno.args.slice(1) : Deno.args;
const { values } = parseArgs({
  args: argv,
  options: {
    seconds: { type: "string", default: String(DEFAULT_OPTIONS.seconds) },
    "kill-every": {
      type: "string",
      default: Deno.env.get("SOAK_KILL_EVERY") ?? String(DEFAULT_OPTIONS.killEverySeconds),
    },
    "terminate-at": { type: "string" },
    drain: { type: "string", default: String(DEFAULT_OPTIONS.drainSeconds) },
    "rate-limit": { type: "string", default: String(DEFAULT_OPTIONS.feedRateLimit) },
    writers: { type: "string", default: String(DEFAULT_OPTIONS.writers) },
    // A database node stopped at --node-stop-at s and started --node-down s later, with the
    // shell commands SOAK_NODE_STOP and SOAK_NODE_START (on Citus: pg_ctl stop/start of a worker).
    "node-stop-at": { type: "string" },
    "node-down": { type: "string", default: "30" },
  },
});

function positive(name: string, value: string | undefined, min = 0): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) {
    // deno-lint-ignore no-console
    console.error(`--${name} must be a number ≥ ${min}`);
    Deno.exit(2);
  }
  return n;
}

function nodeFault() {
  const stop = Deno.env.get("SOAK_NODE_STOP");
  const start = Deno.env.get("SOAK_NODE_START");
  if (!stop || !start) {
    // deno-lint-ignore no-console
    console.error("--node-stop-at needs SOAK_NODE_STOP and SOAK_NODE_START (shell commands)");
    Deno.exit(2);
  }
  return {
    at: positive("node-stop-at", values["node-stop-at"]),
    downSeconds: positive("node-down", values["node-down"]),
    stop,
    start,
  };
}

// deno-lint-ignore no-console
const print = (s: string) => console.log(s);
// deno-lint-ignore no-console
const progress = (s: string) => console.error(s);

// Ctrl-C (or SIGTERM) stops the soak cleanly: its processes and database are not left behind.
const interrupt = new AbortController();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => interrupt.abort());
}

const report = await runSoak({
  ...DEFAULT_OPTIONS,
  seconds: positive("seconds", values.seconds, 10),
  killEverySeconds: positive("kill-every", values["kill-every"]),
  ...(values["terminate-at"] === undefined
    ? {}
    : { terminateAtSeconds: positive("terminate-at", values["terminate-at"]) }),
  drainSeconds: positive("drain", values.drain, 5),
  feedRateLimit: positive("rate-limit", values["rate-limit"], 1),
  writers: positive("writers", values.writers, 1),
  ...(values["node-stop-at"] === undefined ? {} : { nodeFault: nodeFault() }),
  databaseUrl: Deno.env.get("SOAK_DATABASE_URL") ?? Deno.env.get("DATABASE_URL") ??
    "postgres://postgres@127.0.0.1:5432/postgres",
  logDir: new URL("../test-output/soak", import.meta.url).pathname,
  progress,
  signal: interrupt.signal,
});
print(formatReport(report));
Deno.exit(report.ok ? 0 : 1);
