import assert from "node:assert/strict";
import { parse, validate } from "graphql";
import { GRAPHIQL_DEFAULT_QUERY } from "../pages/graphiql.ts";
import { schema } from "../schema/mod.ts";
import { printSdl } from "../schema/print.ts";
import { gql } from "./helpers/graphql.ts";
import {
  adminHeaders,
  call,
  createProject,
  LINK_BASE_URL,
  startTestServer,
} from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

const LINK_FIELDS = `id title subtitle path accessPath updatedAt generatedFromPlatform data
  sdkGenerated tags active trackingCampaign trackingSource trackingMedium showPreview image
  iosCustomRedirect { url openAppIfInstalled } androidCustomRedirect { url openAppIfInstalled }
  desktopCustomRedirect { url openAppIfInstalled }`;

const GENERATE = `mutation($input: GenerateLinkInput!) {
  generateLink(input: $input) { url link { ${LINK_FIELDS} } }
}`;

Deno.test("schema/schema.graphql is the committed SDL of the built schema", async () => {
  const committed = await Deno.readTextFile(new URL("../schema/schema.graphql", import.meta.url));
  assert.equal(committed, printSdl(), "run `deno task schema` and commit schema/schema.graphql");
});

Deno.test("generateLink takes typed data and tags and answers the url and the full Link", async () => {
  const p = await createProject(srv.url);
  const headers = { "PROJECT-KEY": p.key, "ENVIRONMENT": "development" };
  const r = await gql(srv.url, GENERATE, {
    headers,
    variables: {
      input: {
        title: "Spring",
        subtitle: "Sale",
        data: { promo: "spring", n: 2 },
        tags: ["sale", "spring"],
        image: "https://img.example.com/a.png",
        iosCustomRedirect: { url: "https://apps.example.com/ios", openAppIfInstalled: true },
        androidCustomRedirect: { url: "https://apps.example.com/android" },
        desktopCustomRedirect: { url: "https://example.com" }, // stored normalised, with "/"
        showPreviewIos: false,
        showPreviewAndroid: true,
        trackingCampaign: "spring",
        trackingSource: "newsletter",
        trackingMedium: "email",
      },
    },
  });
  assert.equal(r.errors, undefined);
  const { url, link } = r.data.generateLink;
  assert.equal(url, `${LINK_BASE_URL}/${link.path}`);
  assert.equal(link.accessPath, url);
  assert.equal(link.title, "Spring");
  assert.equal(link.subtitle, "Sale");
  assert.deepEqual(link.data, { promo: "spring", n: 2 });
  assert.deepEqual(link.tags, ["sale", "spring"]);
  assert.equal(link.image, "https://img.example.com/a.png");
  assert.deepEqual(link.iosCustomRedirect, {
    url: "https://apps.example.com/ios",
    openAppIfInstalled: true,
  });
  assert.deepEqual(link.androidCustomRedirect, {
    url: "https://apps.example.com/android",
    openAppIfInstalled: null,
  });
  assert.deepEqual(link.desktopCustomRedirect, {
    url: "https://example.com/",
    openAppIfInstalled: null,
  });
  assert.equal(link.showPreview, true);
  assert.equal(link.sdkGenerated, true);
  assert.equal(link.generatedFromPlatform, "API");
  assert.equal(link.active, true);
  assert.equal(link.trackingCampaign, "spring");
  assert.equal(link.trackingSource, "newsletter");
  assert.equal(link.trackingMedium, "email");
  assert.ok(!Number.isNaN(Date.parse(link.updatedAt)));

  // The same link through REST: the two views agree.
  const rest = await call(srv.url, "GET", `/api/v1/sdk/link/${link.path}`, { headers });
  assert.equal(rest.status, 200);
  assert.equal(rest.body.link.id, link.id);
  assert.deepEqual(rest.body.link.data, link.data);
  assert.equal(rest.body.link.updated_at, link.updatedAt);
});

Deno.test("generateLink with no fields makes a link with defaults", async () => {
  const p = await createProject(srv.url);
  const r = await gql(srv.url, GENERATE, {
    headers: { "PROJECT-KEY": p.key, "ENVIRONMENT": "production" },
    variables: { input: {} },
  });
  assert.equal(r.errors, undefined);
  const link = r.data.generateLink.link;
  assert.equal(link.title, "");
  assert.deepEqual(link.data, {});
  assert.deepEqual(link.tags, []);
  assert.equal(link.showPreview, false);
  assert.deepEqual(link.iosCustomRedirect, { url: null, openAppIfInstalled: null });
});

