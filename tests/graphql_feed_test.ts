import assert from "node:assert/strict";
import { createLink, type LinkRow } from "../services/links/links.ts";
import { countingSql } from "./helpers/database.ts";
import { gql, type Json } from "./helpers/graphql.ts";
import {
  adminHeaders,
  call,
  createFeedToken,
  createProject,
  serveApp,
  startTestServer,
} from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

const FEED = `query($projectId: ID!, $first: Int, $after: String, $eventTypes: [FeedEventType!]) {
  eventFeed(projectId: $projectId, first: $first, after: $after, eventTypes: $eventTypes) {
    schemaVersion
    edges { cursor node { schemaVersion id type name occurredAt project { id test } device user
      attribution geo { country } purchase { transactionId version amount currency productId store }
      link { id path accessPath title active } } }
    pageInfo { endCursor hasNextPage }
  }
}`;

async function ingest(key: string, environment: string, events: Json[]) {
  const res = await call(srv.url, "POST", "/api/v1/sdk/events", {
    headers: { "PROJECT-KEY": key, "ENVIRONMENT": environment },
    body: { events },
  });
  assert.equal(res.status, 202, res.text);
}

async function setUp() {
  const p = await createProject(srv.url);
  const token = await createFeedToken(srv.url, p.productionId);
  const auth = { Authorization: `Bearer ${token.value}` };
  return { p, token, auth };
}

Deno.test("eventFeed serves every field of the feed event and the full link", async () => {
  const { p, auth } = await setUp();
  const link = await createLink(srv.sql, p.productionId, { title: "Promo" });
  const at = srv.clock.now().toISOString();
  await ingest(p.key, "production", [
    {
      type: "install",
      occurred_at: at,
      link_path: link.path,
      device: { os: "iOS" },
      user: { id: "u1" },
      attribution: { campaign: "spring" },
      geo: { country: "DE", city: "Berlin", ip: "1.2.3.4" },
    },
    {
      type: "purchase",
      name: "purchase",
      occurred_at: at,
      purchase: {
        transaction_id: "t1",
        version: 1,
        amount: 4_000_000_000,
        currency: "EUR",
        product_id: "pro",
        store: "app_store",
      },
    },
  ]);
  const r = await gql(srv.url, FEED, { headers: auth, variables: { projectId: p.productionId } });
  assert.equal(r.errors, undefined, JSON.stringify(r.errors));
  const feed = r.data.eventFeed;
  assert.equal(feed.schemaVersion, 1);
  assert.equal(feed.edges.length, 2);
  const [install, purchase] = feed.edges.map((e: Json) => e.node);
  assert.match(install.id, /^evt_/);
  assert.equal(install.schemaVersion, 1);
  assert.equal(install.type, "install");
  assert.equal(install.name, null);
  assert.equal(install.occurredAt, at);
  assert.deepEqual(install.project, { id: p.hashid, test: false });
  assert.deepEqual(install.device, { os: "iOS" });
  assert.deepEqual(install.user, { id: "u1" });
  assert.deepEqual(install.attribution, {
    campaign: "spring",
    link_path: link.path,
    method: "link_path",
  });
  assert.deepEqual(install.geo, { country: "DE" });
  assert.equal(install.purchase, null);
  assert.deepEqual(install.link, {
    id: link.id,
    path: link.path,
    accessPath: `https://lnk.example.test/${link.path}`,
    title: "Promo",
    active: true,
  });
  assert.equal(purchase.name, "purchase");
  assert.deepEqual(purchase.purchase, {
    transactionId: "t1",
    version: 1,
    amount: 4_000_000_000,
    currency: "EUR",
    productId: "pro",
    store: "app_store",
  });
  assert.equal(purchase.link, null);
  assert.equal(feed.pageInfo.hasNextPage, false);
  assert.equal(feed.edges[1].cursor, feed.pageInfo.endCursor);

  // The same events through REST, in the same order with the same ids.
  const rest = await call(srv.url, "GET", `/api/v1/projects/${p.productionId}/event_stream`, {
    headers: auth,
  });
  assert.deepEqual(rest.body.events.map((e: Json) => e.id), [install.id, purchase.id]);
  assert.equal(rest.body.next_after, feed.pageInfo.endCursor);
});

