// Upgrading to (xid, seq) capture (migration 00008) on a database with a feed: the captured
// events move into the partitioned table in their order, a cursor issued before (v1) reads on
// from where it stood, and a destination continues from its place.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import postgres from "postgres";
import { migrate } from "../db/migrate.ts";
import { systemClock } from "../infra/clock.ts";
import { sealMigratedSecrets } from "../services/destinations/delivery.ts";
import { startCapture } from "../services/feed/capture.ts";
import { projectHashid } from "../infra/hashids.ts";
import { hashSecret } from "../infra/secrets.ts";
import { createTestDatabase, migrateUpTo } from "./helpers/database.ts";
import { capture, envelope, readOk } from "./helpers/feed.ts";
import { deliveryWorker, eventsOf, startReceiver } from "./helpers/receiver.ts";
import { CURSOR_SECRET, serveApp } from "./helpers/server.ts";

/** A cursor as the earlier version issued it: `v1`, [environment, epoch, seq, filter]. */
function v1Cursor(value: unknown[]): string {
  const signed = `v1.${Buffer.from(JSON.stringify(value)).toString("base64url")}`;
  return `${signed}.${createHmac("sha256", CURSOR_SECRET).update(signed).digest("base64url")}`;
}

Deno.test("migration 00008 keeps the feed's order, v1 cursors and destinations' places", async () => {
  const db = await createTestDatabase({ migrate: false });
  const receiver = startReceiver(() => new Response(null, { status: 204 }));
  const srv = { close: () => Promise.resolve() };
  try {
    await migrateUpTo(db.url, 7);
    // Its own connection, closed before migrating: the embedded database serves one at a time.
    const old = postgres(db.url, { max: 1, onnotice: () => {} });
    // Written as that version wrote them (today's services also write tables it did not have).
    const [{ id: projectId }] = await old<{ id: number }[]>`
      insert into projects (hashid, name, enterprise, key_hash)
      values ('pending', 'Upgraded', true, ${hashSecret("pk_upgraded")})
      returning id
    ` as unknown as [{ id: number }];
    const project = { id: projectHashid(projectId) };
    await old`update projects set hashid = ${project.id} where id = ${projectId}`;
    const [{ id: env }] = await old<{ id: number }[]>`
      insert into environments (project_id, kind) values (${projectId}, 'production'),
        (${projectId}, 'test')
      returning id
    ` as unknown as [{ id: number }];
    const token = { value: "est_" + "u".repeat(43) };
    await old`
      insert into feed_tokens (environment_id, name, token_hash, hint, created_at)
      values (${env}, 'warehouse', ${hashSecret(token.value)}, 'est_…uuuu', now())
    `;
    await startCapture(old, env, new Date());
    // Three events captured by the earlier version (seq 1..3), a destination done with seq 2.
    const legacy = ["install", "open", "purchase"].map((t) => envelope(project.id, t));
    await old`
      insert into feed_events (environment_id, seq, type, received_at, body)
      select ${env}, ord, t.type, now(), t.body
      from unnest(${legacy.map((e) => e.type)}::text[], ${legacy.map((e) => e.body)}::text[])
        with ordinality as t(type, body, ord)
    `;
    await old`update environments set feed_seq = 3 where id = ${env}`;
    await old`
      insert into destinations (environment_id, url, created_at, secret_sealed, cursor_seq)
      values (${env}, ${receiver.url}, now(), 'plain:whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 2)
    `;
    const [{ epoch }] = await old<{ epoch: string }[]>`
      select (extract(epoch from capture_started_at) * 1000000)::bigint::text as epoch
      from environments where id = ${env}
    ` as unknown as [{ epoch: string }];
    await old.end();

    await migrate(db.url);
    const sql = db.pool();
    const [kind] = await sql`
      select c.relkind from pg_class c where c.relname = 'feed_events'
    `;
    assert.equal(kind!.relkind, "p", "feed_events is partitioned");

    const app = serveApp(db, { sql });
    srv.close = app.close;
    // The v1 cursor after seq 1 reads on with seq 2 and 3, then what is captured now.
    const page = await readOk(app.url, env, token.value, {
      after: v1Cursor([env, epoch, "1", []]),
    });
    assert.deepEqual(page.events.map((e) => e.id), legacy.slice(1).map((e) => e.id));
    assert.match(page.next_after, /^v2\./);
    const fresh = await capture(sql, env, project.id, ["session", "open"], new Date());
    const next = await readOk(app.url, env, token.value, { after: page.next_after });
    assert.deepEqual(next.events.map((e) => e.id), fresh);
    // From the start, everything in order: the old events first.
    const all = await readOk(app.url, env, token.value);
    assert.deepEqual(all.events.map((e) => e.id), [...legacy.map((e) => e.id), ...fresh]);

    // The destination continues after seq 2: the third old event, then the new ones.
    await sealMigratedSecrets(sql, CURSOR_SECRET);
    await deliveryWorker({ sql, clock: systemClock }).drain();
    assert.deepEqual(
      receiver.received.flatMap((r) => eventsOf(r).map((e) => e.id)),
      [legacy[2]!.id, ...fresh],
    );
  } finally {
    await srv.close();
    await receiver.close();
    await db.close();
  }
});
