import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import {
  deactivateLink,
  generateLink,
  ingest,
  type Json,
  linkMetrics,
  metrics,
  type MetricsItem,
  sdkHeaders,
} from "./helpers/sdk.ts";
import { call, createProject, startTestServer } from "./helpers/server.ts";
import { LIFETIME_COUNTERS } from "../services/links/counters.ts";

const NOW = "2026-03-01T12:00:00.000Z";
const srv = await startTestServer({ clock: new ManualClock(NOW) });
Deno.test.afterAll(() => srv.close());

const project = await createProject(srv.url);

const TOTALS = LIFETIME_COUNTERS;

function assertTotals(
  item: MetricsItem,
  expected: Partial<Record<(typeof TOTALS)[number], number>>,
) {
  const actual = Object.fromEntries(TOTALS.map((t) => [t, item[t]]));
  const wanted = Object.fromEntries(TOTALS.map((t) => [t, expected[t] ?? 0]));
  assert.deepEqual(actual, wanted);
}

let seq = 0;
function ev(
  type: string,
  path: string | undefined,
  extra: Record<string, Json> = {},
): Record<string, Json> {
  return { id: `m-${++seq}`, type, occurred_at: NOW, link_path: path, ...extra };
}

function purchase(
  path: string | undefined,
  transaction_id: string,
  version: number,
  amount: number,
  name = "purchase",
) {
  return ev("purchase", path, {
    name,
    purchase: {
      transaction_id,
      version,
      amount,
      currency: "USD",
      product_id: "pro",
      store: "app_store",
    },
  });
}

const counterCases: [string, (typeof TOTALS)[number]][] = [
  ["open", "total_opens"],
  ["install", "total_installs"],
  ["reinstall", "total_reinstalls"],
  ["reactivation", "total_reactivations"],
  ["app_open", "total_app_opens"],
  ["user_referred", "total_user_referred"],
];

for (const [type, total] of counterCases) {
  Deno.test(`metrics: each ${type} event adds one to ${total} of its link, and a duplicate id nothing`, async () => {
    const path = await generateLink(srv.url, project.key, "production");
    const other = await generateLink(srv.url, project.key, "production");
    const batch = [ev(type, path), ev(type, path), ev(type, undefined), ev(type, "unknown-path")];
    assert.deepEqual(await ingest(srv.url, project.key, "production", batch), {
      accepted: 4,
      duplicates: 0,
    });
    assertTotals(await linkMetrics(srv.url, project.key, path), { [total]: 2 });
    assert.deepEqual(await ingest(srv.url, project.key, "production", batch), {
      accepted: 0,
      duplicates: 4,
    });
    assertTotals(await linkMetrics(srv.url, project.key, path), { [total]: 2 });
    assertTotals(await linkMetrics(srv.url, project.key, other), {});
  });
}

Deno.test("metrics: a session adds its time_spent to total_time_spent, and a duplicate id nothing", async () => {
  const path = await generateLink(srv.url, project.key, "production");
  const batch = [
    ev("session", path, { time_spent: 30 }),
    ev("session", path, { time_spent: 12 }),
    ev("session", path, { time_spent: 0 }),
  ];
  await ingest(srv.url, project.key, "production", batch);
  assertTotals(await linkMetrics(srv.url, project.key, path), { total_time_spent: 42 });
  await ingest(srv.url, project.key, "production", batch);
  assertTotals(await linkMetrics(srv.url, project.key, path), { total_time_spent: 42 });
});

Deno.test("metrics: custom events move no counter", async () => {
  const path = await generateLink(srv.url, project.key, "production");
  await ingest(srv.url, project.key, "production", [ev("custom", path, { name: "x" })]);
  assertTotals(await linkMetrics(srv.url, project.key, path), {});
});

Deno.test("metrics: each human link-host view adds one to total_views; crawlers and HEAD do not", async () => {
  const path = await generateLink(srv.url, project.key, "production", { title: "Viewed" });
  const get = (ua: string, method = "GET") =>
    call(srv.url, method, `/${path}`, { headers: { "User-Agent": ua } });
  assert.equal((await get("Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0")).status, 200);
  assert.equal((await get("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)")).status, 200);
  assert.equal(
    (await get("Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)")).status,
    200,
  );
  assert.equal((await get("Mozilla/5.0 (Android 14)", "HEAD")).status, 200);
  await srv.views.flush();
  assertTotals(await linkMetrics(srv.url, project.key, path), { total_views: 2 });
});

