// deno task citus [-- --tests a_test.ts,b_test.ts | --suite] [--bench sdk,feed] [--seconds N]
//   [--feed-rows N] [--single URL] [--fault]
//
// The service on a Citus cluster (docs/SCALING.md, "Running on Citus"). Needs a running cluster:
// CITUS_DATABASE_URL is its coordinator's URL (a database where `citus` is created and the
// workers are registered), or CITUS_CLUSTER names a script that `CITUS_CLUSTER start` starts one
// with, printing `DATABASE_URL=...` last. Then, with DATABASE_URL at the coordinator:
// - the given test files (default: the feed's, the migrations', partitions), or `--suite` every
//   test file but the browser ones, one after another; prints each file's result;
// - with --bench: `deno task bench --only ...` against the coordinator and, in the same run,
//   against a single PostgreSQL (--single, default postgres://postgres@127.0.0.1:5432/postgres),
//   with the CPU time each server process of each node used during each.
// - with --fault: bench/citus_fault.ts, a worker stopped and started under load (--seconds: the run's
//   length, 20 by default there).
// CI cannot build Citus and stays on the single PostgreSQL.
import { parseArgs } from "node:util";
import postgres from "postgres";

const argv = Deno.args[0] === "--" ? Deno.args.slice(1) : Deno.args;
const { values } = parseArgs({
  args: argv,
  options: {
    tests: { type: "string" },
    suite: { type: "boolean" },
    bench: { type: "string" },
    seconds: { type: "string", default: "3" },
    // A test file still running after this many seconds is stopped and counted as failed.
    timeout: { type: "string", default: "300" },
    "feed-rows": { type: "string", default: "100000" },
    fault: { type: "boolean" },
    single: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
  },
});

// deno-lint-ignore no-console
const print = (s: string) => console.log(s);

async function coordinatorUrl(): Promise<string> {
  const given = Deno.env.get("CITUS_DATABASE_URL");
  if (given) return given;
  const script = Deno.env.get("CITUS_CLUSTER");
  if (!script) {
    print(
      "set CITUS_DATABASE_URL (a running coordinator) or CITUS_CLUSTER (a script to start one)",
    );
    Deno.exit(1);
  }
  const out = await new Deno.Command(script, { args: ["start"], stderr: "inherit" }).output();
  const text = new TextDecoder().decode(out.stdout);
  const url = text.match(/DATABASE_URL=(\S+)/)?.[1];
  if (!out.success || !url) {
    print(`${script} start failed:\n${text}`);
    Deno.exit(1);
  }
  return url;
}

/** Each node's port, by role, as the coordinator lists them. */
async function nodes(url: string): Promise<{ role: string; port: number }[]> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ groupid: number; nodeport: number }[]>`
      select groupid, nodeport from pg_dist_node order by groupid
    `;
    const port = Number(new URL(url).port || 5432);
    const list = rows.map((r) => ({
      role: r.groupid === 0 ? "coordinator" : `worker ${r.groupid}`,
      port: r.nodeport,
    }));
    return list.some((n) => n.port === port) ? list : [{ role: "coordinator", port }, ...list];
  } finally {
    await sql.end();
  }
}

/**
 * CPU seconds used so far by the server processes of the PostgreSQL listening on `port` (the
 * postmaster, found by its -p argument, its live children and those it has reaped), from /proc.
 */
async function cpuSeconds(port: number): Promise<number> {
  const ticks = 100; // USER_HZ on Linux
  const stat = async (pid: string) => {
    try {
      const s = await Deno.readTextFile(`/proc/${pid}/stat`);
      const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
      // utime + stime, and cutime + cstime: the postmaster's reaped children (backends that
      // ended, every closed connection's) count there.
      const own = Number(f[11]) + Number(f[12]);
      const reaped = Number(f[13]) + Number(f[14]);
      return { ppid: f[1]!, cpu: (own + reaped) / ticks };
    } catch {
      return null;
    }
  };
  const pids: string[] = [];
  for (const e of Deno.readDirSync("/proc")) if (/^\d+$/.test(e.name)) pids.push(e.name);
  // The postmaster: started with -D, and -p PORT (or no -p for the default port 5432).
  let postmaster: string | null = null;
  for (const pid of pids.sort((a, b) => Number(a) - Number(b))) {
    try {
      const cmd = (await Deno.readTextFile(`/proc/${pid}/cmdline`)).split("\0");
      const i = cmd.indexOf("-p");
      const listens = i >= 0 ? cmd[i + 1] === String(port) : port === 5432;
      if (cmd[0]?.endsWith("/postgres") && cmd.includes("-D") && listens) {
        postmaster = pid;
        break;
      }
    } catch { /* gone */ }
  }
  if (!postmaster) return NaN;
  let total = 0;
  for (const pid of pids) {
    const s = await stat(pid);
    if (s && (pid === postmaster || s.ppid === postmaster)) total += s.cpu;
  }
  return total;
}

