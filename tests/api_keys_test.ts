// API keys (`sk_…`): created, listed and revoked per environment; they authenticate that
// environment's admin routes within their scopes, never the SDK API or the feed.
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { gql } from "./helpers/graphql.ts";
import {
  adminHeaders,
  assertError,
  call,
  createFeedToken,
  createProject,
  serveApp,
} from "./helpers/server.ts";

const db = await createTestDatabase();
const clock = new ManualClock("2026-05-01T10:00:30Z");
const srv = serveApp(db, { clock });
// A second instance over the same database: revocation must hold there on the next request.
const other = serveApp(db, { clock, sql: db.embedded ? srv.sql : undefined });
Deno.test.afterAll(async () => {
  await other.close();
  await srv.close();
  await db.close();
});

const project = await createProject(srv.url, { name: "Keys" });
const env = project.productionId;

async function createKey(
  scopes: string[],
  options: { expires_at?: string | null; headers?: Record<string, string>; projectId?: number } =
    {},
) {
  const res = await call(srv.url, "POST", `/api/v1/projects/${options.projectId ?? env}/api_keys`, {
    headers: options.headers ?? adminHeaders,
    body: { name: "ci", scopes, expires_at: options.expires_at ?? null },
  });
  assert.equal(res.status, 201, res.text);
  return res.body.api_key as { id: number; value: string; scopes: string[] };
}
const bearer = (value: string) => ({ Authorization: `Bearer ${value}` });
const count = async (table: string) =>
  (await srv.sql`select count(*)::int as n from ${srv.sql(table)}`)[0]!.n as number;

Deno.test("a key is created with its value shown once, stored hashed, listed with a hint", async () => {
  const res = await call(srv.url, "POST", `/api/v1/projects/${env}/api_keys`, {
    headers: adminHeaders,
    body: { name: "ci", scopes: ["links:write", "links:read"] },
  });
  assert.equal(res.status, 201, res.text);
  const key = res.body.api_key;
  assert.deepEqual(Object.keys(key).sort(), [
    "belongs_to",
    "created_at",
    "created_by",
    "expires_at",
    "id",
    "last_used_at",
    "name",
    "scopes",
    "value",
  ]);
  assert.match(key.value, /^sk_[A-Za-z0-9_-]{43}$/);
  assert.deepEqual(key.scopes, ["links:read", "links:write"]);
  assert.equal(key.expires_at, null);
  assert.equal(key.last_used_at, null);
  assert.equal(key.created_at, clock.now().toISOString());
  assert.deepEqual(key.created_by, { type: "admin_token", id: null, name: "admin token" });
  assert.deepEqual(key.belongs_to, { type: "admin_token", id: null, name: "instance admin" });

  const [row] = await srv.sql`select * from api_keys where id = ${key.id}`;
  assert.equal(row!.key_hash.length, 64);
  assert.ok(!JSON.stringify(row).includes(key.value.slice(3)));

  const list = await call(srv.url, "GET", `/api/v1/projects/${env}/api_keys`, {
    headers: adminHeaders,
  });
  assert.equal(list.status, 200);
  const listed = list.body.api_keys.find((k: { id: number }) => k.id === key.id);
  assert.equal(listed.hint, `sk_…${key.value.slice(-4)}`);
  assert.equal(listed.value, undefined);
  assert.ok(!list.text.includes(key.value));
});

Deno.test("bad bodies are 400 naming the field and store nothing", async () => {
  const before = await count("api_keys");
  const path = `/api/v1/projects/${env}/api_keys`;
  const cases: [unknown, RegExp][] = [
    [{ name: "x", scopes: ["links:delete"] }, /scopes/],
    [{ name: "x", scopes: [] }, /scopes/],
    [{ name: "x", scopes: ["admin", "admin"] }, /scopes/],
    [{ scopes: ["admin"] }, /name/],
    [{ name: "x", scopes: ["admin"], expires_at: "tomorrow" }, /expires_at/],
    [{ name: "x", scopes: ["admin"], expires_at: "2026-05-01T10:00:00Z" }, /expires_at/],
  ];
  for (const [body, message] of cases) {
    assertError(
      await call(srv.url, "POST", path, { headers: adminHeaders, body }),
      400,
      "invalid_field",
      message,
    );
  }
  assertError(
    await call(srv.url, "POST", "/api/v1/projects/999999/api_keys", {
      headers: adminHeaders,
      body: { name: "x", scopes: ["admin"] },
    }),
    404,
    "not_found",
  );
  assert.equal(await count("api_keys"), before);
});

