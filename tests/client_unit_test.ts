// The feed client's rules without a server: pages come from a scripted fetch.
import assert from "node:assert/strict";
import {
  backoffDelay,
  cursorKey,
  FeedError,
  type FeedEvent,
  FeedReader,
  type FeedReaderOptions,
  FileCursorStore,
  MemoryCursorStore,
  parseRetryAfter,
  reducePurchases,
} from "../client/mod.ts";

type Scripted = Response | Error | (() => Response);

/** A fetch that answers from a script, one entry per request, and records the URLs. */
function scriptedFetch(script: Scripted[]) {
  const urls: URL[] = [];
  const fetchFn: typeof fetch = (input) => {
    urls.push(new URL(String(input)));
    const next = script.shift();
    if (next === undefined) return Promise.resolve(page([], "end"));
    if (next instanceof Error) return Promise.reject(next);
    return Promise.resolve(typeof next === "function" ? next() : next);
  };
  return { fetch: fetchFn, urls };
}

function event(id: string, fields: Record<string, unknown> = {}): FeedEvent {
  return {
    schema_version: 1,
    id,
    type: "install",
    occurred_at: "2026-03-01T00:00:00.000Z",
    project: { id: "p", test: false },
    ...fields,
  };
}

function page(events: FeedEvent[], nextAfter: string, extra: Record<string, unknown> = {}) {
  return Response.json({ schema_version: 1, events, next_after: nextAfter, ...extra });
}

function unavailable(retryAfter?: string) {
  return Response.json(
    { error: { status: 503, code: "rate_limited", message: "slow down" } },
    { status: 503, headers: retryAfter ? { "Retry-After": retryAfter } : {} },
  );
}

function reader(script: Scripted[], options: Partial<FeedReaderOptions> = {}) {
  const scripted = scriptedFetch(script);
  const delays: number[] = [];
  const store = options.store ?? new MemoryCursorStore();
  const r = new FeedReader({
    baseUrl: "http://feed.test",
    projectId: 7,
    token: "est_test",
    follow: false,
    fetch: scripted.fetch,
    sleep: (ms) => {
      delays.push(ms);
      return Promise.resolve();
    },
    random: () => 0.5,
    ...options,
    store,
  });
  return { reader: r, urls: scripted.urls, delays, store };
}

Deno.test("client: pages are read with the saved cursor, the filters and the token", async () => {
  const { reader: r, urls, store } = reader([
    page([event("a"), event("b")], "c1"),
    page([], "c1"),
  ], { eventTypes: ["purchase", "install", "purchase"], limit: 2 });
  const got: string[] = [];
  const result = await r.run((events) => void got.push(...events.map((e) => e.id)));
  assert.deepEqual(got, ["a", "b"]);
  assert.equal(result.reason, "caught_up");
  assert.equal(urls[0]!.pathname, "/api/v1/projects/7/event_stream");
  assert.equal(urls[0]!.searchParams.get("after"), null);
  assert.deepEqual(urls[0]!.searchParams.getAll("event_types[]"), ["install", "purchase"]);
  assert.equal(urls[0]!.searchParams.get("limit"), "2");
  assert.equal(urls[1]!.searchParams.get("after"), "c1");
  assert.deepEqual(await store.load(r.key), { after: "c1", recentIds: ["a", "b"] });
});

Deno.test("client: unknown fields are tolerated and passed on; another schema_version is refused", async () => {
  const odd = event("a", {
    novel: { deep: [1] },
    purchase: { transaction_id: "t", version: 1, x: 1 },
  });
  const { reader: tolerant } = reader([page([odd], "c1", { served_by: "v1.1" })]);
  const got: FeedEvent[] = [];
  await tolerant.run((events) => void got.push(...events));
  assert.deepEqual(got, [odd]);

  for (
    const bad of [
      Response.json({ schema_version: 2, events: [], next_after: "c9" }),
      page([event("b", { schema_version: 2 })], "c9"),
    ]
  ) {
    const { reader: r, store } = reader([bad]);
    await store.save(r.key, { after: "c0", recentIds: [] });
    await assert.rejects(r.run(() => assert.fail("not handled")), (err: unknown) => {
      assert.ok(err instanceof FeedError);
      assert.equal(err.kind, "schema_version");
      assert.match(err.message, /schema_version 2; this client reads schema_version 1/);
      return true;
    });
    assert.equal((await store.load(r.key))!.after, "c0");
  }
});

