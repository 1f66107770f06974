// deno run -A bench/page_cpu.ts: PostgreSQL's CPU time per feed page (read from /proc for the
// backend, so a shared machine's load moves it little), with the page's statement planned at
// every call (custom plans, PostgreSQL's choice for it) and planned once (generic plans, as
// the feed and the deliverer run it), alternating, for pages of 1000 and 100 events.
// deno-lint-ignore-file no-console
import postgres from "postgres";
import { benchDatabase, median } from "./lib.ts";
import { CLI_AUDIT } from "../services/access/audit.ts";
import { createProject } from "../services/projects/projects.ts";
import { createFeedToken } from "../services/feed/tokens.ts";
import { selectEnvironmentPage } from "../services/feed/feed.ts";
import { ensurePartitions } from "../services/maintenance/partitions.ts";
import { systemClock } from "../infra/clock.ts";
import { fillFeed } from "./feed.ts";
const db = await benchDatabase();
const { project } = await createProject(db.sql, { name: "f", enterprise: true }, CLI_AUDIT);
const envId = project.environments.production.project_id;
await createFeedToken(db.sql, systemClock, String(envId), "b", CLI_AUDIT);
await ensurePartitions(db.sql, "feed_events", new Date(), { behindDays: 7 });
await fillFeed(db, envId, project.id, { from: 0, n: 200_000, total: 200_000 });
const tick = 100; // USER_HZ
const cpuOf = async (c: postgres.Sql) => {
  const [{ pid }] = await c<[{ pid: number }]>`select pg_backend_pid() as pid`;
  const f = (await Deno.readTextFile(`/proc/${pid}/stat`)).split(") ")[1]!.split(" ");
  return (Number(f[11]) + Number(f[12])) * 1000 / tick; // ms
};
const custom = postgres(db.url, { max: 1 });
const generic = postgres(db.url, {
  max: 1,
  // What planUnfilteredPageOnce sets (services/feed/feed.ts).
  connection: {
    plan_cache_mode: "force_generic_plan",
    enable_seqscan: "off",
    enable_bitmapscan: "off",
    enable_sort: "off",
  },
});
const out: Record<string, number[]> = {};
for (const limit of [1000, 100]) {
  const [last] = await db
    .sql`select xid::text, seq::text from feed_events order by xid desc, seq desc offset ${
    limit + 500
  } limit 1`;
  const q = { after: { xid: last!.xid, seq: last!.seq }, afterEpoch: null, eventTypes: [], limit };
  for (let round = 0; round < 4; round++) {
    for (const [name, c] of [["custom", custom], ["generic", generic]] as const) {
      const before = await cpuOf(c);
      const n = 300;
      const jsCpu0 = performance.now();
      for (let i = 0; i < n; i++) await selectEnvironmentPage(c, envId, q, new Date());
      const wall = performance.now() - jsCpu0;
      const used = (await cpuOf(c)) - before;
      (out[`${name} ${limit}`] ??= []).push(used / n);
      console.log(
        `${name} limit ${limit}: PostgreSQL CPU ${(used / n).toFixed(2)} ms per page, wall ${
          (wall / n).toFixed(2)
        } ms`,
      );
    }
  }
}
for (const [k, v] of Object.entries(out)) {
  console.log(
    k,
    "median",
    median(v).toFixed(2),
    "ms; range",
    Math.min(...v).toFixed(2),
    "-",
    Math.max(...v).toFixed(2),
  );
}
console.log("load", (await Deno.readTextFile("/proc/loadavg")).trim());
await custom.end();
await generic.end();
await db.close();
