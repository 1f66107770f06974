// The feed client against the real server: exactly-once delivery through 503s, dropped
// connections, a throwing handler and a server restart; purchase corrections; the statuses that
// stop a reader with the specification's recovery.
import assert from "node:assert/strict";
import { abortableSleep } from "../client/backoff.ts";
import {
  type CursorState,
  type CursorStore,
  FeedError,
  type FeedEvent,
  FeedReader,
  FileCursorStore,
  MemoryCursorStore,
  PurchaseReducer,
} from "../client/mod.ts";
import { ingestMany, startFaultProxy } from "./helpers/client.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { readFeed } from "./helpers/feed.ts";
import { ingest } from "./helpers/sdk.ts";
import {
  adminHeaders,
  call,
  createFeedToken,
  createProject,
  serveApp,
  type TestServer,
} from "./helpers/server.ts";

// A busy reader with injected faults makes many requests: the contract's 120 a minute is
// tested elsewhere.
const CONFIG = { FEED_RATE_LIMIT: "100000" };
const db = await createTestDatabase();
let srv: TestServer = serveApp(db, { config: CONFIG });
Deno.test.afterAll(async () => {
  await srv.close();
  await db.close();
});

/** A sleep that records the delay asked for and waits only a moment. */
function fakeSleep() {
  const delays: number[] = [];
  return {
    delays,
    sleep: (ms: number, signal?: AbortSignal) => {
      delays.push(ms);
      return abortableSleep(Math.min(ms, 2), signal);
    },
  };
}

/** Events of the environment in arrival order, as the feed serves them. */
async function feedOrder(environmentId: number): Promise<string[]> {
  const rows = await srv.sql<{ id: string }[]>`
    select body::json->>'id' as id from feed_events
    where environment_id = ${environmentId} order by xid, seq
  `;
  return rows.map((r) => r.id);
}

/** A store that records, with every save, what the sink held at that moment. */
class AuditedStore implements CursorStore {
  readonly saves: { after: string; sink: Set<string> }[] = [];
  constructor(readonly inner: CursorStore, readonly sink: Map<string, number>) {}
  load(key: string) {
    return this.inner.load(key);
  }
  async save(key: string, state: CursorState) {
    await this.inner.save(key, state);
    // What a restarted reader would find: read back from the store itself.
    const saved = await this.inner.load(key);
    assert.equal(saved?.after, state.after);
    this.saves.push({ after: saved!.after!, sink: new Set(this.sink.keys()) });
  }
}