Deno.test("client: 503s and network errors back off with full jitter, honouring Retry-After", async () => {
  const { reader: r, delays } = reader([
    unavailable(),
    new TypeError("connection reset"),
    () => new Response('{"schema_vers', { status: 200 }), // cut short
    unavailable("3"),
    unavailable(new Date(Date.now() + 60_000).toUTCString()),
    page([event("a")], "c1"),
  ], { backoff: { baseDelayMs: 100, maxDelayMs: 1000 } });
  const result = await r.run(() => {});
  assert.equal(result.stats.events, 1);
  assert.equal(result.stats.retries, 5);
  // random() = 0.5: half the cap, the cap doubling from 100 up to 1000; Retry-After wins when longer.
  assert.deepEqual(delays.slice(0, 3), [50, 100, 200]);
  assert.equal(delays[3], 3000);
  assert.ok(delays[4]! > 55_000 && delays[4]! <= 60_000);
});

Deno.test("client: consecutive failures beyond maxRetries stop the reader; the cursor stays", async () => {
  const { reader: r, store, urls } = reader(
    Array.from({ length: 5 }, () => unavailable("1")),
    { maxRetries: 3 },
  );
  await store.save(r.key, { after: "c5", recentIds: [] });
  await assert.rejects(r.run(() => {}), (err: unknown) => {
    assert.ok(err instanceof FeedError);
    assert.equal(err.kind, "retries_exhausted");
    assert.equal(err.status, 503);
    return true;
  });
  assert.equal(urls.length, 4);
  assert.ok(urls.every((u) => u.searchParams.get("after") === "c5"));
  assert.equal((await store.load(r.key))!.after, "c5");
});

Deno.test("client: a throwing handler retries the page from the previous cursor, then gives up", async () => {
  const events = [event("a"), event("b"), event("c")];
  let calls = 0;
  const seen: string[][] = [];
  const { reader: r, urls, store } = reader([
    page(events, "c1"),
    page(events, "c1"),
    page([], "c1"),
  ]);
  await r.run(async (evs, ctx) => {
    seen.push(evs.map((e) => e.id));
    if (calls++ === 0) {
      ctx.markProcessed("a");
      throw new Error("disk full");
    }
    await Promise.resolve();
  });
  // The retry skips the event marked processed before the throw.
  assert.deepEqual(seen, [["a", "b", "c"], ["b", "c"]]);
  assert.equal(urls[1]!.searchParams.get("after"), null);
  assert.equal((await store.load(r.key))!.after, "c1");

  const failing = reader(Array.from({ length: 3 }, () => page([event("z")], "c2")), {
    maxRetries: 2,
  });
  await assert.rejects(
    failing.reader.run(() => {
      throw new Error("still broken");
    }),
    (err: unknown) => {
      assert.ok(err instanceof FeedError);
      assert.equal(err.kind, "handler_failed");
      assert.equal((err.cause as Error).message, "still broken");
      return true;
    },
  );
  assert.equal(await failing.reader.savedCursor(), null);
});

Deno.test("client: ids are deduplicated within a page and across runs, in a bounded saved window", async () => {
  const { reader: r, store } = reader([
    page([event("a"), event("b"), event("a")], "c1"),
    page([event("b"), event("c"), event("d"), event("e")], "c2"),
    page([], "c2"),
  ], { dedupWindow: 3 });
  const got: string[] = [];
  const result = await r.run((events) => void got.push(...events.map((e) => e.id)));
  assert.deepEqual(got, ["a", "b", "c", "d", "e"]);
  assert.equal(result.stats.duplicates, 2);
  assert.deepEqual((await store.load(r.key))!.recentIds, ["c", "d", "e"]);
});

