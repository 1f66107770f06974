// deno run -A bench/feed_cpu.ts [--seconds N] [--rounds N]: CPU time per 1000-event feed page,
// the service's (GET event_stream with a feed token) against the bare handler's (one query, no
// auth), in alternating wrk rounds at -c8: this process's CPU (the JavaScript, its GC and I/O)
// and PostgreSQL's (the backends of each side's own pool, read from /proc). On a shared machine
// the load moves pages/s a lot and CPU per page little.
// deno-lint-ignore-file no-console
import process from "node:process";
import { parseArgs } from "node:util";
import { CLI_AUDIT } from "../services/access/audit.ts";
import { connect, type Sql } from "../db/connect.ts";
import { createProject } from "../services/projects/projects.ts";
import { createFeedToken } from "../services/feed/tokens.ts";
import { encodeCursor } from "../services/feed/cursor.ts";
import { ensurePartitions } from "../services/maintenance/partitions.ts";
import { systemClock } from "../infra/clock.ts";
import { fillFeed } from "./feed.ts";
import {
  benchDatabase,
  CURSOR_SECRET,
  median,
  serveBareFeedPage,
  serveService,
  wrk,
} from "./lib.ts";

const { values } = parseArgs({
  args: Deno.args[0] === "--" ? Deno.args.slice(1) : Deno.args,
  options: {
    seconds: { type: "string", default: "3" },
    rounds: { type: "string", default: "4" },
    // "service" alone, for a CPU profile of it (--cpu-prof) without the bare handler's frames.
    sides: { type: "string", default: "bare,service" },
  },
});
const seconds = Number(values.seconds);
const db = await benchDatabase();
const { project } = await createProject(db.sql, { name: "f", enterprise: true }, CLI_AUDIT);
const envId = project.environments.production.project_id;
const tokens: string[] = [];
for (let i = 0; i < 64; i++) {
  tokens.push(
    (await createFeedToken(db.sql, systemClock, String(envId), `b${i}`, CLI_AUDIT)).value,
  );
}
await ensurePartitions(db.sql, "feed_events", new Date(), { behindDays: 7 });
await fillFeed(db, envId, project.id, { from: 0, n: 100_000, total: 100_000 });
const [env] = await db.sql<{ epoch: string }[]>`
  select (extract(epoch from capture_started_at) * 1000000)::bigint as epoch
  from environments where id = ${envId}`;
const [middle] = await db.sql<{ xid: string; seq: string }[]>`
  select xid::text, seq::text from feed_events where environment_id = ${envId}
  order by xid, seq offset 50000 limit 1`;
const cursor = encodeCursor(CURSOR_SECRET, {
  environmentId: envId,
  epoch: env!.epoch,
  eventTypes: [],
  ...middle!,
});
const rotate = `local tokens = {${tokens.map((t) => JSON.stringify(t)).join(",")}}\n` +
  `local i = 0\nrequest = function()\n  i = i + 1\n` +
  `  wrk.headers["Authorization"] = "Bearer " .. tokens[(i % #tokens) + 1]\n` +
  `  return wrk.format(nil)\nend\n`;

const pools: Record<string, Sql> = {
  service: connect(db.url, 10, { application_name: "cpu-service" }),
  bare: connect(db.url, 10, { application_name: "cpu-bare" }),
};
const service = serveService(pools.service!);
const bare = serveBareFeedPage(pools.bare!, envId);
const urls: Record<string, string> = {
  service: `${service.url}/api/v1/projects/${envId}/event_stream?limit=1000&after=${
    encodeURIComponent(cursor)
  }`,
  bare: `${bare.url}/?xid=${middle!.xid}&seq=${middle!.seq}`,
};
const tick = 100; // USER_HZ
const pgCpu = async (side: string) => {
  const pids = await db.sql<{ pid: number }[]>`
    select pid from pg_stat_activity where application_name = ${`cpu-${side}`}`;
  let ms = 0;
  for (const { pid } of pids) {
    try {
      const f = (await Deno.readTextFile(`/proc/${pid}/stat`)).split(") ")[1]!.split(" ");
      ms += (Number(f[11]) + Number(f[12])) * 1000 / tick;
    } catch { /* ended */ }
  }
  return ms;
};
const jsCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const out: Record<string, { js: number[]; pg: number[]; rps: number[] }> = {};
for (let round = -1; round < Number(values.rounds); round++) {
  for (const side of values.sides.split(",")) {
    const pg0 = await pgCpu(side);
    const js0 = jsCpu();
    const r = await wrk(urls[side]!, {
      connections: 8,
      seconds: round < 0 ? 1 : seconds,
      ...(side === "service" ? { lua: rotate } : {}),
    });
    const js = jsCpu() - js0;
    const pg = (await pgCpu(side)) - pg0;
    if (r.problems.length) console.log(side, r.problems);
    if (round < 0) continue; // warm-up: statements prepared, connections open
    const o = out[side] ??= { js: [], pg: [], rps: [] };
    o.js.push(js / r.requests);
    o.pg.push(pg / r.requests);
    o.rps.push(r.rps);
    console.log(
      `${side}: ${r.rps.toFixed(1)} pages/s, JS CPU ${(js / r.requests).toFixed(2)} ms/page, ` +
        `PostgreSQL CPU ${(pg / r.requests).toFixed(2)} ms/page`,
    );
  }
}
const m = (side: string, k: "js" | "pg" | "rps") => median(out[side]?.[k] ?? [NaN]);
console.log(
  `median: service JS ${m("service", "js").toFixed(2)} ms, PG ${
    m("service", "pg").toFixed(2)
  } ms; ` +
    `bare JS ${m("bare", "js").toFixed(2)} ms, PG ${m("bare", "pg").toFixed(2)} ms; ` +
    `pages/s ratio ${(m("service", "rps") / m("bare", "rps")).toFixed(2)}`,
);
await service.close();
await bare.close();
await Promise.all(Object.values(pools).map((p) => p.end({ timeout: 5 })));
await db.close();