Deno.test("client: 3,000 events through 503s, drops, a throwing handler and a restart arrive exactly once", async () => {
  const p = await createProject(srv.url);
  const token = await createFeedToken(srv.url, p.productionId);
  await ingestMany(srv.url, p.key, 1000, { prefix: "a" });

  const proxy = startFaultProxy(srv.url);
  // Every 7 requests: a 503 with Retry-After, then a connection dropped mid-body.
  proxy.plan = (n) =>
    n % 7 === 2
      ? { kind: "unavailable", retryAfter: 1 }
      : n % 7 === 5
      ? { kind: "drop" }
      : { kind: "pass" };

  const dir = await Deno.makeTempDir();
  const sink = new Map<string, number>();
  const store = new AuditedStore(new FileCursorStore(`${dir}/feed.cursor`), sink);
  const { delays, sleep } = fakeSleep();
  const controller = new AbortController();
  let calls = 0;
  let throws = 0;
  const reader = new FeedReader({
    baseUrl: proxy.url,
    projectId: p.productionId,
    token: token.value,
    integration: "warehouse",
    limit: 100,
    store,
    pollIntervalMs: 5,
    maxRetries: 20,
    sleep,
    random: () => 0.5,
    signal: controller.signal,
    onProgress: (progress) => {
      if (progress.kind === "page" && sink.size === 3000) controller.abort();
    },
  });

  // The stream goes on while the reader reads, and the server restarts halfway.
  let restarted = false;
  const background = (async () => {
    await ingestMany(srv.url, p.key, 1000, { prefix: "b" });
    while (sink.size < 1500) await abortableSleep(5);
    proxy.upstream = null;
    await srv.close();
    await abortableSleep(50); // the reader meets a dead server meanwhile
    srv = serveApp(db, { config: CONFIG, sql: srv.sql });
    proxy.upstream = srv.url;
    restarted = true;
    await ingestMany(srv.url, p.key, 1000, { prefix: "c" });
  })();

  const result = await reader.run((events, page) => {
    calls++;
    const failHalfway = calls % 5 === 3;
    for (const [i, event] of events.entries()) {
      if (failHalfway && i === Math.floor(events.length / 2)) {
        throws++;
        throw new Error("the sink hiccuped");
      }
      sink.set(event.id, (sink.get(event.id) ?? 0) + 1);
      page.markProcessed(event.id);
    }
  });
  await background;
  await proxy.close();

  assert.equal(result.reason, "aborted");
  assert.ok(restarted);
  const order = await feedOrder(p.productionId);
  assert.equal(order.length, 3000);
  assert.equal(sink.size, 3000);
  for (const id of order) assert.equal(sink.get(id), 1, `${id} delivered ${sink.get(id)} times`);
  assert.equal(result.stats.events, 3000);
  assert.equal(result.stats.duplicates, 0);

  // Every fault happened, and each was retried.
  assert.ok(proxy.faults.unavailable >= 3, JSON.stringify(proxy.faults));
  assert.ok(proxy.faults.drop >= 3, JSON.stringify(proxy.faults));
  assert.ok(throws >= 3);
  assert.ok(result.stats.retries >= proxy.faults.unavailable + proxy.faults.drop + throws);
  // Retry-After: 1 was honoured (at least 1000 ms asked for), and backoff grows otherwise.
  assert.ok(delays.filter((d) => d >= 1000).length >= proxy.faults.unavailable);

  // Never saved past an unprocessed page: at each save, every event before the saved cursor
  // (what the feed serves up to it) was already in the sink.
  assert.ok(store.saves.length >= 30);
  for (const save of store.saves) {
    const next = await readFeed(srv.url, p.productionId, token.value, {
      after: save.after,
      limit: 1,
    });
    assert.equal(next.status, 200);
    const firstAfter = next.body.events[0]?.id;
    const before = firstAfter === undefined ? order : order.slice(0, order.indexOf(firstAfter));
    for (const id of before) assert.ok(save.sink.has(id), `saved past unprocessed ${id}`);
  }

  // A new run from the saved file resumes at the end: nothing is delivered again.
  const again = new FeedReader({
    baseUrl: proxy.url,
    projectId: p.productionId,
    token: token.value,
    integration: "warehouse",
    limit: 100,
    store: new FileCursorStore(`${dir}/feed.cursor`),
    follow: false,
    fetch: (input, init) => fetch(String(input).replace(proxy.url, srv.url), init),
  });
  const rerun = await again.run(() => assert.fail("nothing is new"));
  assert.equal(rerun.reason, "caught_up");
  assert.equal(rerun.stats.events, 0);
  await Deno.remove(dir, { recursive: true });
});

function purchase(transactionId: string, name: string, version: number, amount: number) {
  return {
    type: "purchase",
    name,
    occurred_at: new Date(Date.now() - 60_000).toISOString(),
    purchase: {
      transaction_id: transactionId,
      version,
      amount,
      currency: "EUR",
      product_id: "pro",
      store: "app_store",
    },
  };
}

Deno.test("client: purchase corrections arriving out of order keep the highest version per (transaction_id, name)", async () => {
  const p = await createProject(srv.url);
  const token = await createFeedToken(srv.url, p.productionId);
  await ingest(srv.url, p.key, "production", [
    purchase("t1", "purchase", 2, 1200),
    purchase("t2", "purchase", 1, 500),
    { type: "install", occurred_at: new Date(Date.now() - 60_000).toISOString() },
  ]);
  await ingest(srv.url, p.key, "production", [
    purchase("t1", "purchase", 1, 1000), // older, late
    purchase("t1", "refund", 1, -1200), // another record of the same transaction
    purchase("t2", "purchase", 3, 700),
  ]);
  await ingest(srv.url, p.key, "production", [purchase("t2", "purchase", 2, 600)]);

  const reducer = new PurchaseReducer();
  const upserts: FeedEvent[] = [];
  const reader = new FeedReader({
    baseUrl: srv.url,
    projectId: p.productionId,
    token: token.value,
    eventTypes: ["purchase"],
    limit: 2,
    store: new MemoryCursorStore(),
    follow: false,
  });
  const result = await reader.runEach((event) => {
    if (reducer.offer(event)) upserts.push(event);
  });
  assert.equal(result.stats.events, 6);
  const kept = reducer.records().map((e) => [
    e.purchase!.transaction_id,
    e.name,
    e.purchase!.version,
    e.purchase!.amount,
  ]);
  assert.deepEqual(kept, [
    ["t1", "purchase", 2, 1200],
    ["t2", "purchase", 3, 700],
    ["t1", "refund", 1, -1200],
  ]);
  // Older versions never replaced a newer one.
  assert.deepEqual(
    upserts.map((e) => `${e.purchase!.transaction_id}/${e.name}/v${e.purchase!.version}`),
    ["t1/purchase/v2", "t2/purchase/v1", "t1/refund/v1", "t2/purchase/v3"],
  );
});

