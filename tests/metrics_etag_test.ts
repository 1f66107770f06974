// Conditional metrics: an ETag on every answer, and 304 for a client that has the current one,
// decided without building the (possibly megabytes large) body.
import assert from "node:assert/strict";
import { connect } from "../db/connect.ts";
import { ManualClock } from "./helpers/clock.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { deactivateLink, generateLink, ingest, sdkHeaders } from "./helpers/sdk.ts";
import { call, createProject, serveApp } from "./helpers/server.ts";

const NOW = "2026-03-01T12:00:00.000Z";

/**
 * A TCP relay between the app's pool and its database that counts the bytes the database sends.
 * Whatever the SQL, an answer built from the items must first receive them from PostgreSQL.
 */
function startByteMeter(databaseUrl: string) {
  const upstream = new URL(databaseUrl);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const relays: Promise<unknown>[] = [];
  const meter = {
    url: "",
    /** Bytes received from the database so far, on every connection. */
    received: 0,
    async close() {
      listener.close();
      await accepting;
      await Promise.allSettled(relays);
    },
  };
  const accepting = (async () => {
    for await (const client of listener) {
      const server = await Deno.connect({
        hostname: upstream.hostname,
        port: Number(upstream.port || 5432),
      });
      const counting = new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, out) {
          meter.received += chunk.length;
          out.enqueue(chunk);
        },
      });
      relays.push(
        client.readable.pipeTo(server.writable).catch(() => {}),
        server.readable.pipeThrough(counting).pipeTo(client.writable).catch(() => {}),
      );
    }
  })().catch(() => {});
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(listener.addr.port);
  meter.url = url.toString();
  return meter;
}

// One database for the file, reached by the app's pool through a byte meter: the only client
// of the database (PGlite serves one).
const db = await createTestDatabase();
const meter = startByteMeter(db.url);
const sql = connect(meter.url, db.embedded ? 1 : 4);
const srv = serveApp(db, { clock: new ManualClock(NOW), sql });
Deno.test.afterAll(async () => {
  await srv.close();
  await sql.end({ timeout: 5 });
  await meter.close();
  await db.close();
});

/** What `request` made the database send the app, in bytes. */
async function bytesFromDatabase<T>(
  meter: { received: number },
  request: () => Promise<T>,
): Promise<[T, number]> {
  const before = meter.received;
  const result = await request();
  return [result, meter.received - before];
}

Deno.test("metrics_for_project: a 304 never receives the items from the database", async () => {
  const p = await createProject(srv.url);
  const headers = sdkHeaders(p.key, "production");
  const get = (etag?: string) =>
    call(srv.url, "GET", "/api/v1/sdk/metrics_for_project", {
      headers: etag ? { ...headers, "If-None-Match": etag } : headers,
    });
  // Links whose items hold a long title twice (as name and title): ~2.3 KB an item.
  for (let i = 0; i < 10; i++) {
    await generateLink(srv.url, p.key, "production", { title: `${i} ${"x".repeat(995)}` });
  }
  // Both kinds of answer once first, so that each has prepared its statements.
  const tag = (await get()).headers.get("etag")!;
  assert.equal((await get(tag)).status, 304);

  const [full, forBody] = await bytesFromDatabase(meter, () => get());
  assert.equal(full.status, 200);
  const bodyBytes = new TextEncoder().encode(full.text).length;
  assert.ok(bodyBytes > 20_000, `a body of ${bodyBytes} bytes`);
  // The meter sees what a built body takes: at least the body itself.
  assert.ok(forBody >= bodyBytes, `the 200 received ${forBody} bytes for ${bodyBytes}`);

  const [same, for304] = await bytesFromDatabase(meter, () => get(tag));
  assert.equal(same.status, 304);
  assert.equal(same.text, "");
  // The authentication and the tag (measured: ~140 bytes), less than one item.
  assert.ok(for304 < 2_000, `the 304 received ${for304} bytes from the database`);
});

Deno.test("metrics_for_project: ETag, 304 for the current tag, a new tag on every change", async () => {
  const p = await createProject(srv.url);
  const headers = sdkHeaders(p.key, "production");
  const get = (etag?: string) =>
    call(srv.url, "GET", "/api/v1/sdk/metrics_for_project", {
      headers: etag ? { ...headers, "If-None-Match": etag } : headers,
    });
  const a = await generateLink(srv.url, p.key, "production", { title: "A" });
  const b = await generateLink(srv.url, p.key, "production", { title: "B" });

  const first = await get();
  assert.equal(first.status, 200);
  const tag = first.headers.get("etag")!;
  assert.match(tag, /^"m-[0-9]+-2-[0-9-]+"$/);
  assert.equal(first.headers.get("cache-control"), "private, no-cache");

  const same = await get(tag);
  assert.equal(same.status, 304);
  assert.equal(same.text, "");
  assert.equal(same.headers.get("etag"), tag);
  assert.equal((await get(`"other", W/${tag}`)).status, 304, "a list and a weak tag match too");
  assert.equal((await get('"stale"')).status, 200);

  // Each kind of change gives a new tag, and the old one no longer answers 304.
  const tags = new Set([tag]);
  const expectChange = async (what: string) => {
    const res = await get([...tags].at(-1));
    assert.equal(res.status, 200, `${what}: the old tag must not match`);
    const next = res.headers.get("etag")!;
    assert.ok(!tags.has(next), `${what}: a new tag`);
    tags.add(next);
  };
  await ingest(srv.url, p.key, "production", [
    { type: "open", occurred_at: NOW, link_path: a },
  ]);
  await expectChange("a counter moved");
  const purchase = (version: number, link: string) => ({
    type: "purchase",
    name: "purchase",
    occurred_at: NOW,
    link_path: link,
    purchase: {
      transaction_id: "t1",
      version,
      amount: 500,
      // The project's reporting currency (a new project's): counted as sent.
      currency: "USD",
      product_id: "pro",
      store: "app_store",
    },
  });
  await ingest(srv.url, p.key, "production", [purchase(1, a)]);
  await expectChange("revenue on a");
  // A correction moves the same amount from a to b: the totals' sum stays, the tag does not.
  await ingest(srv.url, p.key, "production", [purchase(2, b)]);
  await expectChange("revenue moved from a to b");
  await deactivateLink(srv.url, p.productionId, b);
  await expectChange("a link deactivated");
  // Another environment's change leaves this one's tag alone.
  const current = [...tags].at(-1)!;
  await ingest(srv.url, p.key, "development", [{ type: "open", occurred_at: NOW }]);
  assert.equal((await get(current)).status, 304);
});
