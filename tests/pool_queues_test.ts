// db/pool_queues.ts: the pool's connection queues are repaired when the pool is made, and the
// repaired pool answers every query right under more concurrent queries than connections.
// Terminated connections with repaired queues are the soak's part (tests/soak_test.ts). What
// the repair is for, throughput that does not decay under load, is a speed: bench/ measures it.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { connect } from "../db/connect.ts";
import { isRepaired } from "../db/pool_queues.ts";
import { createTestDatabase } from "./helpers/database.ts";

const db = await createTestDatabase({ migrate: false });
Deno.test.afterAll(() => db.close());

/** The queue objects a connection is in while it runs a query, right after, and once done. */
async function queuesSeen(sql: postgres.Sql): Promise<unknown[]> {
  const seen: unknown[] = [];
  let connection: { queue: unknown } | undefined;
  const onexecute = (c: { queue: unknown }) => {
    connection = c;
    seen.push(c.queue);
    queueMicrotask(() => seen.push(c.queue));
    return true;
  };
  await sql.unsafe("select 1", [], { onexecute } as unknown as postgres.UnsafeQueryOptions);
  seen.push(connection!.queue);
  return seen;
}

async function answersEveryQuery(sql: postgres.Sql, queries: number, concurrency: number) {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < queries) {
      const i = next++;
      const [row] = await sql<{ n: number }[]>`select ${i}::int as n`;
      assert.equal(row!.n, i);
    }
  }));
}

Deno.test("a new pool's busy and open queues are repaired, and it answers every query", async () => {
  const sql = connect(db.url, db.embedded ? 1 : 3);
  try {
    await answersEveryQuery(sql, 3000, 16);
    const seen = await queuesSeen(sql);
    assert.ok(seen.length >= 3);
    assert.deepEqual(seen.map(isRepaired), seen.map(() => true));
    // More than one queue object (busy while running, open once done) was reached.
    assert.ok(new Set(seen).size >= 2);
  } finally {
    await sql.end({ timeout: 5 });
  }
});