Deno.test("generateLink rejects bad input with BAD_USER_INPUT and stores nothing", async () => {
  const p = await createProject(srv.url);
  const headers = { "PROJECT-KEY": p.key, "ENVIRONMENT": "production" };
  const before = await srv.sql`select count(*)::int as n from links`;
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ iosCustomRedirect: { url: "javascript:alert(1)" } }, /^input\.iosCustomRedirect\.url: /],
    [{ desktopCustomRedirect: { url: "ftp://x" } }, /^input\.desktopCustomRedirect\.url: /],
    [{ image: "data:image/png;base64,AAAA" }, /^input\.image: /],
    [{ title: "x".repeat(5000) }, /^input\.title: /],
    [{ trackingCampaign: "x".repeat(300) }, /^input\.trackingCampaign: /],
  ];
  for (const [input, message] of cases) {
    const r = await gql(srv.url, GENERATE, { headers, variables: { input } });
    assert.equal(r.data, null);
    assert.equal(r.errors?.[0].extensions.code, "BAD_USER_INPUT", JSON.stringify(r.errors));
    assert.match(r.errors![0].message, message);
  }
  // A value of the wrong GraphQL type never reaches the resolver.
  const typed = await gql(srv.url, GENERATE, { headers, variables: { input: { data: [1, 2] } } });
  assert.ok(typed.errors?.length);
  const after = await srv.sql`select count(*)::int as n from links`;
  assert.equal(after[0]!.n, before[0]!.n);
});

Deno.test("link(path) follows the environment mapping and answers null when not found", async () => {
  const p = await createProject(srv.url);
  const prod = { "PROJECT-KEY": p.key, "ENVIRONMENT": "production" };
  const dev = { "PROJECT-KEY": p.key, "ENVIRONMENT": "development" };
  const made = await gql(srv.url, GENERATE, {
    headers: prod,
    variables: { input: { title: "P" } },
  });
  const path = made.data.generateLink.link.path;
  const q = `query($path: String!) { link(path: $path) { path title active } }`;
  const found = await gql(srv.url, q, { headers: prod, variables: { path } });
  assert.deepEqual(found.data.link, { path, title: "P", active: true });
  const other = await gql(srv.url, q, { headers: dev, variables: { path } });
  assert.equal(other.errors, undefined);
  assert.equal(other.data.link, null);
  const missing = await gql(srv.url, q, { headers: prod, variables: { path: "nope" } });
  assert.equal(missing.data.link, null);
});

Deno.test("auth failures carry extensions.code: UNAUTHENTICATED and BAD_USER_INPUT", async () => {
  const p = await createProject(srv.url);
  const q = `{ link(path: "x") { path } }`;
  const cases: [Record<string, string>, string, string][] = [
    [{ "ENVIRONMENT": "production" }, "UNAUTHENTICATED", "unauthorized"],
    [{ "PROJECT-KEY": "pk_wrong", "ENVIRONMENT": "production" }, "UNAUTHENTICATED", "unauthorized"],
    [{ "PROJECT-KEY": p.key }, "BAD_USER_INPUT", "invalid_environment"],
    [{ "PROJECT-KEY": p.key, "ENVIRONMENT": "test" }, "BAD_USER_INPUT", "invalid_environment"],
  ];
  for (const [headers, code, reason] of cases) {
    const r = await gql(srv.url, q, { headers });
    assert.equal(r.data.link, null);
    assert.equal(r.errors?.[0].extensions.code, code);
    assert.equal(r.errors?.[0].extensions.reason, reason);
    assert.deepEqual(r.errors?.[0].path, ["link"]);
  }
  const metrics = await gql(srv.url, `{ projectMetrics { id } }`, {
    headers: { "PROJECT-KEY": p.key, "ENVIRONMENT": "development" },
  });
  assert.equal(metrics.errors?.[0].extensions.code, "BAD_USER_INPUT");
});

