// deno run -A bench/feed_size.ts [--rows N] [--seconds S]: does a newest feed page get slower
// with more history? Two databases, one feed each, filled as bench/feed.ts fills them (100,000
// and --rows events, then VACUUM ANALYZE and CHECKPOINT): EXPLAIN (ANALYZE, BUFFERS) of each
// page's exact statement, its time through the pool, and the page over HTTP at -c1 against the
// bare baseline, in alternating rounds under the same load.
import { parseArgs } from "node:util";
import postgres from "postgres";
import { CLI_AUDIT } from "../services/access/audit.ts";
import { createProject } from "../services/projects/projects.ts";
import { createFeedToken } from "../services/feed/tokens.ts";
import { encodeCursor } from "../services/feed/cursor.ts";
import { selectEnvironmentPage } from "../services/feed/feed.ts";
import { ensurePartitions } from "../services/maintenance/partitions.ts";
import { systemClock } from "../infra/clock.ts";
import { fillFeed } from "./feed.ts";
import {
  type BenchDatabase,
  benchDatabase,
  CURSOR_SECRET,
  fmt,
  median,
  serveBareFeedPage,
  type Served,
  serveService,
  wrk,
} from "./lib.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rows: { type: "string", default: "1000000" },
    seconds: { type: "string", default: "3" },
    keep: { type: "boolean" },
  },
});
const total = Number(values.rows);
const seconds = Number(values.seconds);
// deno-lint-ignore no-console
const print = (s: string) => console.log(s);

interface Feed {
  db: BenchDatabase;
  envId: number;
  epoch: string;
  rotate: string;
  service: Served;
  baseline: Served;
  debugSql: postgres.Sql;
  captured: { q: string; p: unknown[] }[];
}

/** A database of its own holding one feed of `rows` events, its service and its baseline. */
async function feedOf(rows: number): Promise<Feed> {
  const db = await benchDatabase();
  const { sql } = db;
  const { project } = await createProject(sql, { name: "feed", enterprise: true }, CLI_AUDIT);
  const envId = project.environments.production.project_id;
  const tokens: string[] = [];
  for (let i = 0; i < 64; i++) {
    tokens.push((await createFeedToken(sql, systemClock, String(envId), `b${i}`, CLI_AUDIT)).value);
  }
  const rotate = `local tokens = {${tokens.map((t) => JSON.stringify(t)).join(",")}}\n` +
    `local i = 0\nrequest = function()\n  i = i + 1\n` +
    `  wrk.headers["Authorization"] = "Bearer " .. tokens[(i % #tokens) + 1]\n` +
    `  return wrk.format(nil)\nend\n`;
  await ensurePartitions(sql, "feed_events", new Date(), { behindDays: 7 });
  await fillFeed(db, envId, project.id, { from: 0, n: rows, total: rows });
  await sql`checkpoint`;
  const [env] = await sql<{ epoch: string }[]>`
    select (extract(epoch from capture_started_at) * 1000000)::bigint as epoch
    from environments where id = ${envId}`;
  const captured: { q: string; p: unknown[] }[] = [];
  const debugSql = postgres(db.url, {
    max: 1,
    debug: (_c, q, p) => captured.push({ q, p: p as unknown[] }),
  });
  const baseline = serveBareFeedPage(sql, envId);

  return {
    db,
    envId,
    epoch: env!.epoch,
    rotate,
    service: serveService(sql),
    baseline,
    debugSql,
    captured,
  };
}

