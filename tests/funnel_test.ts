// GET /api/v1/projects/:project_id/analytics/funnel (services/analytics/funnel.ts): views through
// the link host, attributed installs and purchases as ingestion stores them; the environment's
// funnel, one link's, the top links by revenue (order, ties, limit), period membership in a zone,
// rates and medians (null when nothing to divide or no click), purchases that do not count
// (older versions, unconverted, unattributed), and every bad parameter a 400 naming it.
import assert from "node:assert/strict";
import { mergeRollups } from "../services/analytics/rollups.ts";
import { ManualClock } from "./helpers/clock.ts";
import { callError, callTool, createKey, mcpClient } from "./helpers/mcp.ts";
import { generateLink, ingest, type Json, linkMetrics } from "./helpers/sdk.ts";
import {
  adminHeaders,
  call,
  createProject,
  CURSOR_SECRET,
  startTestServer,
} from "./helpers/server.ts";
import { ClickIds } from "../services/attribution/click_ids.ts";
import { insertInstall } from "./helpers/installs.ts";

const clock = new ManualClock("2026-11-10T12:00:00Z");
const srv = await startTestServer({ clock });
Deno.test.afterAll(() => srv.close());
const project = await createProject(srv.url);
const env = project.productionId;

const paths: string[] = [];
for (let i = 0; i < 4; i++) {
  paths.push(await generateLink(srv.url, project.key, "production", { title: `Link ${i}` }));
}
const ids = new Map<string, number>();
for (
  const row of await srv.sql<{ id: number; path: string }[]>`
  select id, path from links where environment_id = ${env}`
) ids.set(row.path, row.id);
const [a, b, c, d] = paths as [string, string, string, string];

/** `n` views of `path` through the link host at `at`. */
async function view(path: string, at: string, n = 1) {
  clock.set(at);
  for (let i = 0; i < n; i++) {
    const res = await call(srv.url, "GET", `/${path}`, {
      headers: { "User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)" },
    });
    assert.ok(res.status === 200 || res.status === 302, res.text);
  }
  await srv.views.flush();
  clock.set("2026-11-10T12:00:00Z");
}

/** An attributed install as ingestion records it (seconds: from its click; null without one). */
async function install(path: string, at: string, seconds: number | null) {
  await insertInstall(srv.sql, env, at, ids.get(path)!, seconds);
}

let tx = 0;
/** A purchase's current version as ingestion records it. */
async function purchase(
  path: string | null,
  at: string,
  converted: number | null,
  user: string | null,
  version = 1,
) {
  const hour = new Date(Math.floor(Date.parse(at) / 3_600_000) * 3_600_000);
  await srv.sql`insert into purchase_versions (environment_id, transaction_id, name, version,
      amount, link_id, hour, currency, converted, user_id)
    values (${env}, ${`t${++tx}`}, 'purchase', ${version}, ${converted ?? 500},
      ${path === null ? null : ids.get(path)!}, ${hour}, ${converted === null ? "JPY" : "USD"},
      ${converted}, ${user})`;
}

/** A purchase event as an app's backend sends it: a user, maybe a link path, one version. */
function purchaseEvent(id: string, user: string, amount: number, at: string, linkPath?: string) {
  return {
    id,
    type: "purchase",
    name: "purchase",
    occurred_at: at,
    user: { id: user },
    ...(linkPath === undefined ? {} : { link_path: linkPath }),
    purchase: {
      transaction_id: id,
      version: 1,
      amount,
      currency: "USD",
      product_id: "pro",
      store: "app_store",
    },
  };
}

function funnel(params: Record<string, string> = {}, projectId: number | string = env) {
  const qs = new URLSearchParams(params).toString();
  return call<Json>(srv.url, "GET", `/api/v1/projects/${projectId}/analytics/funnel?${qs}`, {
    headers: adminHeaders,
  });
}

// The period: 2026-11-02 and 2026-11-03 in Berlin (UTC+1), 2026-11-01T23:00Z to 2026-11-03T23:00Z.
const RANGE = { from: "2026-11-02", to: "2026-11-04", tz: "Europe/Berlin" };