Deno.test("projectMetrics lists active links by totalViews with every field", async () => {
  const p = await createProject(srv.url);
  const prod = { "PROJECT-KEY": p.key, "ENVIRONMENT": "production" };
  const made: string[] = [];
  for (const title of ["a", "b", "c"]) {
    const r = await gql(srv.url, GENERATE, {
      headers: prod,
      variables: { input: { title, tags: [title], trackingCampaign: "camp" } },
    });
    made.push(r.data.generateLink.link.path);
  }
  // Views through ingestion move the counters: b gets 2, c gets 1.
  const now = srv.clock.now().toISOString();
  const events = [
    { type: "view", link_path: made[1], occurred_at: now },
    { type: "open", link_path: made[1], occurred_at: now },
    { type: "install", link_path: made[2], occurred_at: now },
  ];
  const ingest = await call(srv.url, "POST", "/api/v1/sdk/events", {
    headers: prod,
    body: { events: events.filter((e) => e.type !== "view") },
  });
  assert.equal(ingest.status, 202, ingest.text);
  for (let i = 0; i < 2; i++) {
    await fetch(`${srv.url}/${made[1]}`).then((r) => r.body?.cancel());
  }
  await fetch(`${srv.url}/${made[2]}`).then((r) => r.body?.cancel());
  await srv.views.flush();
  await call(srv.url, "PATCH", `/api/v1/projects/${p.productionId}/links/${made[0]}`, {
    headers: { Authorization: "Bearer test-admin-token-0123456789abcdefgh" },
    body: { active: false },
  });

  const r = await gql(
    srv.url,
    `{ projectMetrics { id name path title active sdkGenerated tags trackingCampaign totalViews
      totalOpens totalInstalls totalReinstalls totalTimeSpent totalReactivations totalAppOpens
      totalUserReferred totalRevenue } }`,
    { headers: { "PROJECT-KEY": p.key, "ENVIRONMENT": "production" } },
  );
  assert.equal(r.errors, undefined);
  assert.deepEqual(r.data.projectMetrics.map((m: { path: string }) => m.path), [made[1], made[2]]);
  const b = r.data.projectMetrics[0];
  assert.equal(b.name, "b");
  assert.equal(b.totalViews, 2);
  assert.equal(b.totalOpens, 1);
  assert.equal(b.trackingCampaign, "camp");
  assert.deepEqual(b.tags, ["b"]);
  assert.equal(r.data.projectMetrics[1].totalInstalls, 1);

  // REST answers the same list.
  const rest = await call(srv.url, "GET", "/api/v1/sdk/metrics_for_project", { headers: prod });
  assert.deepEqual(rest.body.map((m: { path: string }) => m.path), [made[1], made[2]]);
  assert.equal(rest.body[0].total_views, 2);
});

Deno.test("abusive documents are rejected before execution", async () => {
  const p = await createProject(srv.url);
  const headers = { "PROJECT-KEY": p.key, "ENVIRONMENT": "production" };
  const aliases = Array.from({ length: 500 }, (_, i) => `a${i}: link(path: "x") { path }`);
  const many = await gql(srv.url, `{ ${aliases.join(" ")} }`, { headers });
  assert.equal(many.data, undefined);
  assert.ok(many.errors?.length);
  const fewAliases = Array.from({ length: 20 }, (_, i) => `a${i}: link(path: "x") { path }`);
  const aliased = await gql(srv.url, `{ ${fewAliases.join(" ")} }`, { headers });
  assert.equal(aliased.data, undefined);
  assert.match(aliased.errors![0].message, /alias/i);

  const nested = await gql(
    srv.url,
    `{ __typename ${"... on Query { ".repeat(12)} link(path: "x") { path } ${"}".repeat(12)} }`,
    { headers },
  );
  assert.ok(nested.errors?.length, "deep fragment nesting is refused");
  assert.match(nested.errors![0].message, /depth/i);
  // Nothing ran: no link was looked up (no PROJECT-KEY error appeared).
  assert.ok(!JSON.stringify(nested.errors).includes("UNAUTHENTICATED"));
});

Deno.test("a GraphQL body over 1 MiB is refused with 413 before it is parsed", async () => {
  const res = await call(srv.url, "POST", "/graphql", {
    raw: JSON.stringify({ query: `{ __typename }`, variables: { pad: "x".repeat(1024 * 1024) } }),
    headers: { "Content-Type": "application/json" },
  });
  assert.equal(res.status, 413);
  assert.equal(res.body.error.code, "payload_too_large");
});

Deno.test("introspection is on by default and can be turned off by configuration", async () => {
  const on = await gql(srv.url, `{ __schema { queryType { name } } }`);
  assert.equal(on.data.__schema.queryType.name, "Query");
  const { serveApp } = await import("./helpers/server.ts");
  const off = serveApp(srv.db, { config: { GRAPHQL_INTROSPECTION: "false" } });
  try {
    const r = await gql(off.url, `{ __schema { queryType { name } } }`);
    assert.ok(r.errors?.length);
    assert.equal(r.data?.__schema, undefined);
  } finally {
    await off.close();
  }
});

