// Upgrading a database at migration 00013 (the admin-token limit, managed links and analytics
// already there) to team access (00014): what it held keeps working. A dashboard session signed
// in with the admin token stays signed in as the instance admin, the admin-token failures still
// count, a link keeps its path and counters, and the new tables start empty.
import assert from "node:assert/strict";
import postgres from "postgres";
import { hashSecret } from "../infra/secrets.ts";
import { migrate } from "../db/migrate.ts";
import { createTestDatabase, migrateUpTo } from "./helpers/database.ts";
import { ADMIN_TOKEN, serveApp } from "./helpers/server.ts";
import { ManualClock } from "./helpers/clock.ts";
import { signInOverHttp } from "./helpers/dashboard.ts";

Deno.test("migration 00014 applies on a database at 00013 and keeps failures and links (sessions until 00026)", async () => {
  const db = await createTestDatabase({ migrate: false });
  const srv = { close: () => Promise.resolve() };
  try {
    await migrateUpTo(db.url, 13);
    const clock = new ManualClock("2026-05-01T08:00:00Z");
    // Written as 00013's version wrote them, on its own connection (closed before migrating:
    // the embedded database serves one at a time).
    const old = postgres(db.url, { max: 1, onnotice: () => {} });
    const session = "s".repeat(43);
    await old`
      insert into dashboard_sessions (token_hash, created_at, last_seen_at)
      values (${hashSecret(session)}, ${clock.now()}, ${clock.now()})
    `;
    await old`insert into admin_token_failures (address, at) values ('203.0.113.5', ${clock.now()})`;
    const [{ id: projectId }] = await old<{ id: number }[]>`
      insert into projects (hashid, name, enterprise, key_hash)
      values ('upgraded00', 'Upgraded', true, ${hashSecret("pk_upgraded")}) returning id
    ` as unknown as [{ id: number }];
    const [{ id: env }] = await old<{ id: number }[]>`
      insert into environments (project_id, kind) values (${projectId}, 'production')
      returning id
    ` as unknown as [{ id: number }];
    const [{ id: linkId }] = await old<{ id: number }[]>`
      insert into links (environment_id, path, title) values (${env}, 'kept-path', 'Kept')
      returning id
    ` as unknown as [{ id: number }];
    await old`
      insert into link_counters (link_id, environment_id, total_views)
      values (${linkId}, ${env}, 7)
    `;
    await old.end();

    await migrateUpTo(db.url, 14);
    // Its own connection too, closed before the rest of the migrations open theirs.
    const sql = postgres(db.url, { max: 1, onnotice: () => {} });
    const [last] = await sql`select max(migration_id)::int as id from migrations`;
    assert.equal(last!.id, 14);
    for (
      const table of [
        "api_keys",
        "audit_log",
        "accounts",
        "project_members",
        "password_signin_failures",
      ]
    ) {
      const [row] = await sql`select count(*)::int as n from ${sql(table)}`;
      assert.equal(row!.n, 0, table);
    }
    const [failures] = await sql`select count(*)::int as n from admin_token_failures`;
    assert.equal(failures!.n, 1, "the failures counted before the upgrade still count");

    await sql.end();

    // The rest of the migrations, as the upgraded instance's start runs them.
    await migrate(db.url);
    const app = serveApp(db, { sql: db.pool(), clock });
    srv.close = app.close;
    // The session signed in with the admin token before the upgrade carries no fingerprint of
    // its token (a later migration, 00026 when written): it ends, and the admin signs in again.
    const ended = await fetch(`${app.url}/dashboard/accounts`, {
      headers: { cookie: `dashboard_session=${session}` },
      redirect: "manual",
    });
    await ended.body?.cancel();
    assert.equal(ended.status, 303);
    assert.equal(ended.headers.get("location"), "/dashboard/sign-in?expired=1");
    const again = await signInOverHttp(app.url);
    const page = await fetch(`${app.url}/dashboard/accounts`, {
      headers: { cookie: again.cookie },
      redirect: "manual",
    });
    const html = await page.text();
    assert.equal(page.status, 200, html.slice(0, 300));
    assert.match(html, /Audit log/);
    // The admin token works on the link routes, and the link kept its path and counters.
    const list = await fetch(`${app.url}/api/v1/projects/${env}/links`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const body = await list.json();
    assert.equal(list.status, 200, JSON.stringify(body));
    assert.deepEqual(
      body.links.map((l: { path: string; total_views: number }) => [l.path, l.total_views]),
      [["kept-path", 7]],
    );
  } finally {
    await srv.close();
    await db.close();
  }
});