Deno.test("client: follow polls after an empty page; the signal stops it after the page in progress", async () => {
  const controller = new AbortController();
  const waits: number[] = [];
  let handled = 0;
  const { reader: r, urls } = reader([
    page([], "c0"),
    page([event("a")], "c1"),
    page([], "c1"),
    page([], "c1"),
  ], {
    follow: true,
    pollIntervalMs: 250,
    signal: controller.signal,
    onProgress: (p) => {
      if (p.kind === "idle") waits.push(p.waitMs);
      if (p.kind === "idle" && waits.length === 3) controller.abort();
    },
  });
  const result = await r.run(() => {
    handled++;
  });
  assert.equal(result.reason, "aborted");
  assert.equal(result.after, "c1");
  assert.equal(handled, 1);
  assert.deepEqual(waits, [250, 250, 250]);
  assert.equal(urls.length, 4);
  assert.equal(urls[1]!.searchParams.get("after"), "c0");
});

Deno.test("client: the file store keeps several cursors in one file, replaced atomically", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/feed.cursor`;
  const store = new FileCursorStore(path);
  assert.equal(await store.load("k1"), null);
  await Promise.all([
    store.save("k1", { after: "a1", recentIds: ["x"] }),
    store.save("k2", { after: "b1", recentIds: [] }),
    store.save("k1", { after: "a2", recentIds: ["x", "y"] }),
  ]);
  const again = new FileCursorStore(path);
  assert.deepEqual(await again.load("k1"), { after: "a2", recentIds: ["x", "y"] });
  assert.deepEqual(await again.load("k2"), { after: "b1", recentIds: [] });
  await again.delete("k2");
  assert.equal(await store.load("k2"), null);
  const names = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  assert.deepEqual(names, ["feed.cursor"]);
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);

  await Deno.writeTextFile(path, "{not json");
  const { reader: r } = reader([], { store: new FileCursorStore(path) });
  await assert.rejects(r.run(() => {}), (err: unknown) => {
    assert.ok(err instanceof FeedError);
    assert.equal(err.kind, "cursor_store");
    return true;
  });
  await Deno.remove(dir, { recursive: true });
});

Deno.test("client: helpers — cursor keys, Retry-After, backoff caps, purchase reduction", () => {
  const key = (types: string[], baseUrl = "http://h") =>
    cursorKey({ baseUrl, projectId: 1, integration: "w", eventTypes: types });
  assert.equal(key(["b", "a", "a"]), key(["a", "b"]));
  assert.equal(key([], "http://h/"), key([]));
  assert.notEqual(key(["a"]), key(["a", "b"]));
  assert.notEqual(
    cursorKey({ baseUrl: "http://h", projectId: 1, integration: "w", eventTypes: [] }),
    cursorKey({ baseUrl: "http://h", projectId: 1, integration: "v", eventTypes: [] }),
  );

  assert.equal(parseRetryAfter("7"), 7000);
  assert.equal(parseRetryAfter(null), undefined);
  assert.equal(parseRetryAfter("soon"), undefined);
  assert.equal(parseRetryAfter(new Date(1_000_000).toUTCString(), 2_000_000), 0);

  const caps = { baseDelayMs: 500, maxDelayMs: 30_000 };
  assert.equal(backoffDelay(1, caps, () => 0.999), 499);
  assert.equal(backoffDelay(20, caps, () => 0.999), 29_970);
  assert.equal(backoffDelay(3, caps, () => 0), 0);
  assert.equal(backoffDelay(3, caps, () => 0, 4000), 4000);

  const p = (id: string, tx: string, name: string, version: number) =>
    event(id, { type: "purchase", name, purchase: { transaction_id: tx, version } });
  const kept = reducePurchases([
    p("1", "t", "purchase", 2),
    event("2"),
    p("3", "t", "purchase", 1),
    p("4", "t", "refund", 1),
    p("5", "t", "purchase", 2),
    p("6", "t", "purchase", 3),
  ]);
  assert.deepEqual(kept.map((e) => e.id), ["6", "4"]);
});