Deno.test("metrics: total_revenue keeps, per (transaction_id, name), only the highest version", async () => {
  const path = await generateLink(srv.url, project.key, "production");
  const revenue = async () => (await linkMetrics(srv.url, project.key, path)).total_revenue;

  await ingest(srv.url, project.key, "production", [purchase(path, "tx-1", 1, 1000)]);
  assert.equal(await revenue(), 1000);
  // A correction replaces the amount, it is not added.
  await ingest(srv.url, project.key, "production", [purchase(path, "tx-1", 2, 800)]);
  assert.equal(await revenue(), 800);
  // A late older version, or the same version again, changes nothing.
  await ingest(srv.url, project.key, "production", [purchase(path, "tx-1", 1, 5000)]);
  await ingest(srv.url, project.key, "production", [purchase(path, "tx-1", 2, 7000)]);
  assert.equal(await revenue(), 800);
  // Another name of the same transaction is a separate record.
  await ingest(srv.url, project.key, "production", [purchase(path, "tx-1", 1, 300, "renewal")]);
  assert.equal(await revenue(), 1100);
  // Another transaction adds.
  await ingest(srv.url, project.key, "production", [purchase(path, "tx-2", 1, 50)]);
  assert.equal(await revenue(), 1150);
  // A duplicate client id moves nothing, even with a higher version.
  const dup = purchase(path, "tx-3", 1, 10);
  await ingest(srv.url, project.key, "production", [dup]);
  assert.deepEqual(
    await ingest(srv.url, project.key, "production", [{
      ...dup,
      purchase: { ...dup.purchase, version: 9, amount: 999 },
    }]),
    { accepted: 0, duplicates: 1 },
  );
  assert.equal(await revenue(), 1160);
  const [row] = await srv.sql`
    select version, amount from purchase_versions
    where environment_id = ${project.productionId} and transaction_id = 'tx-1' and name = 'purchase'
  `;
  assert.deepEqual({ version: row!.version, amount: Number(row!.amount) }, {
    version: 2,
    amount: 800,
  });
  // Only purchases move revenue; the other totals stay.
  assertTotals(await linkMetrics(srv.url, project.key, path), { total_revenue: 1160 });
});

Deno.test("metrics: versions of one transaction within one batch count the highest only", async () => {
  const path = await generateLink(srv.url, project.key, "production");
  await ingest(srv.url, project.key, "production", [
    purchase(path, "batch-tx", 1, 100),
    purchase(path, "batch-tx", 3, 300),
    purchase(path, "batch-tx", 2, 200),
    purchase(path, "batch-tx", 3, 999),
  ]);
  assert.equal((await linkMetrics(srv.url, project.key, path)).total_revenue, 300);
});

Deno.test("metrics: a correction attributed to another link moves the revenue there", async () => {
  const a = await generateLink(srv.url, project.key, "production");
  const b = await generateLink(srv.url, project.key, "production");
  await ingest(srv.url, project.key, "production", [purchase(a, "move-tx", 1, 1000)]);
  await ingest(srv.url, project.key, "production", [purchase(b, "move-tx", 2, 700)]);
  assert.equal((await linkMetrics(srv.url, project.key, a)).total_revenue, 0);
  assert.equal((await linkMetrics(srv.url, project.key, b)).total_revenue, 700);
  // First unattributed, then corrected onto a link: the link gets the whole new amount.
  await ingest(srv.url, project.key, "production", [purchase(undefined, "late-tx", 1, 400)]);
  await ingest(srv.url, project.key, "production", [purchase(a, "late-tx", 2, 450)]);
  assert.equal((await linkMetrics(srv.url, project.key, a)).total_revenue, 450);
});

Deno.test("metrics: purchase records are per environment", async () => {
  const prod = await generateLink(srv.url, project.key, "production");
  const dev = await generateLink(srv.url, project.key, "development");
  await ingest(srv.url, project.key, "production", [purchase(prod, "env-tx", 5, 500)]);
  await ingest(srv.url, project.key, "development", [purchase(dev, "env-tx", 1, 100)]);
  assert.equal((await linkMetrics(srv.url, project.key, prod)).total_revenue, 500);
  assert.equal((await linkMetrics(srv.url, project.key, dev, "test")).total_revenue, 100);
});

