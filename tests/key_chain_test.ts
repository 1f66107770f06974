// A key made by a key belongs to the person behind the chain (or to the instance admin when the
// chain starts at the admin token): it is held to that person's role and revoked with them, on
// the next request, on another instance too. Feed tokens and destinations record who made them
// and whom they belong to, in the lists and the audit log (issue 32).
import assert from "node:assert/strict";
import { createApiKey } from "../services/access/api_keys.ts";
import { ManualClock } from "./helpers/clock.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { getPage, postForm, signInOverHttp } from "./helpers/dashboard.ts";
import { gql } from "./helpers/graphql.ts";
import { adminHeaders, assertError, call, createProject, serveApp } from "./helpers/server.ts";

const db = await createTestDatabase();
const clock = new ManualClock("2026-06-01T09:00:00Z");
const config = { DESTINATIONS_ALLOW_PRIVATE: "true" };
const srv = serveApp(db, { clock, config });
const other = serveApp(db, { clock, config, sql: db.embedded ? srv.sql : undefined });
Deno.test.afterAll(async () => {
  await other.close();
  await srv.close();
  await db.close();
});

const admin = (method: string, path: string, body?: unknown) =>
  call(srv.url, method, path, { headers: adminHeaders, body });
const as = (key: string, method: string, path: string, body?: unknown, url = srv.url) =>
  call(url, method, path, { headers: { Authorization: `Bearer ${key}` }, body });

async function newAccount(name: string) {
  const res = await admin("POST", "/api/v1/admin/accounts", {
    email: `${name.toLowerCase()}@example.test`,
    name,
  });
  assert.equal(res.status, 201, res.text);
  return { type: "account" as const, id: res.body.account.id as number, name, email: "" };
}

const ALL = ["links:read", "links:write", "analytics:read", "events:read", "admin"] as const;

/** A person's key, as the dashboard's key page makes it (their session's principal). */
async function keyOf(person: Awaited<ReturnType<typeof newAccount>>, env: number, name: string) {
  const made = await createApiKey(srv.sql, clock, person, String(env), {
    name,
    scopes: [...ALL],
    expires_at: null,
  }, { actor: { type: "account", id: person.id, name: person.name }, requestId: null });
  return made.value;
}

/** A key made with `key`. */
async function keyBy(key: string, env: number, name: string) {
  const res = await as(key, "POST", `/api/v1/projects/${env}/api_keys`, { name, scopes: ALL });
  assert.equal(res.status, 201, res.text);
  return res.body.api_key as {
    id: number;
    value: string;
    created_by: unknown;
    belongs_to: unknown;
  };
}

Deno.test("issue 32's reproduction: a key made by a key escapes no revocation", async () => {
  const project = await createProject(srv.url, { name: "Escape" });
  const env = project.productionId;
  const members = `/api/v1/admin/projects/${project.hashid}/members`;
  const owner = await newAccount("Olga");
  const admin1 = await newAccount("Adam");
  await admin("PUT", `${members}/${owner.id}`, { role: "owner" });
  await admin("PUT", `${members}/${admin1.id}`, { role: "admin" });
  const k1 = await keyOf(admin1, env, "K1");
  const k2 = (await keyBy(k1, env, "K2")).value;
  const keys = `/api/v1/projects/${env}/api_keys`;
  await admin("PUT", `${members}/${admin1.id}`, { role: "viewer" });
  assertError(await as(k1, "GET", keys, undefined, other.url), 403, "insufficient_scope");
  assertError(await as(k2, "GET", keys, undefined, other.url), 403, "insufficient_scope");
  await admin("DELETE", `${members}/${admin1.id}`);
  assertError(await as(k2, "GET", keys, undefined, other.url), 401, "unauthorized");
  await admin("PUT", `${members}/${admin1.id}`, { role: "admin" });
  const k3 = (await keyBy(await keyOf(admin1, env, "K3"), env, "K4")).value;
  await admin("DELETE", `/api/v1/admin/accounts/${admin1.id}`);
  for (
    const [method, path, body] of [
      ["GET", keys],
      ["POST", `/api/v1/projects/${env}/event_stream_tokens`, { name: "t" }],
      ["POST", keys, { name: "another", scopes: ["admin"] }],
    ] as const
  ) {
    assertError(await as(k3, method, path, body, other.url), 401, "unauthorized");
  }
});

