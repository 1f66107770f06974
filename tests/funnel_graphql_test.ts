// The funnel in GraphQL (resolvers/funnel.ts): Environment.funnel answers as the REST route, and
// Link.funnel across a page of links costs the same statements for 5 links as for 40 (one
// statement for all of them), each link's figures its own. Statements are counted on the wire
// by postgres.js's `debug` hook on the app's pool.
import assert from "node:assert/strict";
import postgres from "postgres";
import { createLink } from "../services/links/links.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { gql, type Json } from "./helpers/graphql.ts";
import { adminHeaders, call, createProject, serveApp } from "./helpers/server.ts";
import { insertInstall } from "./helpers/installs.ts";

const db = await createTestDatabase();
const statements: string[] = [];
const sql = postgres(db.url, {
  max: db.embedded ? 1 : 4,
  onnotice: () => {},
  debug: (_connection, query) => statements.push(query),
});
const srv = serveApp(db, { sql });
Deno.test.afterAll(async () => {
  await srv.close();
  await sql.end({ timeout: 5 });
  await db.close();
});

const p = await createProject(srv.url);
const env = p.productionId;
const links: { id: number; path: string }[] = [];
for (let i = 0; i < 40; i++) {
  const row = await createLink(sql, env, { title: `L${i}` }, "api");
  links.push({ id: row.id, path: row.path });
}
// Link i: i installs a day ago (click to install 10·i and 10·i + 20 s, alternately), and for
// every third link a purchase of 100·i by user u(i mod 4).
const now = srv.clock.now();
const dayAgo = new Date(now.getTime() - 24 * 3_600_000);
const hour = new Date(Math.floor(dayAgo.getTime() / 3_600_000) * 3_600_000);
for (const [i, link] of links.entries()) {
  for (let k = 0; k < i; k++) {
    await insertInstall(sql, env, dayAgo, link.id, 10 * i + (k % 2) * 20);
  }
  if (i % 3 === 0) {
    await sql`insert into purchase_versions (environment_id, transaction_id, name, version,
        amount, link_id, hour, currency, converted, user_id)
      values (${env}, ${`t${i}`}, 'purchase', 1, ${100 * i}, ${link.id}, ${hour}, 'USD',
        ${100 * i}, ${`u${i % 4}`})`;
  }
}

async function rest(params: Record<string, string>): Promise<Json> {
  const res = await call(
    srv.url,
    "GET",
    `/api/v1/projects/${env}/analytics/funnel?${new URLSearchParams(params)}`,
    { headers: adminHeaders },
  );
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** REST's figures under GraphQL's names. */
function camel(f: Json): Json {
  return {
    views: f.views,
    installs: f.installs,
    purchasers: f.purchasers,
    purchases: f.purchases,
    revenue: f.revenue,
    installsPerView: f.installs_per_view,
    purchasersPerInstall: f.purchasers_per_install,
    purchasesPerPurchaser: f.purchases_per_purchaser,
    medianSecondsToInstall: f.median_seconds_to_install,
  };
}

const FIGURES = `views installs purchasers purchases revenue installsPerView
  purchasersPerInstall purchasesPerPurchaser medianSecondsToInstall`;

Deno.test("Environment.funnel answers as the REST route, top links included", async () => {
  const r = await gql(
    srv.url,
    `query($id: ID!) { environment(projectId: $id) {
      funnel(tz: "Europe/Berlin", groupByLink: true, limit: 5) {
        from to tz currency totals { ${FIGURES} } groups { key totals { ${FIGURES} } } }
      one: funnel(link: "${links[6]!.path}") { totals { ${FIGURES} } groups { key } }
    } }`,
    { headers: adminHeaders, variables: { id: env } },
  );
  assert.equal(r.errors, undefined, JSON.stringify(r.errors));
  const expected = await rest({ tz: "Europe/Berlin", group_by: "link", limit: "5" });
  const f = r.data.environment.funnel;
  assert.deepEqual(
    { from: f.from, to: f.to, tz: f.tz, currency: f.currency },
    { from: expected.from, to: expected.to, tz: expected.tz, currency: expected.currency },
  );
  assert.deepEqual(f.totals, camel(expected.totals));
  assert.deepEqual(
    f.groups,
    expected.groups.map((g: Json) => ({ key: g.key, totals: camel(g.totals) })),
  );
  // By revenue: links 39, 36, 33, 30, 27.
  assert.deepEqual(
    f.groups.map((g: Json) => g.key),
    [39, 36, 33, 30, 27].map((i) => links[i]!.path),
  );
  assert.deepEqual(f.totals.purchasers, 4);
  const one = r.data.environment.one;
  assert.deepEqual(one.totals, camel((await rest({ link: links[6]!.path })).totals));
  assert.equal(one.groups, null);
  assert.deepEqual(one.totals.medianSecondsToInstall, 70);
});

Deno.test("Environment.funnel: a bad argument is BAD_USER_INPUT naming it", async () => {
  for (const [args, field] of [["limit: 0", "limit"], ['tz: "Mars/Base"', "tz"]]) {
    const r = await gql(
      srv.url,
      `query($id: ID!) { environment(projectId: $id) { funnel(${args}) { tz } } }`,
      { headers: adminHeaders, variables: { id: env } },
    );
    assert.equal(r.errors?.[0].extensions.code, "BAD_USER_INPUT", JSON.stringify(r.errors));
    assert.ok(r.errors?.[0].message.startsWith(`${field}: `), r.errors?.[0].message);
  }
});

const PAGE = `query($id: ID!, $first: Int) { environment(projectId: $id) {
  links(first: $first, orderBy: { field: CREATED_AT, direction: ASC }) {
    edges { node { path funnel(tz: "UTC") { currency totals { ${FIGURES} } } } }
  }
} }`;

Deno.test("Link.funnel across a page: one statement for all its links, each link's own figures", async () => {
  const page = async (first: number) => {
    statements.length = 0;
    const value = await gql(srv.url, PAGE, {
      headers: adminHeaders,
      variables: { id: env, first },
    });
    return { value, statements: [...statements] };
  };
  await page(1); // once-a-process look-ups out of the way
  const small = await page(5);
  const large = await page(40);
  for (const { value } of [small, large]) assert.equal(value.errors, undefined);
  assert.deepEqual(small.statements.toSorted(), large.statements.toSorted());
  assert.equal(large.statements.filter((s) => /attributed_installs/.test(s)).length, 1);
  const edges = large.value.data.environment.links.edges as Json[];
  assert.equal(edges.length, 40);
  for (const [i, e] of edges.entries()) {
    assert.equal(e.node.path, links[i]!.path);
    assert.deepEqual(e.node.funnel.totals, camel((await rest({ link: links[i]!.path })).totals));
    assert.equal(e.node.funnel.totals.installs, i);
  }
});