Deno.test("GET /api/v1/sdk/metrics_for_project lists active links with every field, by views then id", async () => {
  const p = await createProject(srv.url, { name: "Metrics" });
  const empty = await call(srv.url, "GET", "/api/v1/sdk/metrics_for_project", {
    headers: sdkHeaders(p.key, "production"),
  });
  assert.equal(empty.status, 200);
  assert.match(empty.headers.get("content-type")!, /^application\/json/);
  assert.deepEqual(empty.body, []);

  const a = await generateLink(srv.url, p.key, "production", {
    title: "Alpha",
    tags: '["x","y"]',
    tracking_campaign: "spring",
  });
  const b = await generateLink(srv.url, p.key, "production", { title: "" });
  const c = await generateLink(srv.url, p.key, "production", { title: "Gamma" });
  const d = await generateLink(srv.url, p.key, "production", { title: "Delta" });
  const off = await generateLink(srv.url, p.key, "production", { title: "Off" });
  const dev = await generateLink(srv.url, p.key, "development", { title: "Dev" });
  const views = { [a]: 3, [b]: 1, [c]: 3, [off]: 9 };
  await ingest(srv.url, p.key, "production", [
    ...Object.entries(views).flatMap(([path, n]) =>
      Array.from({ length: n }, () => ({ type: "open", occurred_at: NOW, link_path: path }))
    ),
  ]);
  for (const [path, n] of Object.entries(views)) {
    for (let i = 0; i < n; i++) {
      // A person's browser: curl is a known bot, whose hits are no views.
      await call(srv.url, "GET", `/${path}`, {
        headers: { "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0" },
      });
    }
  }
  await deactivateLink(srv.url, p.productionId, off);
  // Views are written behind the responses: count them once they are all stored.
  await srv.views.flush();

  const items = await metrics(srv.url, p.key, "production");
  assert.deepEqual(items.map((i) => i.path), [a, c, b, d]);
  const ids = Object.fromEntries(
    (await srv.sql<
      { path: string; id: number }[]
    >`select path, id from links where environment_id = ${p.productionId}`)
      .map((r) => [r.path, r.id]),
  );
  assert.ok(ids[a]! < ids[c]!);
  assert.deepEqual(items[0], {
    id: ids[a],
    name: "Alpha",
    path: a,
    title: "Alpha",
    active: true,
    sdk_generated: true,
    tags: ["x", "y"],
    tracking_campaign: "spring",
    total_views: 3,
    total_opens: 3,
    total_installs: 0,
    total_reinstalls: 0,
    total_time_spent: 0,
    total_reactivations: 0,
    total_app_opens: 0,
    total_user_referred: 0,
    total_revenue: 0,
  });
  // No title: the name is the path; no campaign: the field is absent.
  assert.equal(items[2]!.name, b);
  assert.equal(items[2]!.title, "");
  assert.ok(!("tracking_campaign" in items[2]!));
  assert.equal(typeof items[3]!.total_views, "number");

  // The test environment has its own links, read with ENVIRONMENT test.
  const testItems = await metrics(srv.url, p.key, "test");
  assert.deepEqual(testItems.map((i) => i.path), [dev]);
});

Deno.test("GET /api/v1/sdk/metrics_for_project: titles, tags and campaigns of any text stay valid JSON", async () => {
  const p = await createProject(srv.url, { name: "Texts" });
  const nasty = `"quoted" \\ back\tslash\n line\u2028sep ü 😀 </script>`;
  const res = await call(srv.url, "POST", "/api/v1/sdk/generate_link", {
    headers: { "PROJECT-KEY": p.key, "ENVIRONMENT": "production" },
    body: {
      title: nasty,
      tags: JSON.stringify([nasty, "plain"]),
      tracking_campaign: nasty,
    },
  });
  assert.equal(res.status, 200, res.text);
  const metrics = await call(srv.url, "GET", "/api/v1/sdk/metrics_for_project", {
    headers: { "PROJECT-KEY": p.key, "ENVIRONMENT": "production" },
  });
  assert.equal(metrics.status, 200);
  const [item] = JSON.parse(metrics.text);
  assert.equal(item.title, nasty);
  assert.equal(item.name, nasty);
  assert.deepEqual(item.tags, [nasty, "plain"]);
  assert.equal(item.tracking_campaign, nasty);
  assert.equal(item.active, true);
  assert.equal(item.total_views, 0);
});