Deno.test("keys made by keys are their person's: cut down, removed and deleted with them", async () => {
  const project = await createProject(srv.url, { name: "Chain" });
  const env = project.productionId;
  const members = `/api/v1/admin/projects/${project.hashid}/members`;
  const owner = await newAccount("Owner");
  const ada = await newAccount("Ada");
  await admin("PUT", `${members}/${owner.id}`, { role: "owner" });
  await admin("PUT", `${members}/${ada.id}`, { role: "admin" });

  const k1 = await keyOf(ada, env, "ada's");
  const k2 = await keyBy(k1, env, "made by ada's");
  const k3 = await keyBy(k2.value, env, "made by a key made by ada's");
  const adas = { type: "account", id: ada.id, name: "Ada" };
  assert.deepEqual(k2.belongs_to, adas);
  assert.deepEqual(k3.belongs_to, adas);
  const list = await admin("GET", `/api/v1/projects/${env}/api_keys`);
  const byName = Object.fromEntries(
    list.body.api_keys.map((k: { name: string }) => [k.name, k]),
  );
  assert.deepEqual(byName["ada's"].created_by, { type: "account", id: ada.id, name: "Ada" });
  assert.deepEqual(byName["made by ada's"].created_by.type, "api_key");
  assert.deepEqual(byName["made by ada's"].created_by.name, "ada's");
  assert.deepEqual(byName["made by a key made by ada's"].created_by, {
    type: "api_key",
    id: k2.id,
    name: "made by ada's",
  });
  assert.deepEqual(byName["made by a key made by ada's"].belongs_to, adas);
  // The creation's audit entry names the key and the person it acted for.
  const [entry] = await srv.sql`
    select actor_type, actor_id, detail from audit_log
    where action = 'api_key.create' and target_id = ${String(k3.id)}
  `;
  assert.equal(entry!.actor_type, "api_key");
  assert.equal(entry!.actor_id, k2.id);
  assert.deepEqual(entry!.detail, { on_behalf_of_account: ada.id });

  // Feed tokens and destinations made by the chain's keys are Ada's too.
  const token = await as(k3.value, "POST", `/api/v1/projects/${env}/event_stream_tokens`, {
    name: "warehouse",
  });
  assert.equal(token.status, 201, token.text);
  assert.deepEqual(token.body.token.belongs_to, adas);
  assert.equal(token.body.token.created_by.id, k3.id);
  const dest = await as(k3.value, "POST", `/api/v1/projects/${env}/destinations`, {
    url: "http://127.0.0.1:9/hook",
  });
  assert.equal(dest.status, 201, dest.text);
  const dests = await admin("GET", `/api/v1/projects/${env}/destinations`);
  assert.deepEqual(dests.body.destinations[0].belongs_to, adas);
  assert.deepEqual(dests.body.destinations[0].created_by, {
    type: "api_key",
    id: k3.id,
    name: "made by a key made by ada's",
  });
  const tokens = await admin("GET", `/api/v1/projects/${env}/event_stream_tokens`);
  assert.deepEqual(tokens.body.tokens[0].belongs_to, adas);
  // GraphQL's lists say the same.
  const graph = await gql(
    srv.url,
    `query($id: ID!) { environment(projectId: $id) {
      apiKeys { name createdBy { type id name } belongsTo { type id name } }
      feedTokens { createdBy { type id } belongsTo { type id name } }
      destinations { createdBy { type id } belongsTo { type id name } }
    } }`,
    { variables: { id: String(env) }, headers: adminHeaders },
  );
  assert.equal(graph.errors, undefined, JSON.stringify(graph.errors));
  const gAda = { type: "ACCOUNT", id: String(ada.id), name: "Ada" };
  assert.deepEqual(
    graph.data.environment.apiKeys.map((k: { belongsTo: unknown }) => k.belongsTo),
    [gAda, gAda, gAda],
  );
  assert.deepEqual(graph.data.environment.apiKeys[2].createdBy, {
    type: "API_KEY",
    id: String(k2.id),
    name: "made by ada's",
  });
  assert.deepEqual(graph.data.environment.feedTokens[0].belongsTo, gAda);
  assert.deepEqual(graph.data.environment.destinations[0].belongsTo, gAda);

  // Demoted to editor: every key of the chain keeps only what an editor may give.
  const keys = `/api/v1/projects/${env}/api_keys`;
  const links = `/api/v1/projects/${env}/links`;
  for (const k of [k1, k2.value, k3.value]) assert.equal((await as(k, "GET", keys)).status, 200);
  await admin("PUT", `${members}/${ada.id}`, { role: "editor" });
  for (const k of [k1, k2.value, k3.value]) {
    assertError(await as(k, "GET", keys, undefined, other.url), 403, "insufficient_scope");
    assertError(
      await as(k, "POST", keys, { name: "again", scopes: ["admin"] }, other.url),
      403,
      "insufficient_scope",
    );
    assert.equal((await as(k, "GET", links, undefined, other.url)).status, 200);
  }
  // Removed from the project: all of them 401, on the other instance, at once.
  await admin("PUT", `${members}/${ada.id}`, { role: "admin" });
  assert.equal((await as(k3.value, "GET", keys, undefined, other.url)).status, 200);
  assert.equal((await admin("DELETE", `${members}/${ada.id}`)).status, 204);
  for (const k of [k1, k2.value, k3.value]) {
    assertError(await as(k, "GET", links, undefined, other.url), 401, "unauthorized");
  }
  // Integrations outlive her: the feed token and destination stay, still naming her.
  assert.equal(
    (await admin("GET", `/api/v1/projects/${env}/event_stream_tokens`)).body.tokens
      .length,
    1,
  );

  // Back, with a new chain; then the account deleted: the chain's keys go with it.
  await admin("PUT", `${members}/${ada.id}`, { role: "admin" });
  const k4 = await keyOf(ada, env, "ada's again");
  const k5 = await keyBy(k4, env, "made by ada's again");
  const k6 = await keyBy(k5.value, env, "third in the chain");
  assert.equal((await as(k6.value, "GET", keys, undefined, other.url)).status, 200);
  assert.equal((await admin("DELETE", `/api/v1/admin/accounts/${ada.id}`)).status, 204);
  for (const k of [k4, k5.value, k6.value]) {
    assertError(await as(k, "GET", keys, undefined, other.url), 401, "unauthorized");
    assertError(
      await as(k, "POST", keys, { name: "escape", scopes: ["admin"] }, other.url),
      401,
      "unauthorized",
    );
  }
  // What she made is still listed with her id, her name gone with her account.
  const after = await admin("GET", `/api/v1/projects/${env}/event_stream_tokens`);
  assert.deepEqual(after.body.tokens[0].belongs_to, { type: "account", id: ada.id, name: null });
});

