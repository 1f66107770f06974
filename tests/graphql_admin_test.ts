// The admin graph over real HTTP and a real database: environment(projectId) with its links,
// one link and analytics, Link.metrics and Link.analytics, LinkMetrics.link, and the link
// mutations, each against what the admin REST routes answer and change.
import assert from "node:assert/strict";
import { gql, type Json } from "./helpers/graphql.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

const admin = { headers: adminHeaders };
const DAY = 24 * 60 * 60 * 1000;

async function rest(method: string, path: string, body?: unknown) {
  return await call(srv.url, method, path, { headers: adminHeaders, body });
}

/** A project with `n` links made through REST (titles L0…), and views and installs on some. */
async function seed(n = 3) {
  const p = await createProject(srv.url);
  const paths: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await rest("POST", `/api/v1/projects/${p.productionId}/links`, {
      title: `L${i}`,
      tags: i % 2 === 0 ? ["even"] : ["odd"],
      tracking_campaign: i === 0 ? "spring" : undefined,
    });
    assert.equal(res.status, 201, res.text);
    paths.push(res.body.link.path);
  }
  return { p, paths };
}

async function ingest(key: string, events: Json[]) {
  const res = await call(srv.url, "POST", "/api/v1/sdk/events", {
    headers: { "PROJECT-KEY": key, "ENVIRONMENT": "production" },
    body: { events },
  });
  assert.equal(res.status, 202, res.text);
}

/** REST's managed link under GraphQL's names, for comparing the two. */
function camel(link: Json): Json {
  const redirect = (r: Json) => ({
    url: r.url ?? null,
    openAppIfInstalled: r.open_app_if_installed ?? null,
  });
  return {
    id: link.id,
    title: link.title,
    subtitle: link.subtitle,
    path: link.path,
    accessPath: link.access_path,
    updatedAt: link.updated_at,
    generatedFromPlatform: link.generated_from_platform,
    data: link.data,
    sdkGenerated: link.sdk_generated,
    tags: link.tags,
    active: link.active,
    trackingCampaign: link.tracking_campaign,
    trackingSource: link.tracking_source,
    trackingMedium: link.tracking_medium,
    showPreview: link.show_preview,
    image: link.image,
    iosCustomRedirect: redirect(link.ios_custom_redirect),
    androidCustomRedirect: redirect(link.android_custom_redirect),
    desktopCustomRedirect: redirect(link.desktop_custom_redirect),
    createdAt: link.created_at,
    state: link.state.toUpperCase(),
    archived: link.archived,
    expiresAt: link.expires_at,
    maxViews: link.max_views,
    expiredUrl: link.expired_url,
  };
}

const LINK = `id title subtitle path accessPath updatedAt generatedFromPlatform data sdkGenerated
  tags active trackingCampaign trackingSource trackingMedium showPreview image
  iosCustomRedirect { url openAppIfInstalled } androidCustomRedirect { url openAppIfInstalled }
  desktopCustomRedirect { url openAppIfInstalled } createdAt state archived expiresAt maxViews
  expiredUrl`;

