// No loss under concurrency: a reader following cursors while many writers capture sees every
// event exactly once, in seq order.
import assert from "node:assert/strict";
import { captureEvents } from "../services/feed/capture.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { MIN_FRONTIER_PAGES, writeWhileReading } from "./helpers/feed.ts";
import { createFeedToken, createProject, serveApp } from "./helpers/server.ts";

const db = await createTestDatabase();
const srv = serveApp(db, { config: { FEED_RATE_LIMIT: "1000000" } });
Deno.test.afterAll(async () => {
  await srv.close();
  await db.close();
});

Deno.test("event_stream loses nothing while concurrent writers commit in random order", async () => {
  const p = await createProject(srv.url);
  const token = await createFeedToken(srv.url, p.productionId);
  // On real PostgreSQL: eight pools, as eight instances; PGlite has one connection, so there
  // the writers' transactions take turns with the reader's queries.
  const pools = Array.from({ length: db.embedded ? 2 : 8 }, () => db.pool(2));

  const result = await writeWhileReading({
    base: srv.url,
    pools,
    environmentId: p.productionId,
    hashid: p.hashid,
    token: token.value,
    transactionsPerWriter: db.embedded ? 10 : 40,
    capture: captureEvents,
    // PGlite runs one transaction at a time: there the reader need not catch up (see below).
    minFrontierPages: db.embedded ? 0 : MIN_FRONTIER_PAGES,
  });

  assert.ok(result.written.length >= pools.length * (db.embedded ? 10 : 40));
  // Only a reader at the commit frontier could notice an out-of-order commit. PGlite runs one
  // transaction at a time, so there commits cannot overtake each other and the reader, queued
  // behind the writers, may never catch up before they finish: the check is for PostgreSQL.
  assert.ok(
    db.embedded || result.frontierPages >= MIN_FRONTIER_PAGES,
    `the reader caught up with writers still writing (${result.frontierPages} times)`,
  );
  assert.equal(new Set(result.read).size, result.read.length, "no event served twice");
  assert.deepEqual([...result.read].sort(), [...result.written].sort(), "every event served");
  const bySeq = await pools[0]!<{ id: string }[]>`
    select body::json->>'id' as id from feed_events
    where environment_id = ${p.productionId} order by xid, seq
  `;
  assert.deepEqual(result.read, bySeq.map((r) => r.id), "served in seq order");
});
