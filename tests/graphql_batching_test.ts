// Batching, counted on the wire: every statement the server sends to PostgreSQL is counted by
// postgres.js's own `debug` hook on the pool the app runs on. A links page with each link's
// metrics and 30-day series, and a feed page with each event's link, cost the same number of
// statements whatever the page's size; and nested lists are priced at the size they run with.
import assert from "node:assert/strict";
import postgres from "postgres";
import { createLink } from "../services/links/links.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { postForm } from "./helpers/dashboard.ts";
import { gql, type Json } from "./helpers/graphql.ts";
import { adminHeaders, call, createFeedToken, createProject, serveApp } from "./helpers/server.ts";

const db = await createTestDatabase();
const statements: string[] = [];
// The app's only pool (one connection on the embedded database, which serves one).
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

const DAY = 24 * 60 * 60 * 1000;

/** The statements `run` sends, and its answer. */
async function counted<T>(run: () => Promise<T>): Promise<{ value: T; statements: string[] }> {
  statements.length = 0;
  const value = await run();
  return { value, statements: [...statements] };
}

const p = await createProject(srv.url);
// Capture starts with the environment's first feed token.
const token = await createFeedToken(srv.url, p.productionId);
const paths: string[] = [];
for (let i = 0; i < 100; i++) {
  paths.push((await createLink(sql, p.productionId, { title: `L${i}` }, "api")).path);
}
// Events on every link over the last 30 days: installs on i-days-ago, an open on the first ten.
const now = srv.clock.now();
const events: Json[] = paths.flatMap((path, i) => [
  { type: "install", link_path: path, occurred_at: new Date(now.getTime() - (i % 30) * DAY) },
  ...(i < 10 ? [{ type: "open", link_path: path, occurred_at: now.toISOString() }] : []),
]);
const ingest = await call(srv.url, "POST", "/api/v1/sdk/events", {
  headers: { "PROJECT-KEY": p.key, "ENVIRONMENT": "production" },
  body: { events },
});
assert.equal(ingest.status, 202, ingest.text);

const LINKS_PAGE = `query($id: ID!, $first: Int) { environment(projectId: $id) {
  links(first: $first, orderBy: { field: CREATED_AT, direction: ASC }) {
    edges { node { path title state
      metrics { totalInstalls totalOpens link { path } }
      analytics(interval: DAY, metrics: [INSTALLS, OPENS]) { totals { installs opens }
        series { start installs } }
    } }
    pageInfo { hasNextPage endCursor }
  }
} }`;