Deno.test("a key acts within its scopes on its own environment only", async () => {
  const reader = await createKey(["links:read"]);
  const links = `/api/v1/projects/${env}/links`;
  const ok = await call(srv.url, "GET", links, { headers: bearer(reader.value) });
  assert.equal(ok.status, 200, ok.text);

  const linksBefore = await count("links");
  const auditBefore = await count("api_keys");
  const write = await call(srv.url, "POST", links, {
    headers: bearer(reader.value),
    body: { title: "nope" },
  });
  assertError(write, 403, "insufficient_scope", /"links:write"/);
  assertError(
    await call(srv.url, "GET", `/api/v1/projects/${env}/event_stream_tokens`, {
      headers: bearer(reader.value),
    }),
    403,
    "insufficient_scope",
    /"admin"/,
  );
  assertError(
    await call(srv.url, "GET", `/api/v1/projects/${env}/export?from=2026-04-30&to=2026-05-01`, {
      headers: bearer(reader.value),
    }),
    403,
    "insufficient_scope",
    /"events:read"/,
  );
  // The project's other environment, another project, and the instance routes: forbidden.
  assertError(
    await call(srv.url, "GET", `/api/v1/projects/${project.testId}/links`, {
      headers: bearer(reader.value),
    }),
    403,
    "forbidden",
  );
  assertError(
    await call(srv.url, "GET", `/api/v1/admin/projects/${project.hashid}`, {
      headers: bearer(reader.value),
    }),
    403,
    "forbidden",
  );
  assertError(
    await call(srv.url, "POST", "/api/v1/admin/projects", {
      headers: bearer(reader.value),
      body: { name: "Mine" },
    }),
    403,
    "forbidden",
  );
  assert.equal(await count("links"), linksBefore);
  assert.equal(await count("api_keys"), auditBefore);

  const writer = await createKey(["links:write", "admin"]);
  const made = await call(srv.url, "POST", links, {
    headers: bearer(writer.value),
    body: { title: "made with a key" },
  });
  assert.equal(made.status, 201, made.text);
  const tokens = await call(srv.url, "GET", `/api/v1/projects/${env}/event_stream_tokens`, {
    headers: bearer(writer.value),
  });
  assert.equal(tokens.status, 200);
});

Deno.test("a key cannot create a key with a scope it lacks", async () => {
  const admin = await createKey(["admin"]);
  const before = await count("api_keys");
  assertError(
    await call(srv.url, "POST", `/api/v1/projects/${env}/api_keys`, {
      headers: bearer(admin.value),
      body: { name: "wider", scopes: ["admin", "events:read"] },
    }),
    403,
    "insufficient_scope",
    /"events:read"/,
  );
  assert.equal(await count("api_keys"), before);
  const narrower = await createKey(["admin"], { headers: bearer(admin.value) });
  assert.deepEqual(narrower.scopes, ["admin"]);
});

Deno.test("a revoked key is refused on the next request, on every instance", async () => {
  const key = await createKey(["links:read"]);
  const path = `/api/v1/projects/${env}/links`;
  assert.equal((await call(other.url, "GET", path, { headers: bearer(key.value) })).status, 200);
  const revoked = await call(srv.url, "DELETE", `/api/v1/projects/${env}/api_keys/${key.id}`, {
    headers: adminHeaders,
  });
  assert.equal(revoked.status, 204);
  assertError(
    await call(other.url, "GET", path, { headers: bearer(key.value) }),
    401,
    "unauthorized",
  );
  assertError(
    await call(srv.url, "GET", path, { headers: bearer(key.value) }),
    401,
    "unauthorized",
  );
  assertError(
    await call(srv.url, "DELETE", `/api/v1/projects/${env}/api_keys/${key.id}`, {
      headers: adminHeaders,
    }),
    404,
    "not_found",
  );
  const list = await call(srv.url, "GET", `/api/v1/projects/${env}/api_keys`, {
    headers: adminHeaders,
  });
  assert.ok(!list.body.api_keys.some((k: { id: number }) => k.id === key.id));
});