Deno.test("environment: the admin token sees it; unknown is null; no or a wrong token is UNAUTHENTICATED", async () => {
  const { p } = await seed(0);
  const q = `query($id: ID!) { environment(projectId: $id) { projectId name
    project { id name enterprise createdAt linkDomain } } }`;
  const ok = await gql(srv.url, q, { ...admin, variables: { id: p.productionId } });
  assert.equal(ok.errors, undefined, JSON.stringify(ok.errors));
  assert.equal(ok.data.environment.projectId, String(p.productionId));
  assert.equal(ok.data.environment.name, "production");
  assert.equal(ok.data.environment.project.id, p.hashid);
  assert.equal(ok.data.environment.project.name, "Acme");
  assert.equal(ok.data.environment.project.enterprise, true);
  const test = await gql(srv.url, q, { ...admin, variables: { id: p.testId } });
  assert.equal(test.data.environment.name, "test");

  const unknown = await gql(srv.url, q, { ...admin, variables: { id: "99999999" } });
  assert.equal(unknown.errors, undefined);
  assert.equal(unknown.data.environment, null);

  const bad = await gql(srv.url, q, { ...admin, variables: { id: "abc" } });
  assert.equal(bad.errors?.[0].extensions.code, "BAD_USER_INPUT");
  assert.match(bad.errors![0].message, /^projectId /);

  const attempts: Record<string, string>[] = [{}, {
    Authorization: "Bearer wrong-admin-token-000000",
  }];
  for (const headers of attempts) {
    const r = await gql(srv.url, q, { headers, variables: { id: p.productionId } });
    assert.equal(r.data.environment, null);
    assert.equal(r.errors?.[0].extensions.code, "UNAUTHENTICATED");
    assert.equal(r.errors?.[0].extensions.reason, "unauthorized");
  }
});

Deno.test("a wrong admin token counts once a request against the limit, however many fields ask", async () => {
  const { p, paths } = await seed(2);
  const before = await srv.sql`select count(*)::int as n from admin_token_failures`;
  const r = await gql(
    srv.url,
    `query($id: ID!, $path: String!) {
      a: environment(projectId: $id) { projectId }
      b: environment(projectId: $id) { projectId }
      link(path: $path) { metrics { totalViews } }
    }`,
    {
      headers: {
        Authorization: "Bearer wrong-admin-token-000000",
        "PROJECT-KEY": p.key,
        "ENVIRONMENT": "production",
      },
      variables: { id: p.productionId, path: paths[0] },
    },
  );
  assert.equal(r.errors?.length, 3, JSON.stringify(r.errors));
  assert.ok(r.errors!.every((e: Json) => e.extensions.code === "UNAUTHENTICATED"));
  const after = await srv.sql`select count(*)::int as n from admin_token_failures`;
  assert.equal(after[0]!.n - before[0]!.n, 1);
});

Deno.test("environment.links: REST's list as a Relay connection, with its filters, orders and cursors", async () => {
  const { p, paths } = await seed(5);
  const q = `query($id: ID!, $first: Int, $after: String, $filter: LinkFilter, $order: LinkOrder) {
    environment(projectId: $id) {
      links(first: $first, after: $after, filter: $filter, orderBy: $order) {
        edges { cursor node { ${LINK} } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }`;
  const page = async (variables: Json) => {
    const r = await gql(srv.url, q, { ...admin, variables: { id: p.productionId, ...variables } });
    assert.equal(r.errors, undefined, JSON.stringify(r.errors));
    return r.data.environment.links;
  };
  const restList = await rest("GET", `/api/v1/projects/${p.productionId}/links?limit=100`);
  const all = await page({});
  assert.deepEqual(all.edges.map((e: Json) => e.node), restList.body.links.map(camel));
  assert.deepEqual(all.edges.map((e: Json) => e.node.path), [...paths].reverse());
  assert.equal(all.pageInfo.hasNextPage, false);
  assert.equal(all.pageInfo.endCursor, all.edges.at(-1).cursor);

  // Two by two, oldest first: each page reads on after its endCursor; an edge's cursor resumes
  // right after its own link.
  const seen: string[] = [];
  let after: string | null = null;
  for (;;) {
    const got: Json = await page({
      first: 2,
      after,
      order: { field: "CREATED_AT", direction: "ASC" },
    });
    seen.push(...got.edges.map((e: Json) => e.node.path));
    if (!got.pageInfo.hasNextPage) break;
    after = got.pageInfo.endCursor;
  }
  assert.deepEqual(seen, paths);
  const rest2 = await rest(
    "GET",
    `/api/v1/projects/${p.productionId}/links?order=created_at&limit=2`,
  );
  const first2 = await page({ first: 2, order: { field: "CREATED_AT", direction: "ASC" } });
  assert.equal(first2.pageInfo.endCursor, rest2.body.next_after);
  const fromEdge = await page({
    first: 10,
    after: first2.edges[0].cursor,
    order: { field: "CREATED_AT", direction: "ASC" },
  });
  assert.deepEqual(fromEdge.edges.map((e: Json) => e.node.path), paths.slice(1));

  // Filters, as REST's.
  const even = await page({ filter: { tag: "even" } });
  assert.deepEqual(even.edges.map((e: Json) => e.node.path), [paths[4], paths[2], paths[0]]);
  const camp = await page({ filter: { campaign: "spring", q: "l0" } });
  assert.deepEqual(camp.edges.map((e: Json) => e.node.path), [paths[0]]);
  await rest("PATCH", `/api/v1/projects/${p.productionId}/links/${paths[1]}`, { archived: true });
  const archived = await page({ filter: { state: "ARCHIVED" } });
  assert.deepEqual(archived.edges.map((e: Json) => e.node.path), [paths[1]]);
  assert.equal(archived.edges[0].node.state, "ARCHIVED");
  const sdk = await page({ filter: { sdkGenerated: true } });
  assert.deepEqual(sdk.edges, []);
});