Deno.test("cursors move between REST and GraphQL in both directions without loss", async () => {
  const { p, auth } = await setUp();
  const at = srv.clock.now().toISOString();
  await ingest(
    p.key,
    "production",
    Array.from({ length: 7 }, (_, i) => ({ type: "open", occurred_at: at, id: `c${i}` })),
  );
  const seen: string[] = [];
  // GraphQL first page of 2, then REST from its endCursor, then GraphQL from REST's next_after.
  const g1 = await gql(srv.url, FEED, {
    headers: auth,
    variables: { projectId: p.productionId, first: 2 },
  });
  seen.push(...g1.data.eventFeed.edges.map((e: Json) => e.node.id));
  assert.equal(g1.data.eventFeed.pageInfo.hasNextPage, true);
  const r1 = await call(
    srv.url,
    "GET",
    `/api/v1/projects/${p.productionId}/event_stream?limit=2&after=${
      encodeURIComponent(g1.data.eventFeed.pageInfo.endCursor)
    }`,
    { headers: auth },
  );
  assert.equal(r1.status, 200);
  seen.push(...r1.body.events.map((e: Json) => e.id));
  const g2 = await gql(srv.url, FEED, {
    headers: auth,
    variables: { projectId: p.productionId, first: 2, after: r1.body.next_after },
  });
  seen.push(...g2.data.eventFeed.edges.map((e: Json) => e.node.id));
  // An edge cursor resumes right after its event.
  const edge = g2.data.eventFeed.edges[0].cursor;
  const fromEdge = await call(
    srv.url,
    "GET",
    `/api/v1/projects/${p.productionId}/event_stream?after=${encodeURIComponent(edge)}`,
    { headers: auth },
  );
  assert.equal(fromEdge.body.events[0].id, g2.data.eventFeed.edges[1].node.id);
  const rest = await call(
    srv.url,
    "GET",
    `/api/v1/projects/${p.productionId}/event_stream?after=${
      encodeURIComponent(g2.data.eventFeed.pageInfo.endCursor)
    }`,
    { headers: auth },
  );
  seen.push(...rest.body.events.map((e: Json) => e.id));
  assert.equal(seen.length, 7);
  assert.equal(new Set(seen).size, 7);
  const all = await call(srv.url, "GET", `/api/v1/projects/${p.productionId}/event_stream`, {
    headers: auth,
  });
  assert.deepEqual(seen, all.body.events.map((e: Json) => e.id));
  // Empty page: endCursor still present, the same as REST's next_after there.
  const empty = await gql(srv.url, FEED, {
    headers: auth,
    variables: { projectId: p.productionId, after: rest.body.next_after },
  });
  assert.deepEqual(empty.data.eventFeed.edges, []);
  assert.equal(empty.data.eventFeed.pageInfo.endCursor, rest.body.next_after);
});

Deno.test("eventFeed errors carry the contract's extensions.code", async () => {
  const { p, auth } = await setUp();
  const other = await createProject(srv.url);
  const plain = await createProject(srv.url, { enterprise: true });
  const plainToken = await createFeedToken(srv.url, plain.productionId);
  await call(srv.url, "PATCH", `/api/v1/admin/projects/${plain.hashid}`, {
    headers: adminHeaders,
    body: { enterprise: false },
  });
  const cases: [Record<string, string>, Record<string, unknown>, string, string][] = [
    [{}, { projectId: p.productionId }, "UNAUTHENTICATED", "unauthorized"],
    [
      { Authorization: "Bearer est_nope" },
      { projectId: p.productionId },
      "UNAUTHENTICATED",
      "unauthorized",
    ],
    [auth, { projectId: p.testId }, "FORBIDDEN", "forbidden"],
    [auth, { projectId: other.productionId }, "FORBIDDEN", "forbidden"],
    [auth, { projectId: "abc" }, "BAD_USER_INPUT", "invalid_field"],
    [
      { Authorization: `Bearer ${plainToken.value}` },
      { projectId: plain.productionId },
      "PAYMENT_REQUIRED",
      "enterprise_required",
    ],
    [auth, { projectId: p.productionId, first: 0 }, "BAD_USER_INPUT", "invalid_limit"],
    [auth, { projectId: p.productionId, first: 1001 }, "BAD_USER_INPUT", "invalid_limit"],
    [auth, { projectId: p.productionId, after: "garbage" }, "BAD_USER_INPUT", "bad_cursor"],
  ];
  for (const [headers, variables, code, reason] of cases) {
    const r = await gql(srv.url, FEED, { headers, variables });
    assert.equal(r.data, null, JSON.stringify(r));
    assert.equal(r.errors?.[0].extensions.code, code, JSON.stringify(r.errors));
    assert.equal(r.errors?.[0].extensions.reason, reason);
    assert.ok(!JSON.stringify(r.errors).includes("stack"));
  }
});

