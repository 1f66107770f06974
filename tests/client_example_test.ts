// The README's loading example (client/examples/load_into_postgres.ts) against the real server
// and database: idempotent by event id, highest purchase version per (transaction_id, name).
import assert from "node:assert/strict";
import { loadFeed } from "../client/examples/load_into_postgres.ts";
import { ingest } from "./helpers/sdk.ts";
import { createFeedToken, createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer({ config: { FEED_RATE_LIMIT: "100000" } });
Deno.test.afterAll(() => srv.close());

const ago = () => new Date(Date.now() - 60_000).toISOString();
function purchase(tx: string, name: string, version: number, amount: number) {
  return {
    type: "purchase",
    name,
    occurred_at: ago(),
    purchase: { transaction_id: tx, version, amount, currency: "EUR", product_id: "p", store: "s" },
  };
}

Deno.test("README example: loads the feed into PostgreSQL once, keeping the newest purchase version", async () => {
  const p = await createProject(srv.url);
  const token = await createFeedToken(srv.url, p.productionId);
  // Corrections out of order, and two of them in one page.
  await ingest(srv.url, p.key, "production", [
    purchase("t1", "purchase", 2, 1200),
    purchase("t1", "purchase", 3, 1300),
    purchase("t1", "purchase", 1, 1000),
    purchase("t1", "refund", 1, -1300),
    { type: "install", occurred_at: ago() },
  ]);
  const dir = await Deno.makeTempDir();
  const options = {
    baseUrl: srv.url,
    projectId: p.productionId,
    token: token.value,
    cursorFile: `${dir}/warehouse.cursor`,
  };
  const first = await loadFeed(srv.sql, options);
  assert.equal(first.stats.events, 5);
  await ingest(srv.url, p.key, "production", [purchase("t1", "purchase", 2, 9999)]);
  const second = await loadFeed(srv.sql, options);
  assert.equal(second.stats.events, 1);
  // A lost cursor file: everything is read again, and nothing changes.
  await Deno.remove(options.cursorFile);
  const third = await loadFeed(srv.sql, options);
  assert.equal(third.stats.events, 6);

  const [events] = await srv.sql<{ n: number }[]>`select count(*)::int as n from warehouse_events`;
  assert.equal(events!.n, 6);
  const purchases = await srv.sql`
    select transaction_id, name, version, amount::int from warehouse_purchases
    order by transaction_id, name
  `;
  assert.deepEqual(purchases.map((r) => ({ ...r })), [
    { transaction_id: "t1", name: "purchase", version: 3, amount: 1300 },
    { transaction_id: "t1", name: "refund", version: 1, amount: -1300 },
  ]);
  await Deno.remove(dir, { recursive: true });
});