// Link a: 4 views, 3 installs (clicks 10, 20 s and one without a click), 2 purchasers, 3
// purchases, 4,500 in revenue. Link b: 2 views, 1 install, 1 purchase of 4,500 by an unknown user
// (no user id). Link c: 5 views, 2 installs, no purchase. Link d: 3 views, nothing else.
await view(a, "2026-11-02T09:00:00Z", 3);
await view(a, "2026-11-03T22:59:00Z"); // Berlin's 23:59 on the 3rd: in
await view(a, "2026-11-03T23:00:00Z"); // the 4th in Berlin: out
await view(b, "2026-11-02T10:00:00Z", 2);
await view(c, "2026-11-01T23:00:00Z", 5); // midnight in Berlin: in
await view(c, "2026-11-01T22:59:59Z"); // out
await view(d, "2026-11-03T12:00:00Z", 3);

await install(a, "2026-11-02T10:00:00Z", 10);
await install(a, "2026-11-02T11:00:00Z", 20);
await install(a, "2026-11-02T12:00:00Z", null);
await install(a, "2026-11-04T12:00:00Z", 1); // out
await install(b, "2026-11-03T22:30:00Z", 100);
await install(c, "2026-11-01T23:10:00Z", 7);
await install(c, "2026-11-02T08:00:00Z", 9);
await install(c, "2026-11-01T22:10:00Z", 1_000); // out

await purchase(a, "2026-11-02T13:00:00Z", 1_000, "u1");
await purchase(a, "2026-11-02T14:00:00Z", 1_500, "u1");
await purchase(a, "2026-11-03T14:00:00Z", 2_000, "u2");
await purchase(a, "2026-11-03T15:00:00Z", null, "u3"); // no rate: counts nowhere
await purchase(a, "2026-11-03T15:00:00Z", 0, "u4", 0); // a version-0 record: not a purchase
await purchase(a, "2026-11-05T15:00:00Z", 9_000, "u5"); // out
await purchase(b, "2026-11-03T16:00:00Z", 4_500, null);
await purchase(null, "2026-11-03T16:00:00Z", 7_000, "u6"); // not attributed

function figures(
  views: number,
  installs: number,
  purchasers: number,
  purchases: number,
  revenue: number,
  median: number | null,
) {
  const rate = (n: number, d: number) => (d === 0 ? null : n / d);
  return {
    views,
    installs,
    purchasers,
    purchases,
    revenue,
    installs_per_view: rate(installs, views),
    purchasers_per_install: rate(purchasers, installs),
    purchases_per_purchaser: rate(purchases, purchasers),
    median_seconds_to_install: median,
  };
}

const A = figures(4, 3, 2, 3, 4_500, 15);
const B = figures(2, 1, 0, 1, 4_500, 100);
const C = figures(5, 2, 0, 0, 0, 8);
// The environment: distinct purchasers u1 and u2; median of 10, 20, 100, 7, 9.
const TOTAL = figures(14, 6, 2, 4, 9_000, 10);

Deno.test("funnel: the environment's figures, rates and median over a range in a zone", async () => {
  const res = await funnel(RANGE);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.deepEqual(res.body, {
    from: "2026-11-02T00:00:00+01:00",
    to: "2026-11-04T00:00:00+01:00",
    tz: "Europe/Berlin",
    currency: "USD",
    totals: TOTAL,
  });
});

Deno.test("funnel: the same once the rollups are merged (views from the margins)", async () => {
  await mergeRollups(srv.sql, new Date("2026-11-10T00:00:00Z"));
  const res = await funnel(RANGE);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body.totals, TOTAL);
  const grouped = await funnel({ ...RANGE, group_by: "link" });
  assert.deepEqual(grouped.body.groups.map((g: Json) => g.totals), [A, B, C]);
});

Deno.test("funnel: one link's, and a path that names no link counts nothing", async () => {
  const res = await funnel({ ...RANGE, link: a });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body.totals, A);
  const none = await funnel({ ...RANGE, link: "no-such-link" });
  assert.equal(none.status, 200, none.text);
  assert.deepEqual(none.body.totals, figures(0, 0, 0, 0, 0, null));
  // Views but nothing after: the later rates have nothing to divide.
  const viewed = await funnel({ ...RANGE, link: d });
  assert.deepEqual(viewed.body.totals, figures(3, 0, 0, 0, 0, null));
});

