// The feed's seven-day window (by received_at, on the injected clock), the retention purge and
// the background job that runs it.
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { purgeExpired } from "../services/feed/retention.ts";
import { startBackgroundJobs } from "../services/maintenance/jobs.ts";
import { silentLogger } from "./helpers/clock.ts";
import { capture, readAll, readOk, sleep } from "./helpers/feed.ts";
import { createFeedToken, createProject, startTestServer } from "./helpers/server.ts";
import { gql } from "./helpers/graphql.ts";

const DAY = 24 * 60 * 60 * 1000;
const clock = new ManualClock("2026-04-01T12:00:00Z");
const srv = await startTestServer({ clock });
Deno.test.afterAll(() => srv.close());

const count = async (table: "feed_events" | "analytics_events" | "feed_rate_hits") =>
  (await srv.sql<{ n: number }[]>`select count(*)::int as n from ${srv.sql(table)}`)[0]!.n;

/** Empties the purgeable tables so that each test counts only its own rows. */
async function purgeEverything() {
  await srv.sql`delete from feed_events`;
  await srv.sql`delete from analytics_events`;
  await srv.sql`delete from feed_rate_hits`;
}

async function insertAnalytics(environmentId: number, receivedAt: Date, n: number) {
  for (let i = 0; i < n; i++) {
    await srv.sql`
      insert into analytics_events (environment_id, event_id, type, occurred_at, received_at, body)
      values (${environmentId}, ${"evt_" + crypto.randomUUID()}, 'install', ${receivedAt},
        ${receivedAt}, '{}')
    `;
  }
}

Deno.test("event_stream serves only events received in the last seven days, by the injected clock", async () => {
  await purgeEverything();
  const p = await createProject(srv.url);
  const token = await createFeedToken(srv.url, p.productionId);
  const start = clock.now().getTime();
  const old = await capture(srv.sql, p.productionId, p.hashid, ["install", "open"], clock);
  clock.set(new Date(start + 3 * DAY));
  const middle = await capture(srv.sql, p.productionId, p.hashid, ["view"], clock);
  clock.set(new Date(start + 6 * DAY));
  const recent = await capture(srv.sql, p.productionId, p.hashid, ["purchase"], clock);
  const firstPage = await readOk(srv.url, p.productionId, token.value, { limit: 1 });

  const ids = async (after?: string) =>
    (await readAll(srv.url, p.productionId, token.value, { after })).events.map((e) => e.id);
  assert.deepEqual(await ids(), [...old, ...middle, ...recent]);

  // Exactly seven days old is still inside; a millisecond more is not, filtered or not (a
  // filtered read walks the events by type: its own statement, with its own cutoff).
  const filtered = async (types: string[]) =>
    (await readAll(srv.url, p.productionId, token.value, { types })).events
      .map((e) => e.id);
  clock.set(new Date(start + 7 * DAY));
  assert.deepEqual(await ids(), [...old, ...middle, ...recent]);
  assert.deepEqual(await filtered(["install", "purchase"]), [old[0], ...recent]);
  clock.set(new Date(start + 7 * DAY + 1));
  assert.deepEqual(await ids(), [...middle, ...recent]);
  assert.deepEqual(await filtered(["install", "purchase"]), [...recent]);
  assert.deepEqual(await filtered(["open"]), []);
  // GraphQL's feed reads the same pages.
  const graph = await gql(
    srv.url,
    `{ eventFeed(projectId: "${p.productionId}", eventTypes: [install, view]) {
      edges { node { id } } } }`,
    { headers: { Authorization: `Bearer ${token.value}` } },
  );
  assert.deepEqual(graph.data.eventFeed.edges.map((e: { node: { id: string } }) => e.node.id), [
    ...middle,
  ]);
  // A cursor pointing into expired events continues with what is retained.
  assert.deepEqual(await ids(firstPage.next_after), [...middle, ...recent]);
  clock.set(new Date(start + 13 * DAY + 1));
  assert.deepEqual(await ids(), []);
  // Still stored until the purge runs: the read filters by itself.
  assert.equal(await count("feed_events"), 4);
});

