// The admin list of links over 100,000 links of one environment, ordered by views (the order
// that reads link_counters_views): the first page and a page 500 pages deep (its cursor found by
// walking there), each at one connection for latency, p50 under 20 ms. Over HTTP, through the
// real app and its admin token.
import type { Sql } from "../db/connect.ts";
import { CLI_AUDIT } from "../services/access/audit.ts";
import { createProject } from "../services/projects/projects.ts";
import { ADMIN_TOKEN, type BenchDatabase, fmt, serveService, wrk } from "./lib.ts";
import { judge, notFinite, type Row } from "./rows.ts";

const LINKS = 100_000;
const PAGE = 50;
const DEPTH = 500;
const TARGET_MS = 20;

/** LINKS links with random views (and some ties) in one environment; answers its id. */
async function seedLinks(sql: Sql): Promise<number> {
  const { project } = await createProject(
    sql,
    { name: "links bench", enterprise: true },
    CLI_AUDIT,
  );
  const envId = project.environments.production.project_id;
  await sql`
    with l as (
      insert into links (environment_id, project_id, path, title, tags, sdk_generated)
      select ${envId}, (select project_id from environments where id = ${envId}),
        'b' || g || substr(md5(g::text), 1, 6), 'Link ' || g, '["bench"]',
        g % 3 = 0
      from generate_series(1, ${LINKS}) g
      returning id
    )
    insert into link_counters (link_id, environment_id, total_views)
    select id, ${envId}, (random() * 50000)::int from l
  `;
  await sql`analyze`;
  return envId;
}

export async function linkListBenchmarks(db: BenchDatabase, seconds: number): Promise<Row[]> {
  const envId = await seedLinks(db.sql);
  const served = serveService(db.sql);
  const headers = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const base = `${served.url}/api/v1/projects/${envId}/links?order=-views&limit=${PAGE}`;
  try {
    let after: string | null = null;
    for (let page = 1; page < DEPTH; page++) {
      const res = await fetch(after ? `${base}&after=${after}` : base, { headers });
      const body = await res.json() as { next_after: string | null };
      after = body.next_after;
      if (!after) throw new Error(`the list ended at page ${page}`);
    }
    const rows: Row[] = [];
    for (
      const [name, url] of [
        ["list 100,000 links by views, first page (p50, -c1)", base],
        [`list 100,000 links by views, page ${DEPTH} (p50, -c1)`, `${base}&after=${after}`],
      ] as const
    ) {
      // Every answer must be a page of links, not an error that happens to be fast.
      const r = await wrk(url, {
        connections: 1,
        seconds,
        headers,
        expect: { status: 200, bodyPrefix: '{"links":[{' },
      });
      rows.push({
        name,
        figure: `${fmt(r.p50ms, 2)} ms (p99 ${fmt(r.p99ms, 2)} ms, ${fmt(r.rps, 0)} req/s)`,
        target: `p50 < ${TARGET_MS} ms`,
        outcome: judge(r.p50ms < TARGET_MS, [...r.problems, ...notFinite({ p50: r.p50ms })]),
      });
    }
    return rows;
  } finally {
    await served.close();
  }
}
