// Capture without a queue: writers of one environment do not wait for each other's commit, and
// a reader is served an event only once every transaction that started writing before it has
// ended, so a late commit never lands behind a cursor.
import assert from "node:assert/strict";
import type { Db, Sql } from "../db/connect.ts";
import { captureEvents } from "../services/feed/capture.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { envelope, readOk } from "./helpers/feed.ts";
import { createFeedToken, createProject, serveApp } from "./helpers/server.ts";

const db = await createTestDatabase();
const srv = serveApp(db);
Deno.test.afterAll(async () => {
  await srv.close();
  await db.close();
});

/**
 * Captures `events` in a transaction of `pool` that stays open until `commit` is called: once
 * this resolves, the capture is in and its transaction still running. `committed` settles when
 * it has ended.
 */
async function openCapture(
  pool: Sql,
  environmentId: number,
  events: Parameters<typeof captureEvents>[3],
): Promise<{ commit: () => void; committed: Promise<void> }> {
  let commit!: () => void;
  const held = new Promise<void>((resolve) => (commit = resolve));
  let captured!: () => void;
  const isCaptured = new Promise<void>((resolve) => (captured = resolve));
  const committed = pool.begin(async (tx: Db) => {
    await captureEvents(tx, environmentId, new Date(), events);
    captured();
    await held;
  });
  await Promise.race([isCaptured, committed]);
  return { commit, committed };
}

Deno.test({
  name: "a capture commits while an older one is open; both are served once the older ends",
  // PGlite runs one transaction at a time: nothing can be open beside another.
  ignore: db.embedded,
  async fn() {
    const p = await createProject(srv.url);
    const token = await createFeedToken(srv.url, p.productionId);
    const first = envelope(p.hashid, "install");
    const second = envelope(p.hashid, "open");
    const a = db.pool(1);
    const b = db.pool(1);
    let older: Awaited<ReturnType<typeof openCapture>> | undefined;
    try {
      older = await openCapture(a, p.productionId, [first]);
      // The younger writer commits at once: it does not queue behind the open one.
      const started = performance.now();
      await b.begin((tx: Db) => captureEvents(tx, p.productionId, new Date(), [second]));
      assert.ok(performance.now() - started < 1000, "the second writer waited for the first");

      // Committed, but behind a transaction still open: not served yet (the read waits for
      // the horizon up to a second, then answers with what it may serve).
      const early = await readOk(srv.url, p.productionId, token.value);
      assert.deepEqual(early.events, []);

      older.commit();
      await older.committed;
      const page = await readOk(srv.url, p.productionId, token.value, { after: early.next_after });
      // In transaction order: the older writer's event first, although it committed last.
      assert.deepEqual(page.events.map((e) => e.id), [first.id, second.id]);
    } finally {
      // A failed assertion must not leave the transaction open: the pool's end would wait.
      older?.commit();
      await a.end();
      await b.end();
    }
  },
});

Deno.test({
  name:
    "a page with events is answered at once, even with committed events waiting behind an open transaction",
  // PGlite runs one transaction at a time: nothing can be open beside another.
  ignore: db.embedded,
  async fn() {
    const p = await createProject(srv.url);
    const token = await createFeedToken(srv.url, p.productionId);
    const served = envelope(p.hashid, "open");
    const held = envelope(p.hashid, "install");
    const waiting = envelope(p.hashid, "open");
    const a = db.pool(1);
    const b = db.pool(1);
    let older: Awaited<ReturnType<typeof openCapture>> | undefined;
    try {
      await b.begin((tx: Db) => captureEvents(tx, p.productionId, new Date(), [served]));
      older = await openCapture(a, p.productionId, [held]);
      await b.begin((tx: Db) => captureEvents(tx, p.productionId, new Date(), [waiting]));
      // The horizon stops at the open transaction: the first event is served, the last one
      // waits. A page that has events does not wait for the horizon (HORIZON_WAIT_MS, a second);
      // only an empty one does.
      const started = performance.now();
      const page = await readOk(srv.url, p.productionId, token.value);
      const took = performance.now() - started;
      assert.deepEqual(page.events.map((e) => e.id), [served.id]);
      assert.ok(took < 900, `a page with an event waited ${Math.round(took)} ms for the horizon`);
      older.commit();
      await older.committed;
      const next = await readOk(srv.url, p.productionId, token.value, { after: page.next_after });
      assert.deepEqual(next.events.map((e) => e.id), [held.id, waiting.id]);
    } finally {
      older?.commit();
      await a.end();
      await b.end();
    }
  },
});