Deno.test("a chain that starts at the admin token is the instance admin's", async () => {
  const project = await createProject(srv.url, { name: "Admin chain" });
  const env = project.productionId;
  const made = await admin("POST", `/api/v1/projects/${env}/api_keys`, {
    name: "root",
    scopes: ALL,
  });
  assert.equal(made.status, 201);
  const instance = { type: "admin_token", id: null, name: "instance admin" };
  assert.deepEqual(made.body.api_key.belongs_to, instance);
  assert.deepEqual(made.body.api_key.created_by, {
    type: "admin_token",
    id: null,
    name: "admin token",
  });
  const child = await keyBy(made.body.api_key.value, env, "child");
  const grandchild = await keyBy(child.value, env, "grandchild");
  assert.deepEqual(grandchild.belongs_to, instance);
  assert.equal(
    (await as(grandchild.value, "GET", `/api/v1/projects/${env}/api_keys`, undefined, other.url))
      .status,
    200,
  );
  // A key never gives more than it has, whoever is behind it.
  const narrow = await as(child.value, "POST", `/api/v1/projects/${env}/api_keys`, {
    name: "narrow",
    scopes: ["admin"],
  });
  const narrowKey = narrow.body.api_key.value;
  assertError(
    await as(narrowKey, "POST", `/api/v1/projects/${env}/api_keys`, {
      name: "wider",
      scopes: ["links:read"],
    }),
    403,
    "insufficient_scope",
  );
});