Deno.test("environment.links refuses bad arguments with BAD_USER_INPUT naming them", async () => {
  const { p } = await seed(1);
  const q = `query($id: ID!, $first: Int, $after: String, $filter: LinkFilter) {
    environment(projectId: $id) { links(first: $first, after: $after, filter: $filter) {
      edges { node { path } } } } }`;
  const cases: [Json, RegExp, string][] = [
    [{ first: 0 }, /^first must be an integer from 1 to 100$/, "invalid_limit"],
    [{ first: 101 }, /^first /, "invalid_limit"],
    [{ after: "not-a-cursor" }, /^after /, "bad_cursor"],
    [{ filter: { q: "x".repeat(201) } }, /^filter\.q: /, "invalid_field"],
    [{ filter: { campaign: "x".repeat(300) } }, /^filter\.campaign: /, "invalid_field"],
  ];
  for (const [variables, message, reason] of cases) {
    const r = await gql(srv.url, q, { ...admin, variables: { id: p.productionId, ...variables } });
    assert.equal(r.errors?.[0].extensions.code, "BAD_USER_INPUT", JSON.stringify(r.errors));
    assert.equal(r.errors?.[0].extensions.reason, reason);
    assert.match(r.errors![0].message, message);
  }
});

Deno.test("Link.metrics, LinkMetrics.link and environment.link answer what REST answers", async () => {
  const { p, paths } = await seed(2);
  const now = srv.clock.now().toISOString();
  await ingest(p.key, [
    { type: "open", occurred_at: now, link_path: paths[0] },
    { type: "install", occurred_at: now, link_path: paths[0] },
    { type: "install", occurred_at: now, link_path: paths[1] },
  ]);
  await fetch(`${srv.url}/${paths[1]}`).then((r) => r.body?.cancel());
  await srv.views.flush();
  const r = await gql(
    srv.url,
    `query($id: ID!, $path: String!) { environment(projectId: $id) {
      link(path: $path) { ${LINK} metrics { id name path totalViews totalOpens totalInstalls
        link { path title } } }
      missing: link(path: "nope") { path }
    } }`,
    { ...admin, variables: { id: p.productionId, path: paths[1] } },
  );
  assert.equal(r.errors, undefined, JSON.stringify(r.errors));
  const { link, missing } = r.data.environment;
  assert.equal(missing, null);
  const restList = await rest("GET", `/api/v1/projects/${p.productionId}/links`);
  const restLink = restList.body.links.find((l: Json) => l.path === paths[1]);
  const { metrics, ...fields } = link;
  assert.deepEqual(fields, camel(restLink));
  const restMetrics = await call(srv.url, "GET", "/api/v1/sdk/metrics_for_project", {
    headers: { "PROJECT-KEY": p.key, "ENVIRONMENT": "production" },
  });
  const item = restMetrics.body.find((m: Json) => m.path === paths[1]);
  assert.deepEqual(metrics, {
    id: item.id,
    name: item.name,
    path: item.path,
    totalViews: 1,
    totalOpens: item.total_opens,
    totalInstalls: 1,
    link: { path: paths[1], title: "L1" },
  });
  assert.equal(item.total_views, 1);

  // The SDK's metrics lead to their links too.
  const sdk = await gql(srv.url, `{ projectMetrics { path link { path title state } } }`, {
    headers: { "PROJECT-KEY": p.key, "ENVIRONMENT": "production" },
  });
  assert.equal(sdk.errors, undefined, JSON.stringify(sdk.errors));
  for (const m of sdk.data.projectMetrics) assert.equal(m.link.path, m.path);

  // Metrics take the admin token, whichever root the link came from.
  const viaSdk = await gql(
    srv.url,
    `query($p: String!) { link(path: $p) { state metrics { id } } }`,
    {
      headers: { "PROJECT-KEY": p.key, "ENVIRONMENT": "production" },
      variables: { p: paths[1] },
    },
  );
  assert.equal(viaSdk.data.link, null);
  assert.equal(viaSdk.errors?.[0].extensions.code, "UNAUTHENTICATED");

  // The SDK's lookup does not read the views counted toward maxViews: state reads them.
  await rest("PATCH", `/api/v1/projects/${p.productionId}/links/${paths[0]}`, { max_views: 1 });
  await fetch(`${srv.url}/${paths[0]}`).then((r) => r.body?.cancel());
  await srv.views.flush();
  const states = await gql(
    srv.url,
    `query($a: String!, $b: String!) { a: link(path: $a) { state maxViews }
      b: link(path: $b) { state } }`,
    {
      headers: { "PROJECT-KEY": p.key, "ENVIRONMENT": "production" },
      variables: { a: paths[0], b: paths[1] },
    },
  );
  assert.equal(states.errors, undefined, JSON.stringify(states.errors));
  assert.deepEqual(states.data, { a: { state: "EXPIRED", maxViews: 1 }, b: { state: "ACTIVE" } });
});

