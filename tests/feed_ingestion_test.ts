// End to end: events sent through POST /api/v1/sdk/events (and link-host views) come out of
// GET /api/v1/projects/:project_id/event_stream.
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { readAll, readOk } from "./helpers/feed.ts";
import { generateLink, ingest } from "./helpers/sdk.ts";
import { call, createFeedToken, createProject, startTestServer } from "./helpers/server.ts";

const clock = new ManualClock("2026-05-10T09:00:00Z");
const srv = await startTestServer({ clock });
Deno.test.afterAll(() => srv.close());

const occurredAt = () => new Date(clock.now().getTime() - 60_000).toISOString();

Deno.test("events ingested after capture starts reach the feed in arrival order, once each", async () => {
  const p = await createProject(srv.url);
  await ingest(srv.url, p.key, "production", [{ type: "install", occurred_at: occurredAt() }]);

  const token = await createFeedToken(srv.url, p.productionId);
  await ingest(srv.url, p.key, "production", [
    { id: "c-1", type: "install", occurred_at: occurredAt() },
    {
      id: "c-2",
      type: "purchase",
      name: "purchase",
      occurred_at: occurredAt(),
      purchase: {
        transaction_id: "t-1",
        version: 1,
        amount: 499,
        currency: "EUR",
        product_id: "pro",
        store: "app_store",
      },
    },
  ]);
  await ingest(srv.url, p.key, "production", [
    { id: "c-3", type: "custom", name: "level_up", occurred_at: occurredAt() },
    // A redelivered batch element is stored once and served once.
    { id: "c-1", type: "install", occurred_at: occurredAt() },
  ]);
  await ingest(srv.url, p.key, "development", [{ type: "open", occurred_at: occurredAt() }]);

  const { events } = await readAll(srv.url, p.productionId, token.value, { limit: 2 });
  assert.deepEqual(events.map((e) => e.type), ["install", "purchase", "custom"]);
  assert.equal(new Set(events.map((e) => e.id)).size, 3);
  for (const e of events) {
    assert.equal(e.schema_version, 1);
    assert.match(e.id, /^evt_/);
    assert.deepEqual(e.project, { id: p.hashid, test: false });
  }
  const purchase = events[1]!;
  assert.equal(purchase.name, "purchase");
  assert.deepEqual(purchase.purchase, {
    transaction_id: "t-1",
    version: 1,
    amount: 499,
    currency: "EUR",
    product_id: "pro",
    store: "app_store",
  });
  assert.equal(events[2]!.name, "level_up");

  const purchases = await readOk(srv.url, p.productionId, token.value, { types: ["purchase"] });
  assert.deepEqual(purchases.events.map((e) => e.id), [purchase.id]);
});

Deno.test("a link-host view is a view event in the feed; the test environment's feed says test", async () => {
  const p = await createProject(srv.url);
  const token = await createFeedToken(srv.url, p.testId);
  const path = await generateLink(srv.url, p.key, "development", { title: "Hi" });
  const hit = await call(srv.url, "GET", `/${path}`, {
    headers: { "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0" },
  });
  assert.ok(hit.status === 200 || hit.status === 302, `link host answered ${hit.status}`);
  await srv.views.flush();
  await ingest(srv.url, p.key, "development", [
    { type: "app_open", occurred_at: occurredAt(), link_path: path },
  ]);

  const { events } = await readAll(srv.url, p.testId, token.value);
  assert.deepEqual(events.map((e) => e.type), ["view", "app_open"]);
  for (const e of events) {
    assert.deepEqual(e.project, { id: p.hashid, test: true });
    assert.equal((e.link as { path: string } | undefined)?.path, path);
  }
});

Deno.test("envelopes are stored and served as serialised, escapes and all", async () => {
  const p = await createProject(srv.url);
  const token = await createFeedToken(srv.url, p.productionId);
  const tricky = {
    quote: 'say "hi" \\ back\\slash',
    control: "tab\tnew\nline\u0001",
    separators: "\u2028\u2029",
    emoji: "🙂 Grüße 日本",
    html: "</script><b>&amp;",
  };
  await ingest(srv.url, p.key, "production", [
    { type: "custom", name: "tricky", occurred_at: occurredAt(), user: tricky },
    { type: "install", occurred_at: occurredAt() },
  ]);
  const res = await call(srv.url, "GET", `/api/v1/projects/${p.productionId}/event_stream`, {
    headers: { Authorization: `Bearer ${token.value}` },
  });
  assert.equal(res.status, 200, res.text);
  const events = res.body.events as { user?: unknown }[];
  assert.deepEqual(events[0]!.user, tricky);
  // The served text is each envelope exactly as JSON.stringify wrote it: no whitespace added,
  // no escape rewritten, in both tables. Joined on the environment too: on Citus both tables are
  // distributed by it, and a join on any other column is refused.
  const rows = await srv.sql<{ feed: string; history: string }[]>`
    select f.body as feed, a.body as history
    from feed_events f join analytics_events a
      on a.environment_id = f.environment_id and a.event_id = f.body::json->>'id'
    where f.environment_id = ${Number(p.productionId)} order by f.seq`;
  assert.equal(rows.length, 2);
  for (const row of rows) {
    assert.equal(row.feed, JSON.stringify(JSON.parse(row.feed)));
    assert.equal(row.history, row.feed);
    assert.ok(res.text.includes(row.feed));
  }
});