Deno.test("revoke everything a person made: REST and dashboard, audited, the account stays", async () => {
  const project = await createProject(srv.url, { name: "Leaver" });
  const env = project.productionId;
  const members = `/api/v1/admin/projects/${project.hashid}/members`;
  const owner = await newAccount("Otto");
  const bea = await newAccount("Bea");
  await admin("PUT", `${members}/${owner.id}`, { role: "owner" });
  await admin("PUT", `${members}/${bea.id}`, { role: "admin" });
  const k1 = await keyOf(bea, env, "bea's");
  const k2 = await keyBy(k1, env, "bea's second");
  const token = await as(k2.value, "POST", `/api/v1/projects/${env}/event_stream_tokens`, {
    name: "bea's warehouse",
  });
  const dest = await as(k1, "POST", `/api/v1/projects/${env}/destinations`, {
    url: "http://127.0.0.1:9/bea",
  });
  assert.equal(dest.status, 201, dest.text);
  // The instance admin's own things are not hers and stay.
  const kept = await admin("POST", `/api/v1/projects/${env}/event_stream_tokens`, { name: "ops" });
  const before = Number((await srv.sql`select max(id)::int as n from audit_log`)[0]!.n);

  const path = `/api/v1/admin/accounts/${bea.id}/revoke_made`;
  assertError(await as(k1, "POST", path), 403, "forbidden");
  assertError(await admin("POST", "/api/v1/admin/accounts/999999/revoke_made"), 404, "not_found");
  const res = await admin("POST", path);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body, { revoked: { api_keys: 2, feed_tokens: 1, destinations_paused: 1 } });
  for (const k of [k1, k2.value]) {
    assertError(
      await as(k, "GET", `/api/v1/projects/${env}/links`, undefined, other.url),
      401,
      "unauthorized",
    );
  }
  assertError(
    await as(
      token.body.token.value,
      "GET",
      `/api/v1/projects/${env}/event_stream`,
      undefined,
      other.url,
    ),
    401,
    "unauthorized",
  );
  const tokens = await admin("GET", `/api/v1/projects/${env}/event_stream_tokens`);
  assert.deepEqual(tokens.body.tokens.map((t: { id: number }) => t.id), [kept.body.token.id]);
  const dests = await admin("GET", `/api/v1/projects/${env}/destinations`);
  assert.equal(dests.body.destinations[0].state, "paused");
  const entries = await srv.sql<{ action: string; target_id: string; detail: unknown }[]>`
    select action, target_id, detail from audit_log where id > ${before} order by id
  `;
  assert.deepEqual(entries.map((e) => e.action), [
    "api_key.revoke",
    "api_key.revoke",
    "feed_token.revoke",
    "destination.pause",
    "account.revoke_made",
  ]);
  assert.deepEqual(entries.at(-1)!.detail, { api_keys: 2, feed_tokens: 1, destinations_paused: 1 });
  assert.equal(entries.at(-1)!.target_id, String(bea.id));
  // Twice is harmless: nothing left to revoke.
  const twice = await admin("POST", path);
  assert.deepEqual(twice.body, {
    revoked: { api_keys: 0, feed_tokens: 0, destinations_paused: 0 },
  });

  // Her account and role stay: she can make new keys.
  const again = await keyOf(bea, env, "bea's new");
  assert.equal((await as(again, "GET", `/api/v1/projects/${env}/api_keys`)).status, 200);
  // The dashboard's button, for the instance admin.
  const session = await signInOverHttp(srv.url);
  const token2 = await as(again, "POST", `/api/v1/projects/${env}/event_stream_tokens`, {
    name: "bea's second warehouse",
  });
  assert.equal(token2.status, 201);
  const accounts = await getPage(srv.url, "/dashboard/accounts", session);
  assert.match(accounts.text, new RegExp(`/dashboard/accounts/${bea.id}/revoke-made`));
  const ask = await getPage(srv.url, `/dashboard/accounts/${bea.id}/revoke-made`, session);
  assert.equal(ask.status, 200);
  assert.match(ask.text, /Revoke all Bea made\?/);
  const done = await postForm(srv.url, `/dashboard/accounts/${bea.id}/revoke-made`, session, {
    _csrf: session.csrf,
  });
  assert.equal(done.status, 200, done.text);
  assert.match(done.text, /1 API key and 1 feed token revoked, 0 destinations paused/);
  assertError(await as(again, "GET", `/api/v1/projects/${env}/links`), 401, "unauthorized");
  const [last] = await srv.sql`select action, actor_type from audit_log order by id desc limit 1`;
  assert.deepEqual([last!.action, last!.actor_type], ["account.revoke_made", "admin_token"]);

  // The dashboard's lists say who made each.
  await admin("POST", `/api/v1/projects/${env}/api_keys`, { name: "ops", scopes: ["links:read"] });
  const keysPage = await getPage(srv.url, `/dashboard/environments/${env}/api-keys`, session);
  assert.match(keysPage.text, /made by the instance admin/);
  const destPage = await getPage(srv.url, `/dashboard/environments/${env}/destinations`, session);
  assert.match(
    destPage.text,
    /made by the key “bea&#39;s” for Bea|made by the key “bea's” for Bea/,
  );
});