Deno.test("analytics: the environment's and each link's figures equal REST's answers", async () => {
  const { p, paths } = await seed(3);
  const now = srv.clock.now();
  const at = (daysAgo: number) => new Date(now.getTime() - daysAgo * DAY).toISOString();
  await ingest(p.key, [
    { type: "open", occurred_at: at(1), link_path: paths[0], geo: { country: "DE" } },
    { type: "install", occurred_at: at(2), link_path: paths[0], geo: { country: "FR" } },
    { type: "install", occurred_at: at(2), link_path: paths[1], geo: { country: "DE" } },
    { type: "app_open", occurred_at: at(5), link_path: paths[1] },
    { type: "session", occurred_at: at(3), link_path: paths[2], time_spent: 42 },
  ]);
  const from = new Date(now.getTime() - 10 * DAY).toISOString();
  const to = now.toISOString();
  const r = await gql(
    srv.url,
    `query($id: ID!, $from: DateTime, $to: DateTime) { environment(projectId: $id) {
      analytics(from: $from, to: $to, interval: DAY, tz: "Europe/Berlin",
        metrics: [INSTALLS, OPENS, APP_OPENS, TIME_SPENT], groupBy: COUNTRY, limit: 5) {
        from to interval tz totals { installs opens appOpens timeSpent views }
        series { start installs opens appOpens timeSpent }
        groups { key totals { installs opens appOpens timeSpent } series { start installs } }
      }
      links(first: 10, orderBy: { field: CREATED_AT, direction: ASC }) { edges { node { path
        analytics(from: $from, to: $to, interval: DAY, metrics: [INSTALLS, OPENS, APP_OPENS, TIME_SPENT]) {
          from to tz totals { installs opens appOpens timeSpent } series { start installs opens appOpens timeSpent }
        }
        byCountry: analytics(from: $from, to: $to, groupBy: COUNTRY, filter: { country: "DE" }) {
          totals { installs views } groups { key totals { installs views } }
        }
      } } }
    } }`,
    { ...admin, variables: { id: p.productionId, from, to } },
  );
  assert.equal(r.errors, undefined, JSON.stringify(r.errors));
  const env = r.data.environment;

  const figures = (f: Json) => ({
    installs: f.installs,
    opens: f.opens,
    appOpens: f.app_opens,
    timeSpent: f.time_spent,
  });
  const point = (s: Json) => ({ start: s.start, ...figures(s) });
  const base = `/api/v1/projects/${p.productionId}/analytics?from=${encodeURIComponent(from)}` +
    `&to=${encodeURIComponent(to)}&metrics=installs,opens,app_opens,time_spent`;
  const whole =
    (await rest("GET", `${base}&interval=day&tz=Europe/Berlin&group_by=country&limit=5`))
      .body;
  assert.deepEqual(env.analytics, {
    from: whole.from,
    to: whole.to,
    interval: "DAY",
    tz: "Europe/Berlin",
    totals: { ...figures(whole.totals), views: null },
    series: whole.series.map(point),
    groups: whole.groups.map((g: Json) => ({
      key: g.key,
      totals: figures(g.totals),
      series: g.series.map((s: Json) => ({ start: s.start, installs: s.installs })),
    })),
  });
  assert.equal(env.analytics.totals.installs, 2);

  for (const edge of env.links.edges) {
    const link = edge.node;
    const one = (await rest("GET", `${base}&interval=day&link=${link.path}`)).body;
    assert.deepEqual(link.analytics, {
      from: one.from,
      to: one.to,
      tz: "UTC",
      totals: figures(one.totals),
      series: one.series.map(point),
    });
    const de = (await rest(
      "GET",
      `/api/v1/projects/${p.productionId}/analytics?from=${encodeURIComponent(from)}&to=${
        encodeURIComponent(to)
      }&group_by=country&filter[country]=DE&link=${link.path}`,
    )).body;
    assert.deepEqual(link.byCountry, {
      totals: de.totals,
      groups: de.groups.map((g: Json) => ({ key: g.key, totals: g.totals })),
    });
  }
  assert.deepEqual(env.links.edges.map((e: Json) => e.node.analytics.totals.installs), [1, 1, 0]);
});

