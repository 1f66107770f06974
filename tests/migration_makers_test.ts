// Upgrading a populated database at migration 00024 to 00025 (who made keys, feed tokens and
// destinations): each maker is read back from the audit log, a key made by a key belongs to the
// person (or the admin token) at the start of its chain and is held to them at once, and a key
// whose chain ends at a removed account or at nothing known is revoked, with an audit entry.
import assert from "node:assert/strict";
import postgres from "postgres";
import { hashSecret } from "../infra/secrets.ts";
import { createTestDatabase, migrateUpTo } from "./helpers/database.ts";
import { ManualClock } from "./helpers/clock.ts";
import { assertError, call, serveApp } from "./helpers/server.ts";

Deno.test("migration 00025 finds every maker, gives chained keys their person, revokes the untraceable", async () => {
  const db = await createTestDatabase({ migrate: false });
  let close = () => Promise.resolve();
  try {
    await migrateUpTo(db.url, 24);
    const old = postgres(db.url, { max: 1, onnotice: () => {} });
    const one = async <T>(q: Promise<T[]>) => (await q)[0]!;
    const project = await one(old<{ id: number }[]>`
      insert into projects (hashid, name, enterprise, key_hash)
      values ('makers0000', 'Makers', true, ${hashSecret("pk_makers")}) returning id
    `);
    const env = (await one(old<{ id: number }[]>`
      insert into environments (project_id, kind) values (${project.id}, 'production')
      returning id
    `)).id;
    const account = async (name: string) =>
      (await one(old<{ id: number }[]>`
        insert into accounts (email, name, created_at)
        values (${name + "@example.test"}, ${name}, now()) returning id
      `)).id;
    const ada = await account("Ada");
    const gone = await account("Gone");
    await old`
      insert into project_members (project_id, account_id, role)
      values (${project.id}, ${ada}, 'admin'), (${project.id}, ${gone}, 'owner')
    `;
    // Keys as 00024's code wrote them: the creator only when a person made the key, and the
    // creation's audit entry naming the actor.
    const values: Record<string, string> = {};
    const key = async (
      name: string,
      by: { type: "account" | "api_key" | "admin_token"; id: number | null; name: string } | null,
    ) => {
      values[name] = `sk_${name}_${"x".repeat(40)}`;
      const row = await one(old<{ id: number }[]>`
        insert into api_keys (environment_id, name, scopes, key_hash, hint, created_at,
          created_by_account_id)
        values (${env}, ${name}, ${["admin", "links:read"]}::text[], ${hashSecret(values[name])},
          ${"sk_…" + name}, now(), ${by?.type === "account" ? by.id : null})
        returning id
      `);
      if (by) {
        await old`
          insert into audit_log (project_id, actor_type, actor_id, actor_name, action,
            target_type, target_id)
          values (${project.id}, ${by.type}, ${by.id}, ${by.name}, 'api_key.create', 'api_key',
            ${String(row.id)})
        `;
      }
      return { type: "api_key" as const, id: row.id, name };
    };
    const k1 = await key("k1", { type: "account", id: ada, name: "Ada" });
    const k2 = await key("k2", k1);
    await key("k3", k2);
    const ka = await key("ka", { type: "admin_token", id: null, name: "admin token" });
    await key("kb", ka);
    const kg = await key("kg", { type: "account", id: gone, name: "Gone" });
    await key("kg2", kg);
    await key("kx", null);
    // The account Gone removed as 00024 did: its own key revoked, the key its key made not.
    await old`update api_keys set revoked_at = now() where created_by_account_id = ${gone}`;
    await old`delete from accounts where id = ${gone}`;
    // A feed token made by k2 and one from before the audit log; a destination made by Ada.
    const token = async (name: string, by: typeof k2 | null) => {
      const row = await one(old<{ id: number }[]>`
        insert into feed_tokens (environment_id, name, token_hash, hint, created_at)
        values (${env}, ${name}, ${hashSecret("est_" + name)}, 'est_…', now()) returning id
      `);
      if (by) {
        await old`
          insert into audit_log (project_id, actor_type, actor_id, actor_name, action,
            target_type, target_id)
          values (${project.id}, 'api_key', ${by.id}, ${by.name}, 'feed_token.create',
            'feed_token', ${String(row.id)})
        `;
      }
    };
    await token("by k2", k2);
    await token("older", null);
    const dest = await one(old<{ id: number }[]>`
      insert into destinations (environment_id, url, created_at, secret_sealed)
      values (${env}, 'https://hooks.example.test/x', now(), 'sealed') returning id
    `);
    await old`
      insert into audit_log (project_id, actor_type, actor_id, actor_name, action, target_type,
        target_id)
      values (${project.id}, 'account', ${ada}, 'Ada', 'destination.create', 'destination',
        ${String(dest.id)})
    `;
    await old.end();

    await migrateUpTo(db.url, 25);
    const sql = db.pool();
    const keys = await sql<
      {
        name: string;
        owner_type: string | null;
        created_by_account_id: number | null;
        made_by_type: string | null;
        made_by_id: number | null;
        revoked: boolean;
      }[]
    >`
      select name, owner_type, created_by_account_id, made_by_type, made_by_id,
        revoked_at is not null as revoked
      from api_keys order by id
    `;
    const by = Object.fromEntries(keys.map((k) => [k.name, k]));
    assert.deepEqual(
      ["k1", "k2", "k3"].map((n) => [by[n]!.owner_type, by[n]!.created_by_account_id]),
      [["account", ada], ["account", ada], ["account", ada]],
    );
    assert.deepEqual([by.k3!.made_by_type, by.k3!.made_by_id], ["api_key", k2.id]);
    assert.deepEqual([by.kb!.owner_type, by.kb!.revoked], ["admin_token", false]);
    // Untraceable, or traced to a removed account: revoked, each with an entry.
    assert.deepEqual(
      keys.filter((k) => k.revoked).map((k) => k.name).sort(),
      ["kg", "kg2", "kx"],
    );
    const entries = await sql`
      select target_id from audit_log
      where action = 'api_key.revoke' and actor_name = 'upgrade (migration 00025)'
      order by target_id
    `;
    assert.equal(entries.length, 2, "kg was revoked before the upgrade");
    const tokens = await sql`
      select name, owner_type, created_by_account_id, made_by_type, revoked_at
      from feed_tokens order by id
    `;
    assert.deepEqual(tokens.map((t) => [t.name, t.owner_type, t.created_by_account_id]), [
      ["by k2", "account", ada],
      ["older", null, null],
    ]);
    assert.ok(tokens.every((t) => t.revoked_at === null), "integrations are not revoked");
    const [d] = await sql`select owner_type, created_by_account_id from destinations`;
    assert.deepEqual([d!.owner_type, d!.created_by_account_id], ["account", ada]);

    // At once: Ada demoted, her chain's keys keep only what a viewer may give.
    const clock = new ManualClock("2026-06-01T09:00:00Z");
    const app = serveApp(db, { sql, clock });
    close = app.close;
    await sql`update project_members set role = 'viewer' where account_id = ${ada}`;
    const as = (name: string, path: string) =>
      call(app.url, "GET", path, { headers: { Authorization: `Bearer ${values[name]}` } });
    assertError(await as("k3", `/api/v1/projects/${env}/api_keys`), 403, "insufficient_scope");
    assert.equal((await as("kb", `/api/v1/projects/${env}/api_keys`)).status, 200);
    assertError(await as("kg2", `/api/v1/projects/${env}/links`), 401, "unauthorized");
    assertError(await as("kx", `/api/v1/projects/${env}/links`), 401, "unauthorized");
    const list = await as("kb", `/api/v1/projects/${env}/api_keys`);
    const k3Listed = list.body.api_keys.find((k: { name: string }) => k.name === "k3");
    assert.deepEqual(k3Listed.belongs_to, { type: "account", id: ada, name: "Ada" });
    assert.deepEqual(k3Listed.created_by, { type: "api_key", id: k2.id, name: "k2" });
  } finally {
    await close();
    await db.close();
  }
});