Deno.test("funnel: group_by=link lists the links with an install or a purchase, by revenue", async () => {
  const res = await funnel({ ...RANGE, group_by: "link" });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body.totals, TOTAL);
  // a and b tie on revenue; a has more purchases. d has only views: not listed.
  assert.deepEqual(res.body.groups, [
    { key: a, totals: A },
    { key: b, totals: B },
    { key: c, totals: C },
  ]);
  const one = await funnel({ ...RANGE, group_by: "link", limit: "1" });
  assert.deepEqual(one.body.groups, [{ key: a, totals: A }]);
  const linkOnly = await funnel({ ...RANGE, group_by: "link", link: c });
  assert.deepEqual(linkOnly.body.totals, C);
  assert.deepEqual(linkOnly.body.groups, [{ key: c, totals: C }]);
});

Deno.test("funnel: ties on revenue, purchases and installs go by views, then by link id", async () => {
  const p = await createProject(srv.url, { name: "Ties" });
  const tied: string[] = [];
  for (let i = 0; i < 3; i++) tied.push(await generateLink(srv.url, p.key, "production"));
  const [x, , z] = tied as [string, string, string];
  const linkIds = await srv.sql<{ id: number; path: string }[]>`
    select id, path from links where environment_id = ${p.productionId} order by id`;
  const idOf = (path: string) => linkIds.find((l) => l.path === path)!.id;
  for (const path of tied) {
    await insertInstall(srv.sql, p.productionId, "2026-11-02T10:00:00Z", idOf(path), 5);
  }
  // z has a view, so it leads; x and y tie on everything and go by id.
  await view(z, "2026-11-02T09:00:00Z");
  const res = await funnel(
    { from: "2026-11-02T00:00:00Z", to: "2026-11-03T00:00:00Z", group_by: "link", limit: "2" },
    p.productionId,
  );
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body.groups.map((g: Json) => g.key), [z, x]);
  assert.deepEqual(res.body.groups[0].totals, figures(1, 1, 0, 0, 0, 5));
  // A new project with no purchases: revenue's currency is its reporting currency.
  assert.equal(res.body.currency, "USD");

  // With purchases: links as good as the limit-th on revenue and purchases go by installs; a
  // link with installs alone comes after every link with a purchase.
  const more: string[] = [];
  for (let i = 0; i < 3; i++) more.push(await generateLink(srv.url, p.key, "production"));
  const [u, v, w] = more as [string, string, string];
  const ids2 = new Map((await srv.sql<{ id: number; path: string }[]>`
    select id, path from links where environment_id = ${p.productionId}`).map((
    r,
  ) => [r.path, r.id]));
  for (const [i, path] of [u, v, w].entries()) {
    await srv.sql`insert into purchase_versions (environment_id, transaction_id, name, version,
        amount, link_id, hour, currency, converted, user_id)
      values (${p.productionId}, ${`tie${i}`}, 'purchase', 1, 300, ${ids2.get(path)!},
        '2026-11-02T11:00:00Z', 'USD', 300, ${`buyer${i}`})`;
  }
  for (const path of [v, v, w]) {
    await insertInstall(srv.sql, p.productionId, "2026-11-02T10:30:00Z", ids2.get(path)!, null);
  }
  const keys = async (limit: number) =>
    (await funnel(
      {
        from: "2026-11-02T00:00:00Z",
        to: "2026-11-03T00:00:00Z",
        group_by: "link",
        limit: `${limit}`,
      },
      p.productionId,
    )).body.groups.map((g: Json) => g.key);
  assert.deepEqual(await keys(1), [v]);
  assert.deepEqual(await keys(2), [v, w]);
  assert.deepEqual(await keys(3), [v, w, u]);
  assert.deepEqual(await keys(10), [v, w, u, z, x, tied[1]]);
});

Deno.test("funnel: by default the last 30 days up to now, in whole hours of UTC", async () => {
  const res = await funnel();
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.from, "2026-10-11T12:00:00+00:00");
  assert.equal(res.body.to, "2026-11-10T12:00:00+00:00");
  assert.equal(res.body.groups, undefined);
  // Everything seeded falls in those 30 days, the purchase of the 5th and the late install too.
  assert.equal(res.body.totals.purchases, 5);
  assert.equal(res.body.totals.installs, 8);
});

