// The race: concurrent writers ingest 5,000 events over HTTP while a receiver fails at random
// (500s, timeouts, dropped connections, 429 with Retry-After). Every event must arrive, in
// arrival order, at least once, signed, with the same webhook-id on every retry of a batch.
// The deliverer records its batches as main.ts has it: on a pool whose commits do not wait for
// the disk (the embedded database has one connection and records on the main pool).
import assert from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import { connect } from "../db/connect.ts";
import { systemClock } from "../infra/clock.ts";
import { startFeedWakeup } from "../services/feed/wakeup.ts";
import { silentLogger } from "./helpers/clock.ts";
import { sleep } from "./helpers/feed.ts";
import { deliveryWorker, eventsOf, startReceiver } from "./helpers/receiver.ts";
import { sendEvents } from "./helpers/sdk.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const WRITERS = 8;
const BATCHES = 25;
const PER_BATCH = 25; // 8 × 25 × 25 = 5,000

Deno.test("5,000 events under random receiver failures: all delivered, in order, signed", async () => {
  const srv = await startTestServer({ config: { DESTINATIONS_ALLOW_PRIVATE: "true" } });
  const wakeup = await startFeedWakeup(srv.db.embedded ? null : srv.sql, silentLogger);
  // mulberry32: a seeded generator, so a failing run can be replayed.
  let seed = 42;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const failures = { http500: 0, timeout: 0, drop: 0, http429: 0 };
  const receiver = startReceiver(() => {
    const x = random();
    if (x < 0.12) return failures.http500++, new Response("oops", { status: 500 });
    if (x < 0.16) return failures.timeout++, "hang";
    if (x < 0.22) return failures.drop++, "drop";
    if (x < 0.27) {
      failures.http429++;
      return new Response(null, { status: 429, headers: { "Retry-After": "1" } });
    }
    return new Response(null, { status: 204 });
  });
  const records = srv.db.embedded
    ? undefined
    : connect(srv.db.url, 4, { synchronous_commit: "off" });
  if (records) {
    const [{ synchronous_commit }] = await records<[{ synchronous_commit: string }]>`
      show synchronous_commit`;
    assert.equal(synchronous_commit, "off");
  }
  const worker = deliveryWorker({ sql: srv.sql, clock: systemClock }, {
    records,
    wakeup,
    pollMs: 200,
    timeoutMs: 400,
    backoffBaseMs: 20,
    backoffCapMs: 400,
  });
  try {
    const p = await createProject(srv.url);
    const created = await call(srv.url, "POST", `/api/v1/projects/${p.productionId}/destinations`, {
      headers: adminHeaders,
      body: { url: receiver.url + "/hook" },
    });
    assert.equal(created.status, 201);
    const secret = created.body.destination.secret as string;
    worker.start();

    const writer = async (w: number) => {
      for (let b = 0; b < BATCHES; b++) {
        const events = Array.from({ length: PER_BATCH }, (_, i) => ({
          type: i % 3 === 0 ? "open" : "install",
          id: `w${w}-b${b}-e${i}`,
          occurred_at: "2026-01-01T00:00:00Z",
        }));
        const res = await sendEvents(srv.url, p.key, "production", events);
        assert.equal(res.status, 202, res.text);
        await sleep(Math.random() * 20);
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));

    const feed = (await srv.sql<{ body: string }[]>`
      select body from feed_events where environment_id = ${p.productionId} order by xid, seq
    `).map((r) => JSON.parse(r.body).id as string);
    assert.equal(feed.length, WRITERS * BATCHES * PER_BATCH);

    const deadline = Date.now() + 45_000;
    const delivered = () =>
      new Set(
        receiver.received.filter((r) => r.answered === 204)
          .flatMap((r) => eventsOf(r).map((e) => e.id)),
      );
    while (delivered().size < feed.length && Date.now() < deadline) await sleep(100);

    // Every event arrived; the successful deliveries, in receipt order, are the feed's order.
    const acked = receiver.received.filter((r) => r.answered === 204);
    const stream = acked.flatMap((r) => eventsOf(r).map((e) => e.id));
    assert.equal(delivered().size, feed.length, "events lost");
    assert.deepEqual(stream, feed, "out of order or duplicated among acknowledged batches");
    // Every request verifies; a batch keeps its webhook-id and body through its retries.
    const bodyById = new Map<string, string>();
    const wh = new Webhook(secret);
    for (const r of receiver.received) {
      wh.verify(r.body, r.headers);
      const id = r.headers["webhook-id"]!;
      const seen = bodyById.get(id);
      if (seen !== undefined) assert.equal(r.body, seen, "a retry changed its events");
      bodyById.set(id, r.body);
    }
    const retried = receiver.received.length - acked.length;
    // The receiver's 500s, timeouts, drops and 429s are what the test makes it answer: their
    // counts are shown only when one kind of failure did not happen.
    assert.ok(
      failures.http500 > 0 && failures.timeout > 0 && failures.drop > 0 && failures.http429 > 0,
      JSON.stringify({ requests: receiver.received.length, acked: acked.length, ...failures }),
    );
    assert.ok(retried > 0);
    // And the admin sees it done, once the worker has recorded the last batch's success (it
    // does so after the receiver's answer, and may first wait for a read it started meanwhile).
    const listed = () =>
      call(srv.url, "GET", `/api/v1/projects/${p.productionId}/destinations`, {
        headers: adminHeaders,
      });
    let list = await listed();
    const recordDeadline = Date.now() + 10_000;
    while (list.body.destinations[0].pending !== 0 && Date.now() < recordDeadline) {
      await sleep(50);
      list = await listed();
    }
    assert.equal(list.body.destinations[0].pending, 0);
    assert.equal(list.body.destinations[0].dropped, 0);
  } finally {
    await worker.stop();
    await records?.end({ timeout: 5 });
    await wakeup.close();
    await receiver.close();
    await srv.close();
  }
});