/** The newest full page's place, and the page's statement explained. */
async function explain(f: Feed, label: string) {
  const { sql } = f.db;
  const [near] = await sql<{ xid: string; seq: string }[]>`
    select xid::text, seq::text from feed_events where environment_id = ${f.envId}
    order by xid desc, seq desc offset 1500 limit 1`;
  const point = near!;
  const query = { after: point, afterEpoch: f.epoch, eventTypes: [], limit: 1000 };
  f.captured.length = 0;
  await selectEnvironmentPage(f.debugSql, f.envId, query, new Date());
  const { q, p } = f.captured.at(-1)!;
  const [size] = await sql<{ heap: string; idx: string }[]>`
    select pg_size_pretty(sum(pg_relation_size(c.oid)) filter (where c.relkind = 'r')) as heap,
      pg_size_pretty(sum(pg_relation_size(c.oid)) filter (where c.relkind = 'i')) as idx
    from pg_inherits i join pg_class p on p.oid = i.inhparent
      join pg_class c on c.oid = i.inhrelid or c.oid in (
        select indexrelid from pg_index where indrelid = i.inhrelid)
    where p.relname = 'feed_events'`;
  print(`\n## ${label}: heap ${size!.heap}, indexes ${size!.idx}`);
  for (let i = 0; i < 3; i++) await f.debugSql.unsafe(q, p as never[]); // warm
  const plan = await f.debugSql.unsafe(`explain (analyze, buffers) ${q}`, p as never[]);
  print(plan.map((r) => r["QUERY PLAN"]).join("\n"));
  const ms: number[] = [];
  for (let i = 0; i < 100; i++) {
    const t = performance.now();
    await selectEnvironmentPage(sql, f.envId, query, new Date());
    ms.push(performance.now() - t);
  }
  print(`the page's statement through the pool, median of 100: ${fmt(median(ms), 2)} ms`);
  const cursor = encodeCursor(CURSOR_SECRET, {
    environmentId: f.envId,
    epoch: f.epoch,
    eventTypes: [],
    ...point,
  });
  return {
    service: `${f.service.url}/api/v1/projects/${f.envId}/event_stream?limit=1000&after=${
      encodeURIComponent(cursor)
    }`,
    baseline: `${f.baseline.url}/?xid=${point.xid}&seq=${point.seq}`,
  };
}

const feeds: Feed[] = [];
try {
  feeds.push(await feedOf(100_000), await feedOf(total));
  const [small, large] = feeds as [Feed, Feed];
  const smallUrls = await explain(small, "100,000 events");
  const largeUrls = await explain(large, `${total.toLocaleString("en")} events`);
  print(`\nload: ${(await Deno.readTextFile("/proc/loadavg")).trim()}`);
  // Alternating rounds: small and large, service and baseline, under the same load.
  const p50 = {
    small: [] as number[],
    large: [] as number[],
    smallBase: [] as number[],
    largeBase: [] as number[],
  };
  const c1 = { connections: 1, threads: 1, seconds };
  for (let round = 0; round < 4; round++) {
    p50.small.push((await wrk(smallUrls.service, { ...c1, lua: small.rotate })).p50ms);
    p50.large.push((await wrk(largeUrls.service, { ...c1, lua: large.rotate })).p50ms);
    p50.smallBase.push((await wrk(smallUrls.baseline, c1)).p50ms);
    p50.largeBase.push((await wrk(largeUrls.baseline, c1)).p50ms);
  }
  const show = (xs: number[]) => xs.map((x) => fmt(x, 2)).join("/");
  print(`HTTP p50 at -c1, 4 alternating rounds:`);
  print(
    `  service  100,000: ${show(p50.small)} ms; ${total.toLocaleString("en")}: ${
      show(p50.large)
    } ms`,
  );
  print(
    `  baseline 100,000: ${show(p50.smallBase)} ms; ${total.toLocaleString("en")}: ${
      show(p50.largeBase)
    } ms`,
  );
  print(
    `  ratio of medians: service ${fmt(median(p50.large) / median(p50.small), 2)}×, baseline ${
      fmt(median(p50.largeBase) / median(p50.smallBase), 2)
    }×; per round: ${p50.large.map((x, i) => fmt(x / p50.small[i]!, 2)).join("/")}`,
  );
  print(`load: ${(await Deno.readTextFile("/proc/loadavg")).trim()}`);
} finally {
  for (const f of feeds) {
    await f.service.close();
    await f.baseline.close();
    await f.debugSql.end();
    if (values.keep) print(`kept ${f.db.url}`);
    else await f.db.close();
  }
}
