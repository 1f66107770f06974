// PostgreSQL itself crashes while a destination is being delivered. The deliverer records each
// delivered batch on a pool whose commits do not wait for the disk (main.ts, `records` in
// services/destinations/delivery.ts), so the crash can undo the last of those records: the
// batches they covered must be sent again after the restart, and none skipped. A server of the
// test's own (tests/helpers/private_postgres.ts) is crashed, with its WAL writer slowed to 10 s so
// that the records written just before the crash are still only in memory.
import assert from "node:assert/strict";
import { connect } from "../db/connect.ts";
import { migrate } from "../db/migrate.ts";
import { systemClock } from "../infra/clock.ts";
import { MAX_BATCH_EVENTS } from "../services/destinations/delivery.ts";
import { sleep } from "./helpers/feed.ts";
import { hasPostgresBinaries, startPrivatePostgres } from "./helpers/private_postgres.ts";
import {
  deliveryWorker,
  destinationWithEvents,
  eventsOf,
  startReceiver,
} from "./helpers/receiver.ts";
import { adminHeaders, call, serveApp } from "./helpers/server.ts";
import type { TestDatabase } from "./helpers/database.ts";

const EVENTS = 1_050;

async function until(what: string, done: () => boolean | Promise<boolean>, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

Deno.test({
  name: "a PostgreSQL crash mid-delivery: the batches whose records it undid come again, none is " +
    "skipped" + (hasPostgresBinaries() ? "" : " (ignored: needs PostgreSQL's initdb and pg_ctl)"),
  ignore: !hasPostgresBinaries(),
}, async () => {
  const pg = await startPrivatePostgres({
    wal_writer_delay: "'10s'",
    autovacuum: "off", // its commits would flush the WAL
    checkpoint_timeout: "'1h'",
  });
  await migrate(pg.url);
  const pools: ReturnType<typeof connect>[] = [];
  const db: TestDatabase = {
    url: pg.url,
    embedded: false,
    pool(max = 4) {
      const sql = connect(pg.url, max);
      pools.push(sql);
      return sql;
    },
    async close() {
      await Promise.all(pools.map((p) => p.end({ timeout: 1 })));
    },
  };
  const srv = serveApp(db, { config: { DESTINATIONS_ALLOW_PRIVATE: "true" } });
  const records = connect(pg.url, 2, { synchronous_commit: "off" });
  let crashed: Promise<void> | null = null;
  // Each answer a little late, so that batches are still coming when the crash happens.
  const receiver = startReceiver(async (_req, n) => {
    if (n === 4) crashed ??= pg.crash();
    await sleep(30);
    return new Response(null, { status: 204 });
  });
  const worker = deliveryWorker({ sql: srv.sql, clock: systemClock }, {
    records,
    pollMs: 100,
    timeoutMs: 2_000,
    leaseMs: 4_000,
    backoffBaseMs: 50,
    backoffCapMs: 200,
  });
  try {
    // Seven captures of 150 events: eleven batches.
    const { projectId, ids: feed } = await destinationWithEvents(
      srv,
      systemClock,
      receiver.url + "/hook",
      EVENTS / 150,
    );
    assert.equal(feed.length, EVENTS);

    worker.start();
    await until("the crash", () => crashed !== null);
    await crashed;
    await pg.start();
    const received = () => new Set(receiver.received.flatMap((r) => eventsOf(r).map((e) => e.id)));
    await until("every event, after the restart", () => received().size === EVENTS);

    // Every delivery carries events in the feed's order, and all of them arrived.
    const position = new Map(feed.map((id, i) => [id, i]));
    for (const r of receiver.received) {
      const at = eventsOf(r).map((e) => position.get(e.id)!);
      assert.deepEqual(at, [...at].sort((a, b) => a - b));
    }
    assert.deepEqual([...received()].sort(), [...feed].sort());
    // The crash undid records of batches already delivered and answered, not only the batch in
    // flight when it happened (which a durable record would send again too): more than one
    // batch's events came again.
    const sent = receiver.received.filter((r) => r.answered === 204)
      .reduce((n, r) => n + eventsOf(r).length, 0);
    assert.ok(
      sent - EVENTS > MAX_BATCH_EVENTS,
      `${sent} events delivered for ${EVENTS}: no record of an answered batch was undone`,
    );
    await until("nothing pending", async () => {
      const list = await call(srv.url, "GET", `/api/v1/projects/${projectId}/destinations`, {
        headers: adminHeaders,
      });
      return list.body.destinations?.[0]?.pending === 0;
    });
  } finally {
    await worker.stop();
    await records.end({ timeout: 1 });
    await receiver.close();
    await srv.close();
    await db.close();
    await pg.remove();
  }
});
