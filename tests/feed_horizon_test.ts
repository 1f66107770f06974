// The feed's horizon (feed_horizon(), migrations 00008, 00024 and 00029): the position below
// which every transaction has ended. Since 00029 it is PL/pgSQL, whose plan a session keeps:
// these tests hold that kept plan to the answer the expression gives when run afresh, with a
// transaction open and after a restore raises the position offset (services/feed/positions.ts).
import assert from "node:assert/strict";
import { onCitus } from "../db/cluster.ts";
import type { Sql } from "../db/connect.ts";
import { createTestDatabase } from "./helpers/database.ts";

const db = await createTestDatabase();
Deno.test.afterAll(() => db.close());

/**
 * feed_horizon() and the horizon as 00024 defined it, computed by the statement itself (planned
 * afresh), in one statement: one snapshot for both. The horizon is the whole server's, and the
 * other test files' transactions move it between two statements.
 */
async function bothHorizons(sql: Sql): Promise<{ kept: bigint; fresh: bigint }> {
  const [row] = await sql<{ kept: string; fresh: string }[]>`
    select feed_horizon()::text as kept, (coalesce(
      (
        select min(x::text::bigint) from pg_snapshot_xip(pg_current_snapshot()) x
        where not exists (
          select 1 from pg_stat_activity a
          where a.backend_xid = xid(x) and a.datname is distinct from current_database()
        )
      ),
      (pg_snapshot_xmax(pg_current_snapshot())::text)::bigint
    ) + feed_xid_offset())::text as fresh`;
  return { kept: BigInt(row!.kept), fresh: BigInt(row!.fresh) };
}

async function horizon(sql: Sql): Promise<bigint> {
  const { kept, fresh } = await bothHorizons(sql);
  assert.equal(kept, fresh, "feed_horizon() and its expression disagree");
  return kept;
}

Deno.test({
  name: "the horizon stops at a transaction still open, and moves past it once it ends",
  // PGlite runs one transaction at a time; Citus has its own horizon per worker (00018).
  ignore: db.embedded || onCitus(),
  async fn() {
    const reader = db.pool(1);
    const writer = db.pool(1);
    try {
      // Called a few times first: PL/pgSQL plans on the first call and keeps the plan.
      for (let i = 0; i < 3; i++) await horizon(reader);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let opened!: (xid: bigint) => void;
      const open = new Promise<bigint>((resolve) => (opened = resolve));
      const writing = writer.begin(async (tx) => {
        const [row] = await tx<{ xid: string }[]>`
          select (pg_current_xact_id()::text::bigint + feed_xid_offset())::text as xid`;
        opened(BigInt(row!.xid));
        await held;
      });
      const xid = await open;
      // Other transactions of the server may hold it further back, never past this one.
      assert.ok(await horizon(reader) <= xid, "the horizon passed a transaction still open");
      release();
      await writing;
      let passed = false;
      for (let i = 0; i < 200 && !passed; i++) {
        passed = await horizon(reader) > xid;
        if (!passed) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(passed, "the horizon stayed behind a transaction that ended");
    } finally {
      await reader.end();
      await writer.end();
    }
  },
});

Deno.test({
  name: "a session that kept the horizon's plan sees a position offset raised after it",
  // No position offset on Citus (migration 00024).
  ignore: onCitus(),
  async fn() {
    const reader = db.pool(1);
    const other = db.pool(1);
    try {
      for (let i = 0; i < 3; i++) await horizon(reader);
      const before = await horizon(reader);
      const raise = 1_000_000_000n;
      // As a restore raises it (services/feed/positions.ts setOffset), on another connection
      // (on the embedded database the same one: it serves one).
      await other.unsafe(`
        create or replace function feed_xid_offset() returns bigint language sql immutable
          parallel safe as $f$ select ${raise}::bigint $f$`);
      const after = await horizon(reader);
      assert.ok(
        after >= before + raise,
        `horizon ${after} did not follow the offset (was ${before})`,
      );
    } finally {
      await reader.end();
      await other.end();
    }
  },
});
