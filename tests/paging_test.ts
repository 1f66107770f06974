// Every cursor-paged (and page-numbered) list, read to its end over more than ten pages: each
// item comes exactly once, in the list's order, and the last page says so. The lists: the audit
// log (a project's and the instance's, on REST and the dashboard), links (REST in each order,
// GraphQL, MCP's list_links and the dashboard's numbered pages) and the feed (REST and GraphQL).
// The audit log once ordered by a text alias of its id (9, 8, …, 29, 28, …) and lost entries
// (issue 32).
import assert from "node:assert/strict";
import { capture, readOk } from "./helpers/feed.ts";
import { getPage, signInOverHttp } from "./helpers/dashboard.ts";
import { gql } from "./helpers/graphql.ts";
import { callOk, mcpClient } from "./helpers/mcp.ts";
import {
  adminHeaders,
  call,
  createFeedToken,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

const project = await createProject(srv.url, { name: "Paged" });
const env = project.productionId;
const admin = (path: string) => call(srv.url, "GET", path, { headers: adminHeaders });

/** Asserts each id once, in `order`, and that more than ten pages were read. */
function assertWhole<T>(what: string, got: T[], expected: T[], pages: number) {
  assert.ok(pages > 10, `${what}: ${pages} pages`);
  assert.equal(new Set(got).size, got.length, `${what}: an item came twice`);
  assert.deepEqual(got, expected, `${what}: not every item, or out of order`);
}

Deno.test("the audit log pages through every entry, newest first (REST and dashboard)", async () => {
  // Entries past the tens and hundreds (ids 1…9, 10…99, 100…): the text order differs there.
  const [row] = await srv.sql<
    { id: number }[]
  >`select id from projects where hashid = ${project.hashid}`;
  await srv.sql`
    insert into audit_log (at, project_id, actor_type, actor_id, actor_name, action, target_type,
      target_id)
    select now(), case when n % 3 = 0 then null else ${row!.id}::int end, 'admin_token', null,
      'paging', 'link.update', 'link', n::text
    from generate_series(1, 900) n
  `;
  const all = await srv.sql<{ id: string; project_id: number | null }[]>`
    select id::text, project_id from audit_log order by audit_log.id desc
  `;
  const instanceIds = all.map((r) => Number(r.id));
  const projectIds = all.filter((r) => r.project_id === row!.id).map((r) => Number(r.id));
  assert.ok(instanceIds.length > 600);

  for (
    const [what, path, expected] of [
      ["instance", "/api/v1/admin/audit_log", instanceIds],
      ["project", `/api/v1/projects/${env}/audit_log`, projectIds],
    ] as const
  ) {
    for (const limit of [7, 50]) {
      const got: number[] = [];
      let after: string | null = "";
      let pages = 0;
      while (after !== null) {
        const res = await admin(`${path}?limit=${limit}&after=${after}`);
        assert.equal(res.status, 200, res.text);
        pages++;
        got.push(...res.body.entries.map((e: { id: number }) => e.id));
        assert.ok(res.body.entries.length <= limit);
        after = res.body.next_after;
        assert.ok(pages < 200, "the pages never end");
      }
      assertWhole(`${what} audit log, limit ${limit}`, got, [...expected], pages);
    }
  }

  // The dashboard's pages (50 entries each), following its "Older entries" link.
  const session = await signInOverHttp(srv.url);
  const before = (await srv.sql`select max(id)::text as id from audit_log`)[0]!.id;
  for (
    const [what, start, expected] of [
      ["instance", "/dashboard/audit", instanceIds],
      ["project", `/dashboard/projects/${project.hashid}/audit`, projectIds],
    ] as const
  ) {
    const got: string[] = [];
    let path: string | null = start;
    let pages = 0;
    while (path !== null) {
      const page = await getPage(srv.url, path, session);
      assert.equal(page.status, 200, page.text);
      pages++;
      // Each row's target id is the n of its insert, or another entry's target: read the ids
      // through the target cell of the rows inserted above, and count the others.
      got.push(...[...page.text.matchAll(/<td>\s*(\S+) <code>([^<]*)<\/code>/g)].map((m) => m[2]!));
      const next: string | undefined = /href="([^"]*\?after=[^"]*)"/.exec(page.text)?.[1];
      path = next === undefined
        ? null
        : next.replace(/&amp;/g, "&").replace(/^.*\/dashboard/, "/dashboard");
      assert.ok(pages < 100, "the pages never end");
    }
    const targets = await srv.sql<{ target_id: string }[]>`
      select target_id from audit_log
      where id <= ${before}::bigint and id = any(${expected.map(String)}::bigint[])
      order by audit_log.id desc
    `;
    assertWhole(`dashboard ${what} audit log`, got, targets.map((t) => t.target_id), pages);
  }
});

Deno.test("links page through every link in each order (REST, GraphQL, MCP, dashboard)", async () => {
  const csv = "title\n" + Array.from({ length: 230 }, (_, i) => `Paged link ${i + 1}`).join("\n");
  const imported = await fetch(`${srv.url}/api/v1/projects/${env}/links/import`, {
    method: "POST",
    headers: { ...adminHeaders, "Content-Type": "text/csv" },
    body: csv + "\n",
  });
  assert.equal(imported.status, 201, await imported.text());
  // Some later links too, a minute apart, and views on a few: orders with ties and without.
  for (let i = 0; i < 5; i++) {
    srv.clock.advance(60_000);
    const res = await call(srv.url, "POST", `/api/v1/projects/${env}/links`, {
      headers: adminHeaders,
      body: { title: `Later ${i}` },
    });
    assert.equal(res.status, 201, res.text);
  }
  await srv.sql`
    update link_counters set total_views = (link_id % 4)
    where environment_id = ${env} and link_id % 5 = 0
  `;
  const rows = await srv.sql<{ id: number; path: string; created_at: Date; views: string }[]>`
    select l.id, l.path, l.created_at, c.total_views::text as views
    from links l join link_counters c on c.link_id = l.id where l.environment_id = ${env}
  `;
  assert.ok(rows.length > 230);
  const sorted = (key: (r: typeof rows[number]) => number, desc: boolean) =>
    [...rows].sort((a, b) => (key(a) - key(b) || a.id - b.id) * (desc ? -1 : 1)).map((r) => r.path);
  const orders: [string, string[]][] = [
    ["-created_at", sorted((r) => r.created_at.getTime(), true)],
    ["created_at", sorted((r) => r.created_at.getTime(), false)],
    ["-views", sorted((r) => Number(r.views), true)],
    ["views", sorted((r) => Number(r.views), false)],
  ];
  for (const [order, expected] of orders) {
    const got: string[] = [];
    let after: string | null = "";
    let pages = 0;
    while (after !== null) {
      const res = await admin(
        `/api/v1/projects/${env}/links?order=${order}&limit=20&after=${after}`,
      );
      assert.equal(res.status, 200, res.text);
      pages++;
      got.push(...res.body.links.map((l: { path: string }) => l.path));
      after = res.body.next_after;
      assert.ok(pages < 100, "the pages never end");
    }
    assertWhole(`REST links ${order}`, got, expected, pages);
  }

  // GraphQL's connection, newest first and by views.
  for (
    const [orderBy, expected] of [
      [{ field: "CREATED_AT", direction: "DESC" }, orders[0]![1]],
      [{ field: "VIEWS", direction: "ASC" }, orders[3]![1]],
    ] as const
  ) {
    const got: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const res = await gql(
        srv.url,
        `query($id: ID!, $after: String, $orderBy: LinkOrder) {
          environment(projectId: $id) {
            links(first: 20, after: $after, orderBy: $orderBy) {
              edges { cursor node { path } }
              pageInfo { hasNextPage endCursor }
            }
          }
        }`,
        { variables: { id: String(env), after, orderBy }, headers: adminHeaders },
      );
      assert.equal(res.errors, undefined, JSON.stringify(res.errors));
      const links = res.data.environment.links;
      pages++;
      got.push(...links.edges.map((e: { node: { path: string } }) => e.node.path));
      if (!links.pageInfo.hasNextPage) break;
      after = links.pageInfo.endCursor;
      assert.ok(pages < 100, "the pages never end");
    }
    assertWhole(`GraphQL links ${orderBy.field}`, got, [...expected], pages);
  }

  // MCP's list_links, with an admin key of the environment.
  const key = await call(srv.url, "POST", `/api/v1/projects/${env}/api_keys`, {
    headers: adminHeaders,
    body: { name: "mcp", scopes: ["links:read"] },
  });
  const client = await mcpClient(srv.url, key.body.api_key.value);
  try {
    const got: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const page = await callOk(client, "list_links", {
        limit: 20,
        ...(after === null ? {} : { after }),
      }) as { links: { path: string }[]; next_after: string | null };
      pages++;
      got.push(...page.links.map((l) => l.path));
      after = page.next_after;
      assert.ok(pages < 100, "the pages never end");
    } while (after !== null);
    assertWhole("MCP list_links", got, orders[0]![1], pages);
  } finally {
    await client.close();
  }

  // The dashboard's numbered pages (20 links each, newest id first), following "Older →".
  const session = await signInOverHttp(srv.url);
  const byId = [...rows].sort((a, b) => b.id - a.id).map((r) => r.path);
  const got: string[] = [];
  let pages = 0;
  let path: string | null = `/dashboard/environments/${env}/links`;
  while (path !== null) {
    const page = await getPage(srv.url, path, session);
    assert.equal(page.status, 200, page.text);
    pages++;
    got.push(
      ...[...page.text.matchAll(/<a class="title" href="[^"]*\/links\/([^"]+)"/g)].map((m) =>
        m[1]!
      ),
    );
    const next: string | undefined = /<a href="([^"]*)" rel="next"/.exec(page.text)?.[1];
    path = next === undefined ? null : next.replace(/&amp;/g, "&");
    assert.ok(pages < 100, "the pages never end");
  }
  assertWhole("dashboard links", got, byId, pages);
});

