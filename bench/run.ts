// deno task bench [-- --seconds N] [--only sdk,retention] [--feed-rows N] [--retention-rows N]:
// every benchmark, each as a ratio against a baseline measured in the same run. Needs wrk
// (Debian package `wrk`) and a PostgreSQL (BENCH_DATABASE_URL, DATABASE_URL, or
// postgres://postgres@127.0.0.1:5432/postgres).
import { parseArgs } from "node:util";
import { accessBenchmarks } from "./access.ts";
import { benchDatabase } from "./lib.ts";
import { deliveryBenchmarks } from "./delivery.ts";
import { feedBenchmarks } from "./feed.ts";
import { graphqlBenchmarks } from "./graphql.ts";
import { liveBenchmarks } from "./live.ts";
import { retentionBenchmarks } from "./retention.ts";
import { type Row, sdkBenchmarks } from "./sdk.ts";

const argv = Deno.args[0] === "--" ? Deno.args.slice(1) : Deno.args;
const { values } = parseArgs({
  args: argv,
  options: {
    seconds: { type: "string", default: "5" },
    only: { type: "string" },
    "feed-rows": { type: "string", default: "2000000" },
    "retention-rows": { type: "string", default: "1000000" },
  },
});
const seconds = Number(values.seconds);

// deno-lint-ignore no-console
const print = (s: string) => console.log(s);

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
};

const rows: Row[] = [];
for (const [name, run] of Object.entries(suites)) {
  if (values.only && !values.only.split(",").includes(name)) continue;
  const db = await benchDatabase();
  try {
    rows.push(...await run(db));
  } finally {
    await db.close();
  }
}

print("\n| benchmark | figure | target | met |\n|---|---|---|---|");
for (const r of rows) print(`| ${r.name} | ${r.figure} | ${r.target} | ${r.pass ? "yes" : "no"} |`);
