// Each link's views per UTC day (services/analytics/link_days.ts): the funnel reads a link's views
// from its days, its rollup rows not merged yet and the range's edge hours, and must answer what
// a count over the stored history answers, in any zone, before and after the merge, with late
// views arriving into hours already merged; through one link's funnel (REST), the top links
// (REST) and a page of links (GraphQL's Link.funnel).
import assert from "node:assert/strict";
import { rangesOfWholeHours } from "./helpers/ranges.ts";
import { ManualClock, silentLogger } from "./helpers/clock.ts";
import { maintainRollups } from "../services/maintenance/jobs.ts";
import { mergeRollups } from "../services/analytics/rollups.ts";
import { seededRandom } from "../services/links/bayes.ts";
import { generateLink } from "./helpers/sdk.ts";
import { gql, type Json } from "./helpers/graphql.ts";
import { insertInstall } from "./helpers/installs.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const NOW = "2026-06-20T12:00:00.000Z";
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const clock = new ManualClock(NOW);
const srv = await startTestServer({ clock });
Deno.test.afterAll(() => srv.close());

const p = await createProject(srv.url);
const env = p.productionId;
const paths: string[] = [];
for (let i = 0; i < 3; i++) paths.push(await generateLink(srv.url, p.key, "production"));
const linkIds = new Map((await srv.sql<{ id: number; path: string }[]>`
  select id, path from links where environment_id = ${env}`).map((r) => [r.path, r.id]));

/**
 * `n` views through the link host over the `days` days before NOW (link i twice as often as
 * link i + 1), each at its moment on the clock; a few at the same second.
 */
async function sendViews(random: () => number, n: number, days: number) {
  for (let i = 0; i < n; i++) {
    const at = Date.parse(NOW) - Math.floor(random() * days * DAY);
    const r = random();
    const path = paths[r < 4 / 7 ? 0 : r < 6 / 7 ? 1 : 2]!;
    clock.set(new Date(at).toISOString());
    for (let k = random() < 0.1 ? 3 : 1; k > 0; k--) {
      const res = await call(srv.url, "GET", `/${path}`, {
        headers: { "User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)" },
      });
      assert.ok(res.status === 200 || res.status === 302, res.text);
    }
  }
  await srv.views.flush();
  clock.set(NOW);
}

// An install on every link every two hours of the 16 days before NOW: each is among the top links
// of every range below.
for (let at = Date.parse(NOW) - 16 * DAY; at < Date.parse(NOW); at += 2 * HOUR) {
  for (const id of linkIds.values()) await insertInstall(srv.sql, env, new Date(at), id, 60);
}

/** Each link's views of [from, to), counted over the stored history. */
async function fromHistory(from: Date, to: Date): Promise<Map<string, number>> {
  const rows = await srv.sql<{ path: string; views: number }[]>`
    select l.path, count(e.link_id)::int as views
    from links l left join analytics_events e on e.link_id = l.id and e.type = 'view'
      and e.environment_id = ${env} and e.occurred_at >= ${from} and e.occurred_at < ${to}
    where l.environment_id = ${env}
    group by l.path`;
  return new Map(rows.map((r) => [r.path, r.views]));
}

async function rest(params: Record<string, string>): Promise<Json> {
  const qs = new URLSearchParams(params);
  const res = await call<Json>(srv.url, "GET", `/api/v1/projects/${env}/analytics/funnel?${qs}`, {
    headers: adminHeaders,
  });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** Each link's views as the three readers answer them. */
async function answered(from: Date, to: Date, tz: string) {
  const range = { from: from.toISOString(), to: to.toISOString(), tz };
  const one = new Map<string, number>();
  for (const path of paths) one.set(path, (await rest({ ...range, link: path })).totals.views);
  const top = await rest({ ...range, group_by: "link" });
  // The route widens to whole hours of the zone: these already are, in every zone used here.
  assert.equal(Date.parse(top.from), from.getTime(), top.from);
  const grouped = new Map<string, number>(
    top.groups.map((g: Json) => [g.key, g.totals.views] as [string, number]),
  );
  const page = await gql(
    srv.url,
    `query($id: ID!, $from: DateTime, $to: DateTime, $tz: String) {
      environment(projectId: $id) { links(first: 10) { edges { node {
        path funnel(from: $from, to: $to, tz: $tz) { totals { views } }
      } } } } }`,
    { headers: adminHeaders, variables: { id: env, ...range } },
  );
  assert.equal(page.errors, undefined, JSON.stringify(page.errors));
  const graphql = new Map<string, number>(
    page.data.environment.links.edges.map((
      e: Json,
    ) => [e.node.path, e.node.funnel.totals.views] as [string, number]),
  );
  return { one, grouped, graphql };
}

async function assertMatchesHistory(random: () => number, stage: string) {
  let seen = 0;
  for (const [from, to, tz] of rangesOfWholeHours(NOW, random)) {
    const expected = await fromHistory(from, to);
    const got = await answered(from, to, tz);
    const label = `${stage}: ${from.toISOString()} to ${to.toISOString()} (${tz})`;
    for (const path of paths) {
      assert.equal(got.one.get(path), expected.get(path), `${label}, link= ${path}`);
      assert.equal(got.grouped.get(path), expected.get(path), `${label}, group_by ${path}`);
      assert.equal(got.graphql.get(path), expected.get(path), `${label}, GraphQL ${path}`);
      seen += expected.get(path)!;
    }
  }
  assert.ok(seen > 0, `${stage}: no range held a view`);
}

async function storedDays(): Promise<number> {
  const [row] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from analytics_link_days where environment_id = ${env}`;
  return row!.n;
}

Deno.test("link days: the funnel's views of each link equal the history's, merged or not", async () => {
  const random = seededRandom(33);
  await sendViews(random, 300, 14);
  assert.equal(await storedDays(), 0, "nothing is merged yet");
  await assertMatchesHistory(random, "not merged");

  // Every hour before NOW's merged: the days hold those views, the current hour's stay apart.
  const merged = await mergeRollups(srv.sql, new Date(Math.floor(Date.parse(NOW) / HOUR) * HOUR));
  assert.ok(merged.rows > 0, "nothing was merged");
  assert.ok(await storedDays() > 0, "no link has a day");
  await assertMatchesHistory(random, "merged");

  // Late views, into hours already merged: rows of their own beside the merged ones until the
  // next merge adds them to their days.
  await sendViews(random, 120, 14);
  await assertMatchesHistory(random, "late");
  await maintainRollups({ sql: srv.sql, clock, logger: silentLogger });
  const [unmerged] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from analytics_rollups
    where environment_id = ${env} and not merged and hour < date_trunc('hour', ${NOW}::timestamptz)`;
  assert.equal(unmerged!.n, 0);
  await assertMatchesHistory(random, "merged again");

  // Each link's days sum its views once.
  const [sums] = await srv.sql<{ days: number; views: number }[]>`
    select (select sum(views)::int from analytics_link_days where environment_id = ${env}) as days,
      (select count(*)::int from analytics_events where environment_id = ${env} and type = 'view'
        and occurred_at < date_trunc('hour', ${NOW}::timestamptz)) as views`;
  assert.equal(sums!.days, sums!.views);
});
