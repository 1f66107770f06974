import { assertError } from "./helpers/server.ts";
// The feed's rate limit (120 reads in any 60 s per token, across instances) and the token's
// last-used stamp (to the minute, not a write per request).
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { readFeed } from "./helpers/feed.ts";
import { adminHeaders, call, createFeedToken, createProject, serveApp } from "./helpers/server.ts";

const db = await createTestDatabase();
const clock = new ManualClock("2026-03-02T10:00:30Z");
// Two instances over one database, sharing the clock, as two servers behind a load balancer.
const a = serveApp(db, { clock });
const b = serveApp(db, { clock });
Deno.test.afterAll(async () => {
  await a.close();
  await b.close();
  await db.close();
});

async function statusesOf(requests: (() => Promise<{ status: number; headers: Headers }>)[]) {
  const out: { status: number; retryAfter: string | null }[] = [];
  // Many at once from both instances; the batch size does not divide 120, so concurrent reads
  // compete for the last slots.
  for (let i = 0; i < requests.length; i += 50) {
    const batch = await Promise.all(requests.slice(i, i + 50).map((r) => r()));
    out.push(...batch.map((r) => ({ status: r.status, retryAfter: r.headers.get("retry-after") })));
  }
  return out;
}

Deno.test("event_stream admits exactly 120 of 200 quick reads across two instances, then again after 60 s", async () => {
  const p = await createProject(a.url);
  const token = await createFeedToken(a.url, p.productionId);
  const other = await createFeedToken(a.url, p.productionId, "other");
  const start = clock.now().getTime();

  const results = await statusesOf(
    Array.from(
      { length: 200 },
      (_, i) => () => readFeed(i % 2 ? a.url : b.url, p.productionId, token.value, { limit: 1 }),
    ),
  );
  const admitted = results.filter((r) => r.status === 200);
  const limited = results.filter((r) => r.status === 503);
  assert.equal(admitted.length, 120);
  assert.equal(limited.length, 80);
  assert.ok(limited.every((r) => r.retryAfter === "60"));
  const res = await readFeed(b.url, p.productionId, token.value);
  assertError(res, 503, "rate_limited");
  assert.equal(res.headers.get("retry-after"), "60");
  // The limit is per token.
  assert.equal((await readFeed(a.url, p.productionId, other.value)).status, 200);

  clock.set(new Date(start + 59_500));
  const almost = await readFeed(a.url, p.productionId, token.value);
  assertError(almost, 503, "rate_limited");
  assert.equal(almost.headers.get("retry-after"), "1");

  clock.set(new Date(start + 60_000));
  const again = await statusesOf(
    Array.from(
      { length: 130 },
      (_, i) => () => readFeed(i % 2 ? a.url : b.url, p.productionId, token.value),
    ),
  );
  assert.equal(again.filter((r) => r.status === 200).length, 120);
  assert.equal(again.filter((r) => r.status === 503).length, 10);
  // Hits that left the window are dropped as new ones come in.
  const [n] = await db.pool()`
    select count(*)::int as n from feed_rate_hits where token_id = ${token.id}
  `;
  assert.equal(n!.n, 120);
});

Deno.test("event_stream's window slides: a slot frees 60 s after the read that took it", async () => {
  const p = await createProject(a.url);
  const token = await createFeedToken(a.url, p.productionId);
  const start = clock.now().getTime();
  const read = () => readFeed(a.url, p.productionId, token.value);

  for (let i = 0; i < 60; i++) assert.equal((await read()).status, 200);
  clock.set(new Date(start + 30_000));
  for (let i = 0; i < 60; i++) assert.equal((await read()).status, 200);
  clock.set(new Date(start + 45_000));
  const full = await read();
  assertError(full, 503, "rate_limited");
  assert.equal(full.headers.get("retry-after"), "15");

  // At +60 s the first 60 have left; the 60 from +30 s remain.
  clock.set(new Date(start + 60_000));
  for (let i = 0; i < 60; i++) assert.equal((await read()).status, 200);
  const next = await read();
  assertError(next, 503, "rate_limited");
  assert.equal(next.headers.get("retry-after"), "30");
});

Deno.test("event_stream moves last_used_at to the minute, without a write per request", async () => {
  const p = await createProject(a.url);
  const token = await createFeedToken(a.url, p.productionId);
  const sql = db.pool();
  const list = async () => {
    const res = await call(a.url, "GET", `/api/v1/projects/${p.productionId}/event_stream_tokens`, {
      headers: adminHeaders,
    });
    assert.equal(res.status, 200);
    return res.body.tokens[0].last_used_at as string | null;
  };
  // xmin changes with every new row version: the token row is written only when it moves.
  const version = async () =>
    (await sql`select xmin::text as v from feed_tokens where id = ${token.id}`)[0]!.v;

  clock.set("2026-03-03T08:15:20.500Z");
  assert.equal(await list(), null);
  assert.equal((await readFeed(a.url, p.productionId, token.value)).status, 200);
  assert.equal(await list(), "2026-03-03T08:15:00.000Z");

  const written = await version();
  for (const at of ["2026-03-03T08:15:21Z", "2026-03-03T08:15:40Z", "2026-03-03T08:15:59.999Z"]) {
    clock.set(at);
    for (let i = 0; i < 3; i++) {
      assert.equal(
        (await readFeed(i % 2 ? a.url : b.url, p.productionId, token.value)).status,
        200,
      );
    }
  }
  assert.equal(await version(), written);
  assert.equal(await list(), "2026-03-03T08:15:00.000Z");

  clock.set("2026-03-03T08:16:00.001Z");
  assert.equal((await readFeed(b.url, p.productionId, token.value)).status, 200);
  assert.equal(await list(), "2026-03-03T08:16:00.000Z");
  assert.notEqual(await version(), written);

  // Rejected reads do not count as use.
  clock.set("2026-03-03T09:00:00Z");
  assert.equal((await readFeed(a.url, p.productionId, token.value, { limit: "0" })).status, 400);
  assert.equal((await readFeed(a.url, p.testId, token.value)).status, 403);
  assert.equal(await list(), "2026-03-03T08:16:00.000Z");
});