Deno.test("the feed pages through every event in order (REST and GraphQL)", async () => {
  const token = await createFeedToken(srv.url, env);
  const ids: string[] = [];
  for (let i = 0; i < 13; i++) {
    ids.push(...await capture(srv.sql, env, project.hashid, Array(11).fill("install"), srv.clock));
  }
  const got: string[] = [];
  let after: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await readOk(srv.url, env, token.value, { limit: 10, after });
    if (page.events.length === 0) break;
    pages++;
    got.push(...page.events.map((e) => e.id));
    after = page.next_after;
    assert.ok(pages < 100, "the pages never end");
  }
  assertWhole("REST feed", got, ids, pages);

  const viaGraphql: string[] = [];
  let cursor: string | null = null;
  pages = 0;
  for (;;) {
    const res = await gql(
      srv.url,
      `query($id: ID!, $after: String) {
        eventFeed(projectId: $id, first: 10, after: $after) {
          edges { node { id } }
          pageInfo { hasNextPage endCursor }
        }
      }`,
      {
        variables: { id: String(env), after: cursor },
        headers: { Authorization: `Bearer ${token.value}` },
      },
    );
    assert.equal(res.errors, undefined, JSON.stringify(res.errors));
    const feed = res.data.eventFeed;
    if (feed.edges.length === 0) break;
    pages++;
    viaGraphql.push(...feed.edges.map((e: { node: { id: string } }) => e.node.id));
    cursor = feed.pageInfo.endCursor;
    assert.ok(pages < 100, "the pages never end");
  }
  assertWhole("GraphQL feed", viaGraphql, ids, pages);
});