Deno.test("eventFeed errors name GraphQL's arguments, not REST's parameters", async () => {
  const { p, auth } = await setUp();
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ projectId: p.productionId, first: 0 }, /^first must be an integer from 1 to 1000$/],
    [{ projectId: p.productionId, after: "garbage" }, /^after is not a cursor/],
    [{ projectId: "abc" }, /^projectId must be a numeric project ID$/],
    // An unknown type is refused by the FeedEventType enum before the resolver runs.
    [
      { projectId: p.productionId, eventTypes: ["nope"] },
      /eventTypes.*"nope"|"nope".*FeedEventType/,
    ],
  ];
  for (const [variables, message] of cases) {
    const r = await gql(srv.url, FEED, { headers: auth, variables });
    assert.equal(
      r.errors?.[0].extensions.code,
      "BAD_USER_INPUT",
      `${JSON.stringify(variables)}: ${JSON.stringify(r.errors)}`,
    );
    assert.match(r.errors![0].message, message);
    assert.doesNotMatch(r.errors![0].message, /limit|event_types/);
  }
});

Deno.test("GraphQL reads count against the same rate limit as REST", async () => {
  const limited = serveApp(srv.db, { clock: srv.clock, config: { FEED_RATE_LIMIT: "4" } });
  try {
    const { p, auth } = await setUp();
    const restPath = `/api/v1/projects/${p.productionId}/event_stream`;
    assert.equal((await call(limited.url, "GET", restPath, { headers: auth })).status, 200);
    assert.equal((await call(limited.url, "GET", restPath, { headers: auth })).status, 200);
    for (let i = 0; i < 2; i++) {
      const ok = await gql(limited.url, FEED, {
        headers: auth,
        variables: { projectId: p.productionId },
      });
      assert.equal(ok.errors, undefined);
    }
    const over = await gql(limited.url, FEED, {
      headers: auth,
      variables: { projectId: p.productionId },
    });
    assert.equal(over.errors?.[0].extensions.code, "RATE_LIMITED");
    assert.ok(over.errors?.[0].extensions.retryAfter >= 1);
    const rest = await call(limited.url, "GET", restPath, { headers: auth });
    assert.equal(rest.status, 503);
    assert.equal(rest.body.error.code, "rate_limited");
    srv.clock.advance(61_000);
    const again = await gql(limited.url, FEED, {
      headers: auth,
      variables: { projectId: p.productionId },
    });
    assert.equal(again.errors, undefined);
  } finally {
    await limited.close();
  }
});