Deno.test("analytics refuses bad arguments with BAD_USER_INPUT naming them", async () => {
  const { p } = await seed(1);
  const q = (args: string) =>
    `query($id: ID!) { environment(projectId: $id) { analytics(${args}) { totals { views } } } }`;
  const cases: [string, RegExp][] = [
    [`tz: "Mars/Olympus"`, /^tz: /],
    [`tz: "Asia/Kolkata"`, /^tz: /],
    [`metrics: []`, /^metrics: /],
    [`limit: 0`, /^limit: /],
    [`from: "2026-01-02T00:00:00Z", to: "2026-01-01T00:00:00Z"`, /^to: /],
    [`from: "2020-01-01T00:00:00Z", to: "2026-01-01T00:00:00Z"`, /^to: /],
    [
      `interval: HOUR, groupBy: COUNTRY, limit: 1000, from: "2025-01-01T00:00:00Z", to: "2026-01-01T00:00:00Z"`,
      /^interval: /,
    ],
    [`filter: { country: "" }`, /^filter\.country: /],
    [`filter: { eventName: "" }`, /^filter\.eventName: /],
  ];
  for (const [args, message] of cases) {
    const r = await gql(srv.url, q(args), { ...admin, variables: { id: p.productionId } });
    assert.equal(r.errors?.[0].extensions.code, "BAD_USER_INPUT", `${args}: ${JSON.stringify(r)}`);
    assert.match(r.errors![0].message, message, args);
  }
  // Per link too, and a request's series together are bounded like one REST answer.
  const perLink = await gql(
    srv.url,
    `query($id: ID!) { environment(projectId: $id) { links { edges { node {
      analytics(tz: "Asia/Kolkata") { totals { views } } } } } } }`,
    { ...admin, variables: { id: p.productionId } },
  );
  assert.equal(perLink.errors?.[0].extensions.code, "BAD_USER_INPUT");
  assert.match(perLink.errors![0].message, /^tz: /);
  // Each alias is within one answer's bound (9,601 hours × 10 series); three are not.
  const aliases = Array.from(
    { length: 3 },
    (_, i) =>
      `a${i}: analytics(interval: HOUR, groupBy: COUNTRY, limit: 9,
        from: "2025-01-01T00:00:00Z", to: "2026-02-05T00:00:00Z") { totals { views } }`,
  ).join(" ");
  const one = await gql(
    srv.url,
    `query($id: ID!) { environment(projectId: $id) { ${aliases.split(" a1:")[0]} } }`,
    { ...admin, variables: { id: p.productionId } },
  );
  assert.equal(one.errors, undefined, JSON.stringify(one.errors));
  const tooMany = await gql(
    srv.url,
    `query($id: ID!) { environment(projectId: $id) { ${aliases} } }`,
    { ...admin, variables: { id: p.productionId } },
  );
  assert.ok(tooMany.errors?.some((e: Json) => /^interval: .*this request/.test(e.message)));
});