Deno.test("funnel: every bad parameter is a 400 invalid_field naming it", async () => {
  const cases: [Record<string, string>, string][] = [
    [{ tz: "Mars/Olympus" }, "tz"],
    [{ tz: "Asia/Kolkata" }, "tz"],
    [{ from: "2025-01-01T00:00:00Z", to: "2026-03-01T00:00:00Z" }, "to"],
    [{ from: "2026-03-01T00:00:00Z", to: "2026-02-01T00:00:00Z" }, "to"],
    [{ from: "yesterday" }, "from"],
    [{ group_by: "country" }, "group_by"],
    [{ group_by: "link", limit: "0" }, "limit"],
    [{ limit: "1001" }, "limit"],
    [{ link: "" }, "link"],
    [{ interval: "day" }, "interval"],
    [{ metrics: "views" }, "metrics"],
    [{ "filter[country]": "DE" }, "filter[country]"],
  ];
  for (const [params, field] of cases) {
    const res = await funnel(params);
    assert.equal(res.status, 400, `${JSON.stringify(params)}: ${res.text}`);
    assert.equal(res.body.error.code, "invalid_field");
    assert.ok(res.body.error.message.startsWith(`${field}: `), res.body.error.message);
  }
  const twice = await call(
    srv.url,
    "GET",
    `/api/v1/projects/${env}/analytics/funnel?tz=UTC&tz=Europe/Berlin`,
    { headers: adminHeaders },
  );
  assert.equal(twice.status, 400);
  assert.ok(twice.body.error.message.startsWith("tz: "));
  const anonymous = await call(srv.url, "GET", `/api/v1/projects/${env}/analytics/funnel`);
  assert.equal(anonymous.status, 401);
  const unknown = await call(srv.url, "GET", "/api/v1/projects/999999/analytics/funnel", {
    headers: adminHeaders,
  });
  assert.equal(unknown.status, 404);
});

Deno.test("funnel: the MCP tool takes the route's parameters and answers its figures", async () => {
  const key = await createKey(srv.url, env, ["analytics:read"]);
  const client = await mcpClient(srv.url, key.value);
  try {
    const cases: Record<string, unknown>[] = [
      { ...RANGE },
      { ...RANGE, group_by: "link", limit: 2 },
      { ...RANGE, link: a },
    ];
    for (const args of cases) {
      const rest = await funnel(Object.fromEntries(
        Object.entries(args).map(([k, v]) => [k, String(v)]),
      ));
      assert.equal(rest.status, 200, rest.text);
      const result = await callTool(client, "funnel", args);
      assert.deepEqual(result.structuredContent, rest.body, JSON.stringify(args));
    }
    const text = (await callTool(client, "funnel", { ...RANGE, group_by: "link", limit: 1 }))
      .content[0] as { text: string };
    assert.equal(
      text.text,
      "From 2026-11-02T00:00:00+01:00 to 2026-11-04T00:00:00+01:00 (Europe/Berlin): views 14, " +
        "installs 6 (42.9 %), purchasers 2 (33.3 %), purchases 4, revenue 9000 (USD minor " +
        "units); median 10 s from click to install\n" +
        `${a}: views 4, installs 3 (75.0 %), purchasers 2 (66.7 %), purchases 3, revenue 4500 ` +
        "(USD minor units); median 15 s from click to install",
    );
    assert.match(
      await callError(client, "funnel", { group_by: "country" }),
      /^invalid_field: group_by/,
    );
    assert.match(
      await callError(client, "funnel", { tz: "Mars/Olympus" }),
      /^invalid_field: tz: must be an IANA time zone name/,
    );
  } finally {
    await client.close();
  }
});