Deno.test("a links page with each link's metrics and 30-day series: the same statements for 10 or 100 links", async () => {
  const page = async (first: number) =>
    await counted(() =>
      gql(srv.url, LINKS_PAGE, {
        headers: adminHeaders,
        variables: { id: p.productionId, first },
      })
    );
  await page(1); // once-a-process look-ups (array types, time zone names) out of the way
  const small = await page(10);
  const large = await page(100);
  for (const { value } of [small, large]) assert.equal(value.errors, undefined);
  const edges = large.value.data.environment.links.edges as Json[];
  assert.equal(edges.length, 100);
  assert.equal(small.value.data.environment.links.edges.length, 10);
  // The figures are each link's own.
  edges.forEach((e, i) => {
    assert.equal(e.node.path, paths[i]);
    assert.equal(e.node.metrics.totalInstalls, 1);
    assert.equal(e.node.metrics.totalOpens, i < 10 ? 1 : 0);
    assert.equal(e.node.metrics.link.path, paths[i]);
    assert.equal(e.node.analytics.totals.installs, 1);
    assert.equal(e.node.analytics.totals.opens, i < 10 ? 1 : 0);
    assert.equal(e.node.analytics.series.length, 31);
    assert.equal(e.node.analytics.series.reduce((n: number, s: Json) => n + s.installs, 0), 1);
  });
  // The same statements (their order varies: the page's loaders run side by side).
  assert.deepEqual(small.statements.toSorted(), large.statements.toSorted());
  // One statement for the metrics and one for the series of the whole page, and few in all:
  // the admin check, the environment, the list, the metrics, the page's links (for
  // LinkMetrics.link), the series (zone, range, figures, buckets), and their transactions.
  const matching = (re: RegExp) => large.statements.filter((s) => re.test(s)).length;
  assert.equal(matching(/from links l join link_counters c[\s\S]*any\(/), 1);
  assert.equal(matching(/analytics_rollups/), 1);
  assert.ok(large.statements.length <= 16, large.statements.join("\n---\n"));
});

Deno.test("under a member's dashboard session too: the role is read once a request, not once a link", async () => {
  const person = async (email: string, role: string) => {
    const made = await call(srv.url, "POST", "/api/v1/admin/accounts", {
      headers: adminHeaders,
      body: { email, name: email },
    });
    const id = made.body.account.id;
    await call(srv.url, "PUT", `/api/v1/admin/projects/${p.hashid}/members/${id}`, {
      headers: adminHeaders,
      body: { role },
    });
    return new URL(made.body.setup_url).searchParams.get("token")!;
  };
  await person("owner@example.test", "owner");
  const setup = await postForm(srv.url, "/dashboard/setup", { cookie: "" }, {
    token: await person("viewer@example.test", "viewer"),
    password: "batching password 0123",
    confirm: "batching password 0123",
  });
  const cookie = setup.headers.get("set-cookie")!.split(";")[0]!;
  const page = async (first: number) =>
    await counted(() =>
      gql(srv.url, LINKS_PAGE, { headers: { cookie }, variables: { id: p.productionId, first } })
    );
  await page(1);
  const small = await page(10);
  const large = await page(100);
  for (const { value } of [small, large]) assert.equal(value.errors, undefined);
  assert.equal(large.value.data.environment.links.edges.length, 100);
  assert.deepEqual(small.statements.toSorted(), large.statements.toSorted());
  // The session, then one role look-up per operation (project visibility, links, analytics).
  assert.equal(large.statements.filter((s) => /dashboard_sessions/.test(s)).length, 1);
  assert.ok(
    large.statements.filter((s) => /project_members/.test(s)).length <= 3,
    large.statements.join("\n---\n"),
  );
});

Deno.test("a feed page with each event's link: the same statements for 10 or 100 events", async () => {
  const page = async (first: number) =>
    await counted(() =>
      gql(
        srv.url,
        `query($id: ID!, $first: Int) { eventFeed(projectId: $id, first: $first) {
          edges { node { id type link { path title state } } } } }`,
        {
          headers: { Authorization: `Bearer ${token.value}` },
          variables: { id: p.productionId, first },
        },
      )
    );
  await page(1);
  const small = await page(10);
  const large = await page(100);
  for (const { value } of [small, large]) assert.equal(value.errors, undefined);
  const edges = large.value.data.eventFeed.edges as Json[];
  assert.equal(edges.length, 100);
  assert.ok(edges.every((e) => paths.includes(e.node.link.path)));
  assert.deepEqual(small.statements.toSorted(), large.statements.toSorted());
  assert.equal(large.statements.filter((s) => /from links l/.test(s)).length, 1);
});

Deno.test("nested lists are priced at the page size they run with: a variable or the default", async () => {
  // 14 aliases of a link's metrics' link's metrics' link: about 7,000 for one link, 350,000
  // for 50, past armor's limit of 300,000.
  const heavy = Array.from(
    { length: 14 },
    (_, i) =>
      `m${i}: metrics { totalViews link { metrics { link { id title subtitle path accessPath
        updatedAt data tags active trackingCampaign trackingSource trackingMedium showPreview
        image createdAt state } } } }`,
  ).join(" ");
  const doc = (first: string) =>
    `query($id: ID!${
      first.includes("$n") ? ", $n: Int" : ""
    }) { environment(projectId: $id) { links${first} {
      edges { node { ${heavy} } } } } }`;
  const run = async (first: string, n?: number) =>
    await counted(() =>
      gql(srv.url, doc(first), {
        headers: adminHeaders,
        variables: { id: p.productionId, ...(n === undefined ? {} : { n }) },
      })
    );
  const few = await run("(first: $n)", 1);
  assert.equal(few.value.errors, undefined, JSON.stringify(few.value.errors));
  for (const [first, n] of [["(first: $n)", 100], ["(first: 100)", undefined], ["", undefined]]) {
    const refused = await run(first as string, n as number | undefined);
    assert.equal(refused.value.data, undefined, `${first} ${n}`);
    assert.equal(refused.value.errors?.[0].extensions.code, "BAD_USER_INPUT", `${first} ${n}`);
    assert.match(refused.value.errors![0].message, /Cost limit of 300000 exceeded/);
    // Refused before anything ran.
    assert.deepEqual(refused.statements, []);
  }
});
