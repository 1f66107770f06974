// Upgrading a populated database at migration 00029 to 00030 (each link keeps its project's id):
// every link gets its environment's project, the link host serves each project's links on its
// own host as before, links made after the upgrade carry it too, and the database refuses a link
// whose project is not its environment's. Then 00031 (the rows ingestion writes per event keep no
// key to their environment, nor the history to its link): events stored before and after it read
// on from the same cursor, and a link's deletion leaves its history's rows as they were.
import assert from "node:assert/strict";
import postgres from "postgres";
import { hashSecret } from "../infra/secrets.ts";
import { connect } from "../db/connect.ts";
import { migrate } from "../db/migrate.ts";
import { createTestDatabase, type TestDatabase } from "./helpers/database.ts";
import { readOk } from "./helpers/feed.ts";
import { callOnHost } from "./helpers/host.ts";
import { adminHeaders, call, createFeedToken, createProject, serveApp } from "./helpers/server.ts";
import { generateLink, ingest } from "./helpers/sdk.ts";

Deno.test("migration 00030 gives every link its project; the host, new links and the database follow it", async () => {
  const db = await createTestDatabase({ migrate: false });
  let close = () => Promise.resolve();
  try {
    await migrate(db.url, { upTo: 29 });
    const old = postgres(db.url, { max: 1, onnotice: () => {} });
    // Two projects as 00029 stored them: one served on its own link domain, one on the default
    // host; links in both environments of each.
    const projects: { id: number; domain: string | null; envs: number[] }[] = [];
    for (const [i, domain] of [["a", "go.alpha.test"], ["b", null]] as const) {
      const [p] = await old<{ id: number }[]>`
        insert into projects (hashid, name, enterprise, key_hash, link_domain)
        values (${"proj" + i + "000000"}, ${"Project " + i}, true, ${hashSecret("pk_" + i)},
          ${domain})
        returning id`;
      const envs = await old<{ id: number }[]>`
        insert into environments (project_id, kind)
        values (${p!.id}, 'production'), (${p!.id}, 'test') returning id`;
      projects.push({ id: p!.id, domain, envs: envs.map((e) => e.id) });
    }
    for (const p of projects) {
      for (const [k, env] of p.envs.entries()) {
        const path = `p${p.id}e${k}`;
        const [l] = await old<{ id: number }[]>`
          insert into links (environment_id, path, title, desktop_custom_redirect)
          values (${env}, ${path}, ${path},
            ${old.json({ url: `https://dest.example.test/${path}` })})
          returning id`;
        await old`insert into link_counters (link_id, environment_id) values (${l!.id}, ${env})`;
      }
    }
    await old.end();

    await migrate(db.url, { upTo: 30 });
    const sql = db.pool();
    const rows = await sql<{ path: string; project_id: number; expected: number }[]>`
      select l.path, l.project_id, e.project_id as expected
      from links l join environments e on e.id = l.environment_id order by l.path`;
    assert.equal(rows.length, 4);
    for (const r of rows) assert.equal(r.project_id, r.expected, r.path);

    // The host admits each project's links on its own host only, through the project kept on
    // the link.
    const srv = serveApp(db, { sql });
    close = () => srv.close();
    const [alpha, beta] = projects;
    const onAlpha = await callOnHost(srv.url, "go.alpha.test", `/p${alpha!.id}e0`);
    assert.equal(onAlpha.status, 302);
    assert.equal(onAlpha.headers.location, `https://dest.example.test/p${alpha!.id}e0`);
    assert.equal((await callOnHost(srv.url, "lnk.example.test", `/p${alpha!.id}e0`)).status, 404);
    const onDefault = await callOnHost(srv.url, "lnk.example.test", `/p${beta!.id}e1`);
    assert.equal(onDefault.status, 302);
    assert.equal((await callOnHost(srv.url, "go.alpha.test", `/p${beta!.id}e1`)).status, 404);

    // A link made after the upgrade carries its project, and is served by the same rule.
    const made = await call<{ link: { path: string } }>(
      srv.url,
      "POST",
      `/api/v1/projects/${alpha!.envs[0]}/links`,
      {
        headers: adminHeaders,
        body: { path: "after-upgrade", desktop_custom_redirect: { url: "https://x.test/" } },
      },
    );
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const [after] = await sql<{ project_id: number }[]>`
      select project_id from links where path = 'after-upgrade'`;
    assert.equal(after!.project_id, alpha!.id);
    assert.equal((await callOnHost(srv.url, "go.alpha.test", "/after-upgrade")).status, 302);

    // A link whose project is not its environment's is refused by the database itself.
    await assert.rejects(
      sql`insert into links (environment_id, project_id, path)
        values (${alpha!.envs[0]!}, ${beta!.id}, 'mismatched')`,
      (err: { code?: string }) => err.code === "23503",
    );
    await assert.rejects(
      sql`insert into links (environment_id, path) values (${alpha!.envs[0]!}, 'no-project')`,
      (err: { code?: string }) => err.code === "23502",
    );
  } finally {
    await close();
    await db.close();
  }
});

/**
 * One instance of the service at a time over `db`, each on a pool of its own that is ended
 * before the next starts: an upgrade between two instances (and the embedded database serves one
 * connection at a time).
 */
function oneInstanceAtATime(db: TestDatabase, connections: number) {
  let current: { srv: ReturnType<typeof serveApp>; sql: ReturnType<typeof connect> } | null = null;
  return {
    /** Starts an instance; its base URL. */
    start(): string {
      const sql = connect(db.url, connections);
      current = { srv: serveApp(db, { sql }), sql };
      return current.srv.url;
    },
    /** The running instance's pool. */
    get sql(): ReturnType<typeof connect> {
      return current!.sql;
    },
    async stop(): Promise<void> {
      if (!current) return;
      await current.srv.close();
      await current.sql.end({ timeout: 5 });
      current = null;
    },
  };
}

Deno.test("migration 00031 drops the per-event rows' keys; the feed reads on from an old cursor, a deleted link's history stays", async () => {
  const db = await createTestDatabase({ migrate: false });
  const instance = oneInstanceAtATime(db, 1);
  try {
    await migrate(db.url, { upTo: 30 });
    let base = instance.start();
    const p = await createProject(base, { name: "Keys" });
    const token = await createFeedToken(base, p.productionId);
    const path = await generateLink(base, p.key, "production", { title: "L" });
    const event = (id: string, type = "open") => ({
      id,
      type,
      occurred_at: new Date().toISOString(),
      link_path: path,
    });
    await ingest(base, p.key, "production", [event("before-1"), event("before-2")]);
    const first = await readOk(base, p.productionId, token.value);
    assert.equal(first.events.length, 2);
    await instance.stop();

    // To the latest (00031, and what follows it, which this tree's ingestion writes to).
    await migrate(db.url);
    base = instance.start();
    const sql = instance.sql;
    const keys = await sql<{ rel: string; target: string }[]>`
      select c.conrelid::regclass::text as rel, c.confrelid::regclass::text as target
      from pg_constraint c
      where c.contype = 'f' and c.conparentid = 0
        and c.conrelid in ('feed_events'::regclass, 'analytics_events'::regclass,
          'analytics_event_keys'::regclass, 'purchase_versions'::regclass)
      order by 1, 2`;
    // Only the purchases' key to links is left.
    assert.deepEqual(keys.map((k) => `${k.rel} -> ${k.target}`), ["purchase_versions -> links"]);

    // Ingestion stores as before, its ids still kept once; the feed goes on from the old cursor.
    const again = await ingest(base, p.key, "production", [
      event("before-1"),
      event("after-1", "install"),
    ]);
    assert.deepEqual(again, { accepted: 1, duplicates: 1 });
    const next = await readOk(base, p.productionId, token.value, { after: first.next_after });
    assert.deepEqual(next.events.map((e) => e.type), ["install"]);
    const [stored] = await sql<{ n: number }[]>`
      select count(*)::int as n from analytics_events where environment_id = ${p.productionId}`;
    assert.equal(stored!.n, 3);

    // The link's deletion leaves its history's rows as recorded, its id included.
    const [link] = await sql<{ id: number }[]>`select id from links where path = ${path}`;
    const deleted = await call(base, "DELETE", `/api/v1/projects/${p.productionId}/links/${path}`, {
      headers: adminHeaders,
    });
    assert.equal(deleted.status, 204, deleted.text);
    const kept = await sql<{ link_id: number | null; path: string }[]>`
      select link_id, body::jsonb #>> '{link,path}' as path from analytics_events
      where environment_id = ${p.productionId} order by id`;
    assert.deepEqual(kept.map((r) => [r.link_id, r.path]), [
      [link!.id, path],
      [link!.id, path],
      [link!.id, path],
    ]);
  } finally {
    await instance.stop();
    await db.close();
  }
});

Deno.test({
  name:
    "migrations 00030 and 00031 upgrade a million captured events in place; the feed reads on from an old cursor",
  // A million rows: PostgreSQL only (the embedded database would take minutes to write them).
  ignore: !Deno.env.get("DATABASE_URL"),
  fn: async () => {
    const db = await createTestDatabase({ migrate: false });
    const instance = oneInstanceAtATime(db, 2);
    const N = 1_000_000;
    try {
      await migrate(db.url, { upTo: 29 });
      let base = instance.start();
      const p = await createProject(base, { name: "Million" });
      const token = await createFeedToken(base, p.productionId);
      // One event through the API (no link: this version's link lookup names project_id), whose
      // stored envelope is the template of a million more, stored as capture stores them: each in
      // the history and in the feed, in one transaction (one xid, seq in their order).
      await ingest(base, p.key, "production", [{ type: "open", occurred_at: new Date() }]);
      await instance.sql.begin(async (tx) => {
        await tx`
          with t as (
            select event_id, body from analytics_events where environment_id = ${p.productionId}
          ), h as (
            insert into analytics_events (environment_id, event_id, type, occurred_at,
              received_at, body)
            select ${p.productionId}, 'evt_m' || lpad(g::text, 8, '0'), 'open', now(), now(),
              replace(t.body, t.event_id, 'evt_m' || lpad(g::text, 8, '0'))
            from t, generate_series(1, ${N}) g
            returning event_id, body
          )
          insert into feed_events (environment_id, type, received_at, body)
          select ${p.productionId}, 'open', now(), body from h order by event_id`;
      });
      const first = await readOk(base, p.productionId, token.value, { limit: 1000 });
      assert.equal(first.events.length, 1000);
      // The API's event first, then the million in order.
      assert.equal(first.events.at(-1)!.id, "evt_m00000999");
      await instance.stop();

      await migrate(db.url, { upTo: 31 });
      base = instance.start();
      const next = await readOk(base, p.productionId, token.value, {
        after: first.next_after,
        limit: 1000,
      });
      assert.deepEqual(
        [next.events[0]!.id, next.events.at(-1)!.id, next.events.length],
        ["evt_m00001000", "evt_m00001999", 1000],
      );
      const [counts] = await instance.sql<{ history: number; feed: number }[]>`
        select (select count(*)::int from analytics_events) as history,
          (select count(*)::int from feed_events) as feed`;
      assert.deepEqual({ ...counts }, { history: N + 1, feed: N + 1 });
    } finally {
      await instance.stop();
      await db.close();
    }
  },
});