Deno.test("funnel: end to end, a view on the link host, an install by its click id or the link's path, purchases sent with only the user's id", async () => {
  const p = await createProject(srv.url, { name: "End to end" });
  const path = await generateLink(srv.url, p.key, "production", { title: "Poster" });
  const [link] = await srv.sql<{ id: number }[]>`select id from links where path = ${path}`;
  const T0 = "2026-11-09T10:00:00.000Z";
  const after = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();
  // Two views; the app gets the first's click id from the link host (in the store's referrer,
  // or in the URL the iOS page copies): the one stored in the view's envelope.
  await view(path, T0, 2);
  const [stored] = await srv.sql<{ body: string }[]>`
    select body from analytics_events where environment_id = ${p.productionId} and type = 'view'
    order by event_id limit 1`;
  const clickId = JSON.parse(stored!.body).attribution.click_id as string;
  assert.equal(new ClickIds(CURSOR_SECRET).read(clickId)?.linkId, link!.id);
  await ingest(srv.url, p.key, "production", [
    // 5 minutes after the click, with its id; another user's install by the link's path.
    {
      id: "i1",
      type: "install",
      occurred_at: after(300),
      user: { id: "u-1" },
      attribution: { click_id: clickId },
    },
    { id: "i2", type: "install", occurred_at: after(600), user: { id: "u-2" }, link_path: path },
  ]);
  await ingest(srv.url, p.key, "production", [
    // The backend's purchases: only the user's id. u-1 buys twice.
    purchaseEvent("p1", "u-1", 1_299, after(3_600)),
    purchaseEvent("p2", "u-1", 499, after(7_200)),
    purchaseEvent("p3", "u-2", 999, after(7_200)),
    // A stranger's purchase: attributed to nothing, counted nowhere in the funnel.
    purchaseEvent("p4", "stranger", 5_000, after(7_200)),
  ]);
  const res = await funnel(
    { from: "2026-11-09", to: "2026-11-10", group_by: "link" },
    p.productionId,
  );
  assert.equal(res.status, 200, res.text);
  const expected = figures(2, 2, 2, 3, 2_797, null);
  // The median of one install with a click (300 s) and one without (no click time).
  expected.median_seconds_to_install = 300;
  assert.deepEqual(res.body.totals, expected);
  assert.deepEqual(res.body.groups, [{ key: path, totals: expected }]);
  // The link's lifetime counters agree: the same installs and revenue.
  const counters = await linkMetrics(srv.url, p.key, path);
  assert.equal(counters.total_installs, 2);
  assert.equal(counters.total_revenue, 2_797);
});

Deno.test("funnel: grouped and alone, the same totals, before and after a link with purchases is deleted", async () => {
  // Grouped, the totals' purchases and revenue are summed per link by the top links' statement
  // (every counted purchase has a link that exists: a deleted link's are set to none).
  const p = await createProject(srv.url, { name: "Deleted link" });
  const [kept, gone] = [
    await generateLink(srv.url, p.key, "production", { title: "Kept" }),
    await generateLink(srv.url, p.key, "production", { title: "Gone" }),
  ];
  const at = (s: number) => new Date(Date.parse("2026-11-09T10:00:00Z") + s * 1000).toISOString();
  const buy = (id: string, user: string, path: string, amount: number, s: number) =>
    purchaseEvent(id, user, amount, at(s), path);
  await ingest(srv.url, p.key, "production", [
    buy("k1", "u-1", kept, 1_000, 0),
    buy("k2", "u-2", kept, 500, 60),
    buy("g1", "u-1", gone, 2_000, 120),
    buy("g2", "u-3", gone, 250, 180),
  ]);
  const range = { from: "2026-11-09", to: "2026-11-10" };
  const both = async () => {
    const alone = await funnel(range, p.productionId);
    const grouped = await funnel({ ...range, group_by: "link" }, p.productionId);
    assert.equal(alone.status, 200, alone.text);
    assert.equal(grouped.status, 200, grouped.text);
    assert.deepEqual(grouped.body.totals, alone.body.totals);
    return grouped.body;
  };
  const before = await both();
  assert.deepEqual(
    [before.totals.purchases, before.totals.revenue, before.totals.purchasers],
    [4, 3_750, 3],
  );
  assert.deepEqual(before.groups.map((g: Json) => g.key), [gone, kept]);
  const deleted = await call(
    srv.url,
    "DELETE",
    `/api/v1/projects/${p.productionId}/links/${gone}`,
    {
      headers: adminHeaders,
    },
  );
  assert.equal(deleted.status, 204, deleted.text);
  const after = await both();
  assert.deepEqual(
    [after.totals.purchases, after.totals.revenue, after.totals.purchasers],
    [2, 1_500, 2],
  );
  assert.deepEqual(after.groups.map((g: Json) => g.key), [kept]);
});