Deno.test("a 1,000-event page over 200 links loads its links with exactly one query", async () => {
  const counted = countingSql(srv.db.pool());
  const app = serveApp(srv.db, { clock: srv.clock, sql: counted.sql });
  try {
    const { p, auth } = await setUp();
    const links: LinkRow[] = [];
    for (let i = 0; i < 200; i++) {
      links.push(await createLink(srv.sql, p.productionId, { title: `L${i}` }));
    }
    const at = srv.clock.now().toISOString();
    await ingest(
      p.key,
      "production",
      Array.from({ length: 1000 }, (_, i) => ({
        type: "open",
        occurred_at: at,
        link_path: links[i % 200]!.path,
      })),
    );
    counted.queries.length = 0;
    const r = await gql(
      app.url,
      `query($id: ID!) {
      eventFeed(projectId: $id, first: 1000) { edges { node { id link { path title } } } }
    }`,
      { headers: auth, variables: { id: p.productionId } },
    );
    assert.equal(r.errors, undefined);
    assert.equal(r.data.eventFeed.edges.length, 1000);
    const titles = new Set(r.data.eventFeed.edges.map((e: Json) => e.node.link.title));
    assert.equal(titles.size, 200);
    assert.equal(r.data.eventFeed.edges[201].node.link.path, links[1]!.path);
    const linkQueries = counted.queries.filter((q) => /from links/i.test(q));
    assert.equal(linkQueries.length, 1, linkQueries.join("\n---\n"));
    assert.ok(counted.queries.length >= 2, "the feed read itself went through the handle too");
  } finally {
    await app.close();
  }
});

Deno.test("links are read only when selected, through fragments and aliases too", async () => {
  const counted = countingSql(srv.db.pool());
  const app = serveApp(srv.db, { clock: srv.clock, sql: counted.sql });
  try {
    const { p, auth } = await setUp();
    const link = await createLink(srv.sql, p.productionId, { title: "Fragment" });
    const at = srv.clock.now().toISOString();
    await ingest(p.key, "production", [
      { type: "open", occurred_at: at, link_path: link.path },
      { type: "custom", name: "no_link", occurred_at: at },
    ]);
    const read = async (query: string) => {
      counted.queries.length = 0;
      const r = await gql(app.url, query, { headers: auth, variables: { id: p.productionId } });
      assert.equal(r.errors, undefined, JSON.stringify(r.errors));
      return {
        edges: r.data.eventFeed.edges as Json[],
        linkQueries: counted.queries.filter((q) => /from links/i.test(q)).length,
      };
    };
    const plain = await read(
      `query($id: ID!) { eventFeed(projectId: $id) { edges { node { id } } } }`,
    );
    assert.equal(plain.edges.length, 2);
    assert.equal(plain.linkQueries, 0);

    const viaFragments = await read(`query($id: ID!) {
      eventFeed(projectId: $id) { ...Page }
    }
    fragment Page on EventFeedConnection { edges { node { ... on FeedEvent { l: link { ...L } } } } }
    fragment L on Link { title path }`);
    assert.equal(viaFragments.linkQueries, 1);
    assert.deepEqual(viaFragments.edges.map((e) => e.node.l), [
      { title: "Fragment", path: link.path },
      null,
    ]);
  } finally {
    await app.close();
  }
});

Deno.test("every edge cursor of a page resumes right after its own event, in REST too", async () => {
  const { p, auth } = await setUp();
  const at = srv.clock.now().toISOString();
  await ingest(
    p.key,
    "production",
    Array.from({ length: 6 }, (_, i) => ({ type: "custom", name: `e${i}`, occurred_at: at })),
  );
  const page = await gql(srv.url, FEED, {
    headers: auth,
    variables: { projectId: p.productionId },
  });
  const edges = page.data.eventFeed.edges as Json[];
  assert.equal(edges.length, 6);
  assert.equal(edges.at(-1)!.cursor, page.data.eventFeed.pageInfo.endCursor);
  for (let i = 0; i < edges.length; i++) {
    const next = await gql(srv.url, FEED, {
      headers: auth,
      variables: { projectId: p.productionId, after: edges[i]!.cursor },
    });
    assert.deepEqual(
      next.data.eventFeed.edges.map((e: Json) => e.node.name),
      edges.slice(i + 1).map((e) => e.node.name),
    );
    const rest = await call(
      srv.url,
      "GET",
      `/api/v1/projects/${p.productionId}/event_stream?after=${
        encodeURIComponent(edges[i]!.cursor)
      }`,
      { headers: auth },
    );
    assert.equal(rest.status, 200, rest.text);
    assert.deepEqual(
      rest.body.events.map((e: Json) => e.name),
      edges.slice(i + 1).map((e) => e.node.name),
    );
  }
});

