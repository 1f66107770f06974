// deno task bench [-- --seconds N] [--only sdk,retention] [--feed-rows N] [--retention-rows N]
// [--analytics-events N] [--memory-minutes N]:
// every benchmark, each as a ratio against a baseline measured in the same run. Needs wrk
// (Debian package `wrk`) and a PostgreSQL (BENCH_DATABASE_URL, DATABASE_URL, or
// postgres://postgres@127.0.0.1:5432/postgres). Exits 1 if a row's measurement is invalid (a
// scenario failed, a timeout, an unexpected answer, missing data), else 2 if a target was
// missed, else 0 (bench/rows.ts). BENCH_KEEP_DATABASE=1 keeps each scenario's database (its
// name is printed) to inspect afterwards; drop it by hand. BENCH_REUSE_DATABASE=<that name> with
// `--only analytics` times its 10M events again without seeding them anew (half an hour).
import { parseArgs } from "node:util";
import { accessBenchmarks } from "./access.ts";
import { analyticsBenchmarks } from "./analytics.ts";
import { attributionBenchmarks } from "./attribution.ts";
import { benchDatabase } from "./lib.ts";
import { deliveryBenchmarks } from "./delivery.ts";
import { feedBenchmarks } from "./feed.ts";
import { graphqlBenchmarks } from "./graphql.ts";
import { liveBenchmarks } from "./live.ts";
import { linkListBenchmarks } from "./links.ts";
import { loggingBenchmarks } from "./logging.ts";
import { mcpBenchmarks } from "./mcp.ts";
import { memoryBenchmarks } from "./memory.ts";
import { retentionBenchmarks } from "./retention.ts";
import { rulesBenchmarks } from "./rules.ts";
import { exitStatus, failedScenario, renderTable, type Row } from "./rows.ts";
import { sdkBenchmarks } from "./sdk.ts";

const argv = Deno.args[0] === "--" ? Deno.args.slice(1) : Deno.args;
const { values } = parseArgs({
  args: argv,
  options: {
    seconds: { type: "string", default: "5" },
    only: { type: "string" },
    "feed-rows": { type: "string", default: "2000000" },
    "retention-rows": { type: "string", default: "1000000" },
    "analytics-events": { type: "string", default: "10000000" },
    "memory-minutes": { type: "string", default: "10" },
    help: { type: "boolean" },
  },
});
const seconds = Number(values.seconds);

// deno-lint-ignore no-console
const print = (s: string) => console.log(s);

if (values.help) {
  print(
    "deno task bench [-- --seconds N]\n" +
      "  [--only sdk,feed,graphql,delivery,live,retention,links,rules,mcp,analytics,attribution,memory]\n" +
      "  [--feed-rows N] [--retention-rows N] [--analytics-events N] [--memory-minutes N]\n" +
      "Exit status: 1 if a row is invalid, else 2 if a target was missed, else 0.",
  );
  Deno.exit(0);
}

try {
  await new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" }).output();
} catch {
  print("wrk is not installed: apt-get install -y wrk");
  Deno.exit(1);
}

const suites: Record<string, (db: Awaited<ReturnType<typeof benchDatabase>>) => Promise<Row[]>> = {
  sdk: (db) => sdkBenchmarks(db, seconds),
  feed: (db) => feedBenchmarks(db, seconds, Number(values["feed-rows"])),
  graphql: (db) => graphqlBenchmarks(db, seconds),
  delivery: (db) => deliveryBenchmarks(db, seconds),
  live: (db) => liveBenchmarks(db, seconds),
  retention: (db) => retentionBenchmarks(db, Number(values["retention-rows"])),
  access: (db) => accessBenchmarks(db, seconds),
  links: (db) => linkListBenchmarks(db, seconds),
  rules: (db) => rulesBenchmarks(db, seconds),
  mcp: (db) => mcpBenchmarks(db, seconds),
  logging: () => loggingBenchmarks(seconds),
  analytics: (db) => analyticsBenchmarks(db, seconds, Number(values["analytics-events"])),
  attribution: (db) => attributionBenchmarks(db, seconds),
  // Its own processes and databases (bench/memory.ts): the shared one goes unused.
  memory: () => memoryBenchmarks(Number(values["memory-minutes"])),
};

const only = values.only?.split(",");
const unknown = only?.filter((name) => !(name in suites)) ?? [];
if (unknown.length > 0) {
  print(`unknown scenario ${unknown.join(", ")}: one of ${Object.keys(suites).join(", ")}`);
  Deno.exit(1);
}

const rows: Row[] = [];
for (const [name, run] of Object.entries(suites)) {
  if (only && !only.includes(name)) continue;
  // A scenario that throws is an invalid row; the others still run.
  try {
    const db = await benchDatabase();
    try {
      rows.push(...await run(db));
    } finally {
      await db.close();
    }
  } catch (error) {
    print(`${name} failed: ${error instanceof Error ? error.stack : error}`);
    rows.push(failedScenario(name, error));
  }
}

print(`\n${renderTable(rows)}`);
Deno.exit(exitStatus(rows));
