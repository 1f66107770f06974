// The deliverer reads several batches ahead while it sends (services/destinations/delivery.ts,
// #run): batches stay at most 100 events, in order, across reads; and when the destination
// changes under the events read ahead (paused, here), they are set aside and nothing is skipped.
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import {
  deliveryWorker,
  destinationWithEvents,
  eventsOf,
  startReceiver,
} from "./helpers/receiver.ts";
import { startTestServer } from "./helpers/server.ts";
import { connect } from "../db/connect.ts";

const clock = new ManualClock(new Date());
const srv = await startTestServer({ clock, config: { DESTINATIONS_ALLOW_PRIVATE: "true" } });

Deno.test("1,050 events across several reads ahead: eleven batches of at most 100, in order, each once", async () => {
  const r = startReceiver();
  try {
    const { ids } = await destinationWithEvents(srv, clock, r.url, 7);
    await deliveryWorker(srv).drain();
    assert.deepEqual(r.received.map((x) => eventsOf(x).length), [...Array(10).fill(100), 50]);
    assert.deepEqual(r.received.flatMap((x) => eventsOf(x).map((e) => e.id)), ids);
    assert.equal(new Set(r.received.map((x) => x.headers["webhook-id"])).size, 11);
  } finally {
    await r.close();
  }
});

Deno.test("paused while events are read ahead: delivery stops, and resumes where it stopped", async () => {
  let destinationId = 0;
  const r = startReceiver(async (_req, n) => {
    // Paused while the third batch is in flight, with later batches already read.
    if (n === 3) await srv.sql`update destinations set paused = true where id = ${destinationId}`;
    return new Response(null, { status: 204 });
  });
  try {
    const d = await destinationWithEvents(srv, clock, r.url, 7);
    destinationId = d.destinationId;
    const worker = deliveryWorker(srv);
    await worker.drain();
    // The batch in flight when it was paused is the last one sent.
    assert.equal(r.received.length, 3);
    await srv.sql`update destinations set paused = false where id = ${destinationId}`;
    await worker.drain();
    // Nothing skipped, in order; a batch sent again (its success not recorded) is allowed.
    const got = r.received.flatMap((x) => eventsOf(x).map((e) => e.id));
    const firsts: string[] = [];
    for (const id of got) if (!firsts.includes(id)) firsts.push(id);
    assert.deepEqual(firsts, d.ids);
    const [row] = await srv.sql`
      select batch_id from destinations where id = ${destinationId}
    `;
    assert.equal(row!.batch_id, null);
  } finally {
    await r.close();
  }
});

Deno.test({
  name: "the deliverer's unfiltered reads are planned once per connection: their settings reach " +
    "the server first (PostgreSQL only: the embedded database serves one connection)",
  ignore: !Deno.env.get("DATABASE_URL"),
}, async () => {
  // One connection of its own, so that pg_prepared_statements is the one that read the pages.
  // Before the settings were sent at the call, they reached the server after the page (the row
  // lock too): every read planned anew.
  const [row] = await srv.sql<{ db: string }[]>`select current_database() as db`;
  const url = new URL(srv.config.databaseUrl!);
  url.pathname = `/${row!.db}`;
  const one = connect(url.toString(), 1);
  const r = startReceiver();
  try {
    await destinationWithEvents(srv, clock, r.url, 7);
    await deliveryWorker({ sql: one, clock }).drain();
    assert.equal(r.received.length, 11);
    const plans = await one<{ generic: number; custom: number }[]>`
      select generic_plans::int as generic, custom_plans::int as custom
      from pg_prepared_statements
      where statement like '%cross join lateral%' and statement like '%from feed_events%'
        and statement not like '%unnest(%' and statement not like '%pg_prepared_statements%'
    `;
    assert.ok(plans.length > 0, "no page statement on the connection");
    for (const p of plans) {
      assert.equal(p.custom, 0, `a page planned per call: ${JSON.stringify(plans)}`);
    }
    assert.ok(plans.reduce((n, p) => n + p.generic, 0) >= 3, JSON.stringify(plans));
  } finally {
    await r.close();
    await one.end();
  }
});

Deno.test("teardown", async () => {
  await srv.close();
});