async function run(
  args: string[],
  env: Record<string, string>,
  timeoutSeconds?: number,
): Promise<boolean> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    env,
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const timer = timeoutSeconds === undefined ? undefined : setTimeout(() => {
    print(`timed out after ${timeoutSeconds} s: deno ${args.join(" ")}`);
    child.kill("SIGKILL");
  }, timeoutSeconds * 1000);
  const status = await child.status;
  clearTimeout(timer);
  return status.success;
}

const url = await coordinatorUrl();
const cluster = await nodes(url);
print(`coordinator ${url}: ${cluster.map((n) => `${n.role} :${n.port}`).join(", ")}`);

const testPerms = ["--allow-net", "--allow-env", "--allow-read", "--allow-write", "--allow-run"];
const defaultTests = [
  "tests/feed_concurrency_test.ts",
  "tests/feed_capture_test.ts",
  "tests/feed_read_test.ts",
  "tests/ingestion_test.ts",
  "tests/partitions_test.ts",
];
let files = values.tests?.split(",") ?? defaultTests;
if (values.suite) {
  files = [...Deno.readDirSync("tests")]
    .map((e) => `tests/${e.name}`)
    .filter((f) => f.endsWith("_test.ts") && !f.endsWith("_browser_test.ts"))
    .sort();
}
if (values.fault) {
  print("\n== a worker stopped and started mid-run (bench/citus_fault.ts)");
  await run([
    "run",
    // -A: it reads /proc to find the worker's server, and stops and starts it.
    "-A",
    "bench/citus_fault.ts",
    values.seconds === "3" ? "20" : values.seconds!,
  ], {
    CITUS_DATABASE_URL: url,
  });
}

if ((!values.bench && !values.fault) || values.tests || values.suite) {
  const results: [string, boolean, number][] = [];
  for (const file of files) {
    const started = performance.now();
    const ok = await run(
      ["test", "--config", "tests/deno.json", ...testPerms, file],
      { DATABASE_URL: url },
      Number(values.timeout),
    );
    results.push([file, ok, (performance.now() - started) / 1000]);
  }
  print("\ntest files on the Citus coordinator:");
  for (const [file, ok, s] of results) {
    print(`  ${ok ? "ok    " : "FAILED"} ${file} (${s.toFixed(0)} s)`);
  }
  print(`${results.filter((r) => r[1]).length} of ${results.length} files passed`);
}

if (values.bench) {
  const targets = [
    {
      name: "single PostgreSQL",
      url: values.single,
      nodes: [{ role: "server", port: Number(new URL(values.single).port || 5432) }],
    },
    { name: "Citus", url, nodes: cluster },
  ];
  for (const target of targets) {
    const before = await Promise.all(target.nodes.map((n) => cpuSeconds(n.port)));
    const started = performance.now();
    print(`\n== bench on ${target.name} (${target.url})`);
    await run(
      [
        "run",
        ...testPerms,
        "bench/run.ts",
        "--only",
        values.bench,
        "--seconds",
        values.seconds!,
        "--feed-rows",
        values["feed-rows"]!,
      ],
      { BENCH_DATABASE_URL: target.url, DATABASE_URL: target.url },
    );
    const after = await Promise.all(target.nodes.map((n) => cpuSeconds(n.port)));
    const wall = (performance.now() - started) / 1000;
    print(`CPU of each node during the ${wall.toFixed(0)} s of ${target.name}'s run:`);
    target.nodes.forEach((n, i) => {
      const used = after[i]! - before[i]!;
      print(
        `  ${n.role} :${n.port}: ${used.toFixed(1)} s (${
          (100 * used / wall).toFixed(0)
        }% of a core)`,
      );
    });
  }
}