Deno.test("GET /graphql in a browser serves GraphiQL", async () => {
  const res = await fetch(`${srv.url}/graphql`, { headers: { Accept: "text/html" } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /text\/html/);
  assert.match(await res.text(), /graphiql/i);
});

Deno.test("GraphiQL opens with a query of the admin graph that validates and runs", async () => {
  const html = await (await fetch(`${srv.url}/graphql`, { headers: { Accept: "text/html" } }))
    .text();
  const config = JSON.parse(
    /<script id="graphiql-config" type="application\/json">(.*?)<\/script>/s.exec(html)![1]!,
  );
  const query = config.options.defaultQuery;
  assert.equal(query, GRAPHIQL_DEFAULT_QUERY);
  assert.deepEqual(JSON.parse(config.options.headers), {
    Authorization: "Bearer <admin token>",
  });
  // The variables it needs are there to fill in (with a dashboard session, filled: see
  // tests/dashboard_tour_browser_test.ts).
  assert.deepEqual(JSON.parse(config.options.variables), { projectId: "<project_id>" });
  assert.deepEqual(validate(schema, parse(query)), []);
  assert.match(
    query,
    /environment\(projectId: \$projectId\)[\s\S]*links\([\s\S]*metrics[\s\S]*analytics/,
  );

  // With the token in place and an environment's ID, it answers.
  const p = await createProject(srv.url);
  await call(srv.url, "POST", `/api/v1/projects/${p.productionId}/links`, {
    headers: adminHeaders,
    body: { title: "Shown" },
  });
  const r = await gql(srv.url, query, {
    headers: adminHeaders,
    variables: { projectId: String(p.productionId) },
  });
  assert.equal(r.errors, undefined, JSON.stringify(r.errors));
  assert.equal(r.data.environment.links.edges[0].node.title, "Shown");
  assert.equal(r.data.environment.links.edges[0].node.analytics.series.length, 31);
});

Deno.test("link(path) answers the same fields whether its selection reads the plain columns or every one", async () => {
  const p = await createProject(srv.url);
  const headers = { "PROJECT-KEY": p.key, "ENVIRONMENT": "production" };
  const made = await gql(srv.url, GENERATE, {
    headers,
    variables: {
      input: {
        title: "Plain",
        subtitle: "Row",
        image: "https://img.example.com/p.png",
        showPreviewIos: false,
        trackingCampaign: "c",
        trackingMedium: "m",
      },
    },
  });
  const path = made.data.generateLink.link.path;
  // Made from PLAIN_LINK_COLUMNS only (services/links/links.ts): the plain statement.
  const PLAIN = `id title subtitle path accessPath generatedFromPlatform sdkGenerated active
    trackingCampaign trackingSource trackingMedium showPreview image archived maxViews expiredUrl`;
  const q = (fields: string) => `query($path: String!) { link(path: $path) { ${fields} } }`;
  const plain = await gql(srv.url, q(PLAIN), { headers, variables: { path } });
  // The same fields and one that is not plain (`tags`): every column.
  const full = await gql(srv.url, q(`${PLAIN} tags`), { headers, variables: { path } });
  assert.equal(plain.errors, undefined);
  assert.equal(full.errors, undefined);
  const { tags, ...fullPlain } = full.data.link;
  assert.deepEqual(tags, []);
  assert.deepEqual(plain.data.link, fullPlain);
  assert.equal(plain.data.link.accessPath, `${LINK_BASE_URL}/${path}`);
  assert.equal(plain.data.link.showPreview, false);
  // Not found and a wrong key answer alike on both statements.
  for (const fields of [PLAIN, `${PLAIN} tags`]) {
    const missing = await gql(srv.url, q(fields), { headers, variables: { path: "nope" } });
    assert.equal(missing.errors, undefined);
    assert.equal(missing.data.link, null);
    const wrongKey = await gql(srv.url, q(fields), {
      headers: { ...headers, "PROJECT-KEY": `${p.key.slice(0, -4)}0000` },
      variables: { path },
    });
    assert.equal(wrongKey.errors?.[0].extensions.code, "UNAUTHENTICATED");
  }
});