Deno.test("createLink and updateLink change exactly what REST's POST and PATCH change", async () => {
  const { p } = await seed(0);
  const input = {
    title: "Twin",
    subtitle: "Sub",
    data: { promo: "x", n: 1 },
    tags: ["a", "b"],
    image: "https://img.example.com/i.png",
    iosCustomRedirect: { url: "https://apps.example.com/ios", openAppIfInstalled: true },
    androidCustomRedirect: { url: "https://apps.example.com/android" },
    desktopCustomRedirect: { url: "https://example.com/d" },
    showPreviewIos: true,
    trackingCampaign: "c",
    trackingSource: "s",
    trackingMedium: "m",
    expiresAt: "2099-01-01T00:00:00.000Z",
    maxViews: 10,
    expiredUrl: "https://example.com/expired",
  };
  const restBody = {
    title: "Twin",
    subtitle: "Sub",
    data: { promo: "x", n: 1 },
    tags: ["a", "b"],
    image: "https://img.example.com/i.png",
    ios_custom_redirect: { url: "https://apps.example.com/ios", open_app_if_installed: true },
    android_custom_redirect: { url: "https://apps.example.com/android" },
    desktop_custom_redirect: { url: "https://example.com/d" },
    show_preview_ios: true,
    tracking_campaign: "c",
    tracking_source: "s",
    tracking_medium: "m",
    expires_at: "2099-01-01T00:00:00.000Z",
    max_views: 10,
    expired_url: "https://example.com/expired",
  };
  const made = await gql(
    srv.url,
    `mutation($id: ID!, $in: CreateLinkInput!) { createLink(projectId: $id, input: $in) { ${LINK} } }`,
    { ...admin, variables: { id: p.productionId, in: { ...input, path: "gql-twin" } } },
  );
  assert.equal(made.errors, undefined, JSON.stringify(made.errors));
  const viaRest = await rest("POST", `/api/v1/projects/${p.productionId}/links`, {
    ...restBody,
    path: "rest-twin",
  });
  assert.equal(viaRest.status, 201);
  const strip = (l: Json) => {
    const { id: _i, path: _p, accessPath: _a, createdAt: _c, updatedAt: _u, ...rest } = l;
    return rest;
  };
  assert.deepEqual(strip(made.data.createLink), strip(camel(viaRest.body.link)));
  assert.equal(made.data.createLink.generatedFromPlatform, "API");
  assert.equal(made.data.createLink.sdkGenerated, false);
  // The stored rows agree, column by column.
  const rows = await srv.sql`select * from links where path in ('gql-twin', 'rest-twin')
    order by path`;
  const columns = (r: Json) => {
    const { id: _i, path: _p, created_at: _c, updated_at: _u, ...rest } = r;
    return rest;
  };
  assert.deepEqual(columns(rows[0]), columns(rows[1]));

  // Edits, clearing included.
  const patch = {
    title: "Edited",
    data: null,
    tags: ["z"],
    iosCustomRedirect: null,
    showPreviewIos: false,
    active: false,
    maxViews: null,
    expiresAt: null,
    trackingCampaign: null,
  };
  const edited = await gql(
    srv.url,
    `mutation($id: ID!, $path: String!, $in: UpdateLinkInput!) {
      updateLink(projectId: $id, path: $path, input: $in) { ${LINK} } }`,
    { ...admin, variables: { id: p.productionId, path: "gql-twin", in: patch } },
  );
  assert.equal(edited.errors, undefined, JSON.stringify(edited.errors));
  const restEdited = await rest("PATCH", `/api/v1/projects/${p.productionId}/links/rest-twin`, {
    title: "Edited",
    data: null,
    tags: ["z"],
    ios_custom_redirect: null,
    show_preview_ios: false,
    active: false,
    max_views: null,
    expires_at: null,
    tracking_campaign: null,
  });
  assert.equal(restEdited.status, 200, restEdited.text);
  assert.deepEqual(strip(edited.data.updateLink), strip(camel(restEdited.body.link)));
  assert.equal(edited.data.updateLink.state, "INACTIVE");
  assert.deepEqual(edited.data.updateLink.data, {});
  const after = await srv.sql`select * from links where path in ('gql-twin', 'rest-twin')
    order by path`;
  assert.deepEqual(columns(after[0]), columns(after[1]));
});