Deno.test("purgeExpired deletes expired feed events, analytics history and stale rate hits in bounded batches", async () => {
  await purgeEverything();
  const p = await createProject(srv.url);
  const token = await createFeedToken(srv.url, p.productionId);
  const start = clock.now().getTime();
  await capture(srv.sql, p.productionId, p.hashid, Array(7).fill("install"), clock);
  await insertAnalytics(p.productionId, new Date(start), 5);
  for (let i = 0; i < 3; i++) await readOk(srv.url, p.productionId, token.value);
  assert.equal(await count("feed_rate_hits"), 3);

  clock.set(new Date(start + 8 * DAY));
  const kept = await capture(srv.sql, p.productionId, p.hashid, ["view", "open"], clock);
  await insertAnalytics(p.productionId, clock.now(), 2);

  // Bounded: at most batchSize × maxBatches rows per table and pass.
  const first = await purgeExpired(srv.sql, clock.now(), 90, { batchSize: 2, maxBatches: 2 });
  assert.deepEqual(first, { ran: true, feedEvents: 4, analyticsEvents: 0, rateHits: 3 });
  const second = await purgeExpired(srv.sql, clock.now(), 90, { batchSize: 2 });
  assert.deepEqual(second, { ran: true, feedEvents: 3, analyticsEvents: 0, rateHits: 0 });
  assert.equal(await count("feed_events"), 2);
  assert.deepEqual(
    (await readAll(srv.url, p.productionId, token.value)).events.map((e) => e.id),
    kept,
  );

  // The analytics history keeps its own, longer window (analyticsRetentionDays).
  assert.equal(await count("analytics_events"), 7);
  clock.set(new Date(start + 90 * DAY + 1));
  const later = await purgeExpired(srv.sql, clock.now(), 90);
  assert.equal(later.analyticsEvents, 5);
  assert.equal(later.feedEvents, 2);
  assert.equal(await count("analytics_events"), 2);
});

Deno.test({
  name: "purgeExpired does nothing while another instance holds the purge lock",
  // PGlite is one session, where an advisory lock cannot exclude anyone.
  ignore: srv.db.embedded,
  async fn() {
    await purgeEverything();
    const p = await createProject(srv.url);
    await createFeedToken(srv.url, p.productionId);
    await capture(srv.sql, p.productionId, p.hashid, ["install"], new Date(0));
    const other = srv.db.pool(1);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = other.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(4242003)`;
      locked();
      await held;
    });
    await isLocked;
    const blocked = await purgeExpired(srv.sql, clock.now(), 90);
    assert.deepEqual(blocked, { ran: false, feedEvents: 0, analyticsEvents: 0, rateHits: 0 });
    assert.equal(await count("feed_events"), 1);
    release();
    await holder;
    assert.equal((await purgeExpired(srv.sql, clock.now(), 90)).feedEvents, 1);
  },
});

Deno.test("startBackgroundJobs purges periodically and stops cleanly", async () => {
  await purgeEverything();
  const p = await createProject(srv.url);
  await createFeedToken(srv.url, p.productionId);
  await capture(srv.sql, p.productionId, p.hashid, ["install", "view"], new Date(0));
  await insertAnalytics(p.productionId, new Date(0), 1);
  const jobs = startBackgroundJobs(
    { sql: srv.sql, clock, logger: silentLogger, config: srv.config },
    { firstDelayMs: 0, intervalMs: 20 },
  );
  try {
    for (let i = 0; i < 200 && await count("feed_events") > 0; i++) await sleep(10);
    assert.equal(await count("feed_events"), 0);
    // A second round finds the rows added since.
    await capture(srv.sql, p.productionId, p.hashid, ["open"], new Date(0));
    for (let i = 0; i < 200 && await count("feed_events") > 0; i++) await sleep(10);
    assert.equal(await count("feed_events"), 0);
    assert.equal(await count("analytics_events"), 0);
  } finally {
    await jobs.stop();
  }
});