Deno.test("a key expires at its expires_at, as the clock tells", async () => {
  const expiresAt = new Date(clock.now().getTime() + 3_600_000).toISOString();
  const key = await createKey(["links:read"], { expires_at: expiresAt });
  const path = `/api/v1/projects/${env}/links`;
  assert.equal((await call(srv.url, "GET", path, { headers: bearer(key.value) })).status, 200);
  clock.advance(3_599_000);
  assert.equal((await call(srv.url, "GET", path, { headers: bearer(key.value) })).status, 200);
  clock.advance(1_000);
  assertError(
    await call(srv.url, "GET", path, { headers: bearer(key.value) }),
    401,
    "unauthorized",
  );
});

Deno.test("last use is recorded to the minute", async () => {
  clock.set("2026-05-02T08:15:42Z");
  const key = await createKey(["links:read"]);
  await call(srv.url, "GET", `/api/v1/projects/${env}/links`, { headers: bearer(key.value) });
  const lastUsed = async () =>
    (await call(srv.url, "GET", `/api/v1/projects/${env}/api_keys`, { headers: adminHeaders }))
      .body.api_keys.find((k: { id: number }) => k.id === key.id).last_used_at;
  assert.equal(await lastUsed(), "2026-05-02T08:15:00.000Z");
  clock.advance(60_000);
  await call(srv.url, "GET", `/api/v1/projects/${env}/links`, { headers: bearer(key.value) });
  assert.equal(await lastUsed(), "2026-05-02T08:16:00.000Z");
});

Deno.test("unknown, malformed and oversized keys are 401", async () => {
  const path = `/api/v1/projects/${env}/links`;
  for (const value of ["sk_" + "a".repeat(43), "sk_", "sk_" + "b".repeat(5000)]) {
    assertError(await call(srv.url, "GET", path, { headers: bearer(value) }), 401, "unauthorized");
  }
});

Deno.test("neither the SDK API nor the feed accepts an sk_ key, over REST or GraphQL", async () => {
  const key = await createKey([
    "links:read",
    "links:write",
    "analytics:read",
    "events:read",
    "admin",
  ]);
  await createFeedToken(srv.url, env);
  assertError(
    await call(srv.url, "GET", `/api/v1/projects/${env}/event_stream`, {
      headers: bearer(key.value),
    }),
    401,
    "unauthorized",
  );
  const feed = await gql(
    srv.url,
    `query($id: ID!) { eventFeed(projectId: $id) { edges { cursor } } }`,
    {
      variables: { id: String(env) },
      headers: bearer(key.value),
    },
  );
  assert.equal(feed.errors?.[0]?.extensions?.code, "UNAUTHENTICATED");
  assert.equal(feed.data?.eventFeed ?? null, null);
  const link = await gql(srv.url, `{ projectMetrics { path } }`, {
    headers: { "PROJECT-KEY": key.value, ENVIRONMENT: "test" },
  });
  assert.equal(link.errors?.[0]?.extensions?.code, "UNAUTHENTICATED");
  assertError(
    await call(srv.url, "GET", "/api/v1/sdk/metrics_for_project", {
      headers: { "PROJECT-KEY": key.value, ENVIRONMENT: "production" },
    }),
    401,
    "unauthorized",
  );
  assertError(
    await call(srv.url, "POST", "/api/v1/sdk/generate_link", {
      headers: { "PROJECT-KEY": key.value, ENVIRONMENT: "production" },
      body: { title: "x" },
    }),
    401,
    "unauthorized",
  );
});