async function setEnterprise(hashid: string, enterprise: boolean) {
  const res = await call(srv.url, "PATCH", `/api/v1/admin/projects/${hashid}`, {
    headers: adminHeaders,
    body: { enterprise },
  });
  assert.equal(res.status, 200);
}

Deno.test("client: 400, 401, 402 and 403 stop the reader with the recovery; the cursor is untouched", async () => {
  const p = await createProject(srv.url);
  const token = await createFeedToken(srv.url, p.productionId);
  await ingestMany(srv.url, p.key, 3, { prefix: "s" });

  const SAVED: CursorState = { after: null, recentIds: ["evt_x"] };
  const attempt = async (
    options: { projectId?: number; token?: string; after?: string | null },
  ) => {
    const store = new MemoryCursorStore();
    let requests = 0;
    const reader = new FeedReader({
      baseUrl: srv.url,
      projectId: options.projectId ?? p.productionId,
      token: options.token ?? token.value,
      store,
      follow: false,
      fetch: (input, init) => {
        requests++;
        return fetch(input, init);
      },
      sleep: () => assert.fail("must not back off"),
    });
    const saved = { ...SAVED, after: options.after ?? null };
    await store.save(reader.key, saved);
    const err = await reader.run(() => assert.fail("no page")).then(
      () => assert.fail("must stop"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof FeedError, String(err));
    assert.equal(err.kind, "http");
    assert.equal(requests, 1);
    assert.deepEqual(await store.load(reader.key), saved);
    return err;
  };

  const bad = await attempt({ after: "junk-cursor" });
  assert.equal(bad.status, 400);
  assert.equal(bad.code, "bad_cursor");
  assert.match(bad.recovery, /restore the original saved cursor/);
  assert.match(bad.recovery, /omit `after`/);
  assert.match(bad.message, /400 bad_cursor/);

  const unknown = await attempt({ token: "est_" + "x".repeat(43) });
  assert.equal(unknown.status, 401);
  assert.equal(unknown.code, "unauthorized");
  assert.match(unknown.recovery, /invalid or revoked: create a new feed token/);

  const other = await attempt({ projectId: p.testId });
  assert.equal(other.status, 403);
  assert.equal(other.code, "forbidden");
  assert.match(other.recovery, /does not belong to this project_id/);

  await setEnterprise(p.hashid, false);
  const unpaid = await attempt({});
  assert.equal(unpaid.status, 402);
  assert.equal(unpaid.code, "enterprise_required");
  assert.match(unpaid.recovery, /Enterprise access is required/);
  await setEnterprise(p.hashid, true);

  const revoked = await call(
    srv.url,
    "DELETE",
    `/api/v1/projects/${p.productionId}/event_stream_tokens/${token.id}`,
    { headers: adminHeaders },
  );
  assert.equal(revoked.status, 204);
  const gone = await attempt({});
  assert.equal(gone.status, 401);
});

Deno.test("client: widening the filters starts a new cursor; a reset cursor rereads without duplicates", async () => {
  const p = await createProject(srv.url);
  const token = await createFeedToken(srv.url, p.productionId);
  await ingestMany(srv.url, p.key, 5, { prefix: "i", type: "install" });
  await ingest(srv.url, p.key, "production", [purchase("w1", "purchase", 1, 100)]);
  const store = new MemoryCursorStore();
  const make = (eventTypes: string[]) =>
    new FeedReader({
      baseUrl: srv.url + "/",
      projectId: p.productionId,
      token: token.value,
      eventTypes,
      store,
      follow: false,
    });
  const seen: string[] = [];
  const installs = make(["install"]);
  assert.equal(
    (await installs.run((events) => void seen.push(...events.map((e) => e.type))))
      .stats.events,
    5,
  );
  // The same set, written differently, is the same cursor.
  assert.equal(make(["install", "install", " install"]).key, installs.key);
  const wider = make(["purchase", "install"]);
  assert.notEqual(wider.key, installs.key);
  assert.equal(await wider.savedCursor(), null);
  const widened = await wider.run((events) => void seen.push(...events.map((e) => e.type)));
  assert.equal(widened.stats.events, 6);

  // Lost cursor: omitting `after` rereads the retained events; the saved window drops them.
  await wider.resetCursor();
  assert.equal(await wider.savedCursor(), null);
  const reread = await wider.run(() => assert.fail("all were processed before"));
  assert.equal(reread.stats.duplicates, 6);
  assert.equal(reread.stats.events, 0);
  assert.notEqual(await wider.savedCursor(), null);
});