Deno.test("deleteLink removes the link and retires its path, as REST's DELETE", async () => {
  const { p, paths } = await seed(1);
  const del = `mutation($id: ID!, $path: String!) { deleteLink(projectId: $id, path: $path) }`;
  const r = await gql(srv.url, del, {
    ...admin,
    variables: { id: p.productionId, path: paths[0] },
  });
  assert.equal(r.errors, undefined, JSON.stringify(r.errors));
  assert.equal(r.data.deleteLink, true);
  const counters = await srv.sql`select count(*)::int as n from link_counters c
    join links l on l.id = c.link_id where l.path = ${paths[0]!}`;
  assert.equal(counters[0]!.n, 0);
  const again = await gql(srv.url, del, {
    ...admin,
    variables: { id: p.productionId, path: paths[0] },
  });
  assert.equal(again.errors?.[0].extensions.code, "NOT_FOUND");
  const reuse = await gql(
    srv.url,
    `mutation($id: ID!, $in: CreateLinkInput!) { createLink(projectId: $id, input: $in) { path } }`,
    { ...admin, variables: { id: p.productionId, in: { path: paths[0] } } },
  );
  assert.equal(reuse.errors?.[0].extensions.code, "BAD_USER_INPUT");
  assert.match(reuse.errors![0].message, /^input\.path: is taken/);
});