Deno.test("a feed page's link reads only the selected fields' columns, each the full link's value", async () => {
  const { p, auth } = await setUp();
  const sdk = { "PROJECT-KEY": p.key, "ENVIRONMENT": "production" };
  const made = await gql(
    srv.url,
    `mutation { generateLink(input: { title: "Every field", subtitle: "Sub", data: { a: [1, "x"] },
      tags: ["t1", "t2"], image: "https://img.example/i.png", showPreviewAndroid: true,
      iosCustomRedirect: { url: "https://apps.apple.com/app/id9", openAppIfInstalled: true },
      androidCustomRedirect: { url: "https://play.google.com/store/apps/details?id=x" },
      desktopCustomRedirect: { url: "https://example.com/d" }, trackingCampaign: "c",
      trackingSource: "s", trackingMedium: "m" }) { link { path } } }`,
    { headers: sdk },
  );
  const path = made.data.generateLink.link.path as string;
  const FIELDS = `id title subtitle path accessPath updatedAt generatedFromPlatform data
    sdkGenerated tags active trackingCampaign trackingSource trackingMedium showPreview image
    iosCustomRedirect { url openAppIfInstalled } androidCustomRedirect { url openAppIfInstalled }
    desktopCustomRedirect { url }`;
  const full = (await gql(srv.url, `{ link(path: "${path}") { ${FIELDS} } }`, { headers: sdk }))
    .data.link as Json;
  await ingest(p.key, "production", [{
    type: "open",
    occurred_at: srv.clock.now().toISOString(),
    link_path: path,
  }]);
  const read = async (selection: string) => {
    const r = await gql(
      srv.url,
      `query($id: ID!) { eventFeed(projectId: $id) { edges { node { link { ${selection} } } } } }`,
      { headers: auth, variables: { id: p.productionId } },
    );
    assert.equal(r.errors, undefined, JSON.stringify(r.errors));
    return r.data.eventFeed.edges[0].node.link as Json;
  };
  assert.deepEqual(await read(FIELDS), full);
  for (const field of Object.keys(full)) {
    const sub =
      typeof full[field] === "object" && full[field] !== null && !Array.isArray(full[field]) &&
        field !== "data"
        ? `${field} { url ${field === "desktopCustomRedirect" ? "" : "openAppIfInstalled"} }`
        : field;
    assert.deepEqual(await read(`__typename ${sub}`), { __typename: "Link", [field]: full[field] });
  }
});

Deno.test("links of events captured before their ids were stored beside them are read too", async () => {
  const counted = countingSql(srv.db.pool());
  const app = serveApp(srv.db, { clock: srv.clock, sql: counted.sql });
  try {
    const { p, auth } = await setUp();
    const [a, b] = [
      await createLink(srv.sql, p.productionId, { title: "Stored id" }),
      await createLink(srv.sql, p.productionId, { title: "Older event" }),
    ];
    const at = srv.clock.now().toISOString();
    await ingest(p.key, "production", [
      { type: "open", occurred_at: at, link_path: a!.path },
      { type: "open", occurred_at: at, link_path: b!.path },
    ]);
    const stored = await srv.sql<{ link_id: number | null }[]>`
      select link_id from feed_events where environment_id = ${Number(p.productionId)}
      order by xid, seq`;
    assert.deepEqual(stored.map((r) => r.link_id), [a!.id, b!.id]);
    // As migration 00010 leaves the events captured before it.
    await srv.sql`update feed_events set link_id = null
      where environment_id = ${Number(p.productionId)} and link_id = ${b!.id}`;
    counted.queries.length = 0;
    const r = await gql(
      app.url,
      `query($id: ID!) { eventFeed(projectId: $id) { edges { node { link { title } } } } }`,
      { headers: auth, variables: { id: p.productionId } },
    );
    assert.equal(r.errors, undefined, JSON.stringify(r.errors));
    assert.deepEqual(r.data.eventFeed.edges.map((e: Json) => e.node.link.title), [
      "Stored id",
      "Older event",
    ]);
    // Both through the one loader: one query for the page.
    assert.equal(counted.queries.filter((q) => /from links/i.test(q)).length, 1);
  } finally {
    await app.close();
  }
});
