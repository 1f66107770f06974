// Two real server processes over one database deliver to one destination: never both at once,
// and when the lease holder is killed with SIGKILL mid-delivery, the other takes over within
// 30 s and nothing is skipped.
import assert from "node:assert/strict";
import { createTestDatabase } from "./helpers/database.ts";
import { sleep } from "./helpers/feed.ts";
import { listening, startService } from "./helpers/process.ts";
import { eventsOf, startReceiver } from "./helpers/receiver.ts";
import { ingest } from "./helpers/sdk.ts";
import { ADMIN_TOKEN, adminHeaders, call, createProject, CURSOR_SECRET } from "./helpers/server.ts";

const realPostgres = Boolean(Deno.env.get("DATABASE_URL"));

Deno.test({
  name: "kill -9 of the lease holder mid-delivery: the other instance takes over within 30 s",
  // The embedded database serves one process: several instances need PostgreSQL.
  ignore: !realPostgres,
  async fn() {
    const db = await createTestDatabase();
    const env = {
      DATABASE_URL: db.url,
      ADMIN_TOKEN,
      CURSOR_SECRET,
      DESTINATIONS_ALLOW_PRIVATE: "true",
    };
    const a = startService(env);
    const b = startService(env);
    let inFlight = 0;
    let maxInFlight = 0;
    let hold = true;
    const receiver = startReceiver(async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        // The first delivery hangs: its sender is killed while it waits.
        while (hold) await sleep(20);
        return new Response(null, { status: 204 });
      } finally {
        inFlight--;
      }
    });
    const sql = db.pool(2);
    try {
      const [urlA] = await Promise.all([listening(a), listening(b)]);
      const p = await createProject(urlA);
      const created = await call(urlA, "POST", `/api/v1/projects/${p.productionId}/destinations`, {
        headers: adminHeaders,
        body: { url: receiver.url },
      });
      assert.equal(created.status, 201);
      await ingest(urlA, p.key, "production", [
        { type: "install", occurred_at: "2026-01-01T00:00:00Z" },
        { type: "open", occurred_at: "2026-01-01T00:00:00Z" },
      ]);
      while (receiver.received.length === 0) await sleep(20);
      const [lease] = await sql<{ lease_owner: string }[]>`select lease_owner from destinations`;
      const pid = Number(/^pid(\d+):/.exec(lease!.lease_owner)![1]);
      assert.ok(pid === a.pid || pid === b.pid, lease!.lease_owner);
      const [holder, other] = pid === a.pid ? [a, b] : [b, a];
      Deno.kill(holder.pid, "SIGKILL");
      const killedAt = Date.now();
      await holder.status;
      hold = false;
      await ingest(await other.url, p.key, "production", [
        { type: "reinstall", occurred_at: "2026-01-01T00:00:00Z" },
      ]);
      while (receiver.received.length < 2 && Date.now() - killedAt < 40_000) await sleep(50);
      const tookOverMs = Date.now() - killedAt;
      assert.ok(receiver.received.length >= 2, "no takeover");
      assert.ok(tookOverMs < 30_000, `took ${tookOverMs} ms`);
      // The batch the dead instance had in flight is sent again, same id, same events.
      const [first, second] = receiver.received;
      assert.equal(second!.headers["webhook-id"], first!.headers["webhook-id"]);
      assert.equal(second!.body, first!.body);
      while (receiver.received.length < 3 && Date.now() - killedAt < 40_000) await sleep(50);
      const feed = (await sql<{ body: string }[]>`
        select body from feed_events where environment_id = ${p.productionId} order by xid, seq
      `).map((r) => JSON.parse(r.body).id);
      // The dead instance's request also got its 204 (to nobody): a batch twice, by id.
      const seen = new Set<string>();
      const acked = receiver.received.filter((r) => {
        const fresh = r.answered === 204 && !seen.has(r.headers["webhook-id"]!);
        seen.add(r.headers["webhook-id"]!);
        return fresh;
      });
      assert.deepEqual(acked.flatMap((r) => eventsOf(r).map((e) => e.id)), feed);
      assert.equal(maxInFlight, 1, "two instances delivered at once");
    } finally {
      hold = false;
      await Promise.all([a.stop(), b.stop()]);
      await receiver.close();
      await db.close();
    }
  },
});