Deno.test("link mutations refuse bad input with BAD_USER_INPUT naming the argument, changing nothing", async () => {
  const { p, paths } = await seed(1);
  const create = `mutation($id: ID!, $in: CreateLinkInput!) {
    createLink(projectId: $id, input: $in) { path } }`;
  const update = `mutation($id: ID!, $path: String!, $in: UpdateLinkInput!) {
    updateLink(projectId: $id, path: $path, input: $in) { path } }`;
  const before = await srv.sql`select count(*)::int as n, max(updated_at) as at from links`;
  const cases: [string, Json, RegExp][] = [
    [create, { in: { expiredUrl: "javascript:alert(1)" } }, /^input\.expiredUrl: /],
    [create, { in: { maxViews: 0 } }, /^input\.maxViews: /],
    [create, { in: { path: "graphql" } }, /^input\.path: /],
    [create, { in: { iosCustomRedirect: { url: "ftp://x" } } }, /^input\.iosCustomRedirect\.url: /],
    [create, { in: { title: "x".repeat(5000) } }, /^input\.title: /],
    [update, { path: paths[0], in: {} }, /^input: give at least one field/],
    [update, { path: paths[0], in: { active: null } }, /^input\.active: /],
    [update, { path: paths[0], in: { tags: Array(101).fill("t") } }, /^input\.tags: /],
  ];
  for (const [doc, variables, message] of cases) {
    const r = await gql(srv.url, doc, {
      ...admin,
      variables: { id: p.productionId, ...variables },
    });
    assert.equal(r.errors?.[0].extensions.code, "BAD_USER_INPUT", JSON.stringify(r.errors));
    assert.match(r.errors![0].message, message);
  }
  const badId = await gql(srv.url, create, { ...admin, variables: { id: "x", in: {} } });
  assert.match(badId.errors![0].message, /^projectId /);
  const missing = await gql(srv.url, update, {
    ...admin,
    variables: { id: p.productionId, path: "nope", in: { title: "x" } },
  });
  assert.equal(missing.errors?.[0].extensions.code, "NOT_FOUND");
  const noToken = await gql(srv.url, create, { variables: { id: p.productionId, in: {} } });
  assert.equal(noToken.errors?.[0].extensions.code, "UNAUTHENTICATED");
  const after = await srv.sql`select count(*)::int as n, max(updated_at) as at from links`;
  assert.deepEqual(after, before);
});

Deno.test("sk_ keys: the admin graph takes them through the permission table, and their changes are audited as theirs", async () => {
  const { p, paths } = await seed(1);
  const key = async (scopes: string[], projectId = p.productionId) => {
    const res = await rest("POST", `/api/v1/projects/${projectId}/api_keys`, {
      name: "frontend",
      scopes,
      expires_at: null,
    });
    assert.equal(res.status, 201, res.text);
    return { headers: { Authorization: `Bearer ${res.body.api_key.value}` } };
  };
  const reader = await key(["links:read"]);
  const writer = await key(["links:read", "links:write"]);
  const other = await key(["links:read"], p.testId);
  const list =
    `query($id: ID!) { environment(projectId: $id) { links(first: 5) { edges { node { path } } } } }`;
  const read = await gql(srv.url, list, { ...reader, variables: { id: String(p.productionId) } });
  assert.equal(read.errors, undefined, JSON.stringify(read.errors));
  assert.deepEqual(read.data.environment.links.edges.map((e: Json) => e.node.path), paths);
  // Another environment's key does not see this one: null, as for an unknown environment.
  const foreign = await gql(srv.url, list, { ...other, variables: { id: String(p.productionId) } });
  assert.deepEqual(foreign.data, { environment: null }, JSON.stringify(foreign));

  const create =
    `mutation($id: ID!) { createLink(projectId: $id, input: { title: "By key" }) { path } }`;
  const audit = async () =>
    (await srv.sql`select count(*)::int as n from audit_log`)[0]!.n as number;
  const before = await audit();
  const refused = await gql(srv.url, create, {
    ...reader,
    variables: { id: String(p.productionId) },
  });
  assert.equal(refused.errors?.[0]?.extensions?.code, "FORBIDDEN");
  assert.equal(refused.errors?.[0]?.extensions?.reason, "insufficient_scope");
  assert.match(refused.errors?.[0]?.message, /links:write/);
  assert.equal(await audit(), before, "a refused mutation changes nothing");

  const made = await gql(srv.url, create, { ...writer, variables: { id: String(p.productionId) } });
  assert.equal(made.errors, undefined, JSON.stringify(made.errors));
  const entries = await srv.sql`
    select actor_type, action, target_id from audit_log where id > ${before} order by id`;
  assert.deepEqual(entries.map((e) => [e.actor_type, e.action, e.target_id]), [
    ["api_key", "link.create", made.data.createLink.path],
  ]);
});
