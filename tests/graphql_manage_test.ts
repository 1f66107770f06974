// The admin screens' management mutations over real HTTP, a real database and a real webhook
// receiver: feed tokens, destinations and API keys, each against what the REST routes list and
// change, one audit entry each with the caller as its actor, secrets answered once, bad input
// BAD_USER_INPUT naming the argument and changing nothing.
import assert from "node:assert/strict";
import { gql, type Json } from "./helpers/graphql.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer({ config: { DESTINATIONS_ALLOW_PRIVATE: "true" } });
const receiver = startReceiver(() => new Response(null, { status: 204 }));
Deno.test.afterAll(async () => {
  await receiver.close();
  await srv.close();
});

const admin = { headers: adminHeaders };
const rest = (method: string, path: string, body?: unknown, headers = adminHeaders) =>
  call(srv.url, method, path, { headers, body });

/** The audit entries written since `after`: [actor_type, action, target_type, target_id]. */
async function auditSince(after: number) {
  const rows = await srv.sql`
    select actor_type, action, target_type, target_id from audit_log where id > ${after}
    order by id`;
  return rows.map((r) => [r.actor_type, r.action, r.target_type, r.target_id]);
}
const lastAudit = async () =>
  (await srv.sql`select coalesce(max(id), 0)::int as id from audit_log`)[0]!.id as number;

async function snapshot(): Promise<string> {
  const [row] = await srv.sql`
    select (select count(*) from audit_log) as audit,
      (select count(*) from feed_tokens where revoked_at is null) as tokens,
      (select count(*) from api_keys where revoked_at is null) as keys,
      (select string_agg(id || paused::text || secret_sealed, ',' order by id)
        from destinations) as destinations
  `;
  return JSON.stringify(row);
}

const TOKENS = `query($id: ID!) { environment(projectId: $id) {
  feedTokens { id name hint createdAt lastUsedAt } } }`;

Deno.test("feed tokens: create answers the value once, the list is REST's, revoke stops it; each audited", async () => {
  const p = await createProject(srv.url);
  const id = String(p.productionId);
  const before = await lastAudit();
  const made = await gql(
    srv.url,
    `mutation($id: ID!) { createFeedToken(projectId: $id, input: { name: "warehouse" }) {
      value feedToken { id name hint createdAt lastUsedAt } } }`,
    { ...admin, variables: { id } },
  );
  assert.equal(made.errors, undefined, JSON.stringify(made.errors));
  const { value, feedToken } = made.data.createFeedToken;
  assert.match(value, /^est_[A-Za-z0-9_-]{43}$/);
  assert.equal(feedToken.hint, `est_…${value.slice(-4)}`);
  assert.equal(feedToken.name, "warehouse");

  const listed = await gql(srv.url, TOKENS, { ...admin, variables: { id } });
  const viaRest = await rest("GET", `/api/v1/projects/${id}/event_stream_tokens`);
  assert.deepEqual(
    listed.data.environment.feedTokens,
    viaRest.body.tokens.map((t: Json) => ({
      id: String(t.id),
      name: t.name,
      hint: t.hint,
      createdAt: t.created_at,
      lastUsedAt: t.last_used_at,
    })),
  );
  assert.deepEqual(listed.data.environment.feedTokens, [feedToken]);
  assert.ok(!JSON.stringify(listed).includes(value), "the list never holds the value");
  // The token reads the feed.
  const feed = await call(srv.url, "GET", `/api/v1/projects/${id}/event_stream`, {
    headers: { Authorization: `Bearer ${value}` },
  });
  assert.equal(feed.status, 200, feed.text);

  const revoke = `mutation($id: ID!, $t: ID!) { revokeFeedToken(projectId: $id, id: $t) }`;
  const revoked = await gql(srv.url, revoke, { ...admin, variables: { id, t: feedToken.id } });
  assert.deepEqual(revoked.data, { revokeFeedToken: true });
  const after = await call(srv.url, "GET", `/api/v1/projects/${id}/event_stream`, {
    headers: { Authorization: `Bearer ${value}` },
  });
  assert.equal(after.status, 401);
  assert.deepEqual(await auditSince(before), [
    ["admin_token", "feed_token.create", "feed_token", feedToken.id],
    ["admin_token", "feed_token.revoke", "feed_token", feedToken.id],
  ]);
  const again = await gql(srv.url, revoke, { ...admin, variables: { id, t: feedToken.id } });
  assert.equal(again.errors?.[0].extensions.code, "NOT_FOUND");
});

Deno.test("feed tokens: bad input is BAD_USER_INPUT naming the argument; no Enterprise is PAYMENT_REQUIRED", async () => {
  const p = await createProject(srv.url);
  const id = String(p.productionId);
  const create = `mutation($id: ID!, $name: String!) {
    createFeedToken(projectId: $id, input: { name: $name }) { value } }`;
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ id, name: "" }, /^input\.name: /],
    [{ id, name: "x".repeat(201) }, /^input\.name: /],
    [{ id: "abc", name: "t" }, /^projectId /],
  ];
  for (const [variables, message] of cases) {
    const before = await snapshot();
    const r = await gql(srv.url, create, { ...admin, variables });
    assert.equal(r.errors?.[0].extensions.code, "BAD_USER_INPUT", JSON.stringify(r.errors));
    assert.match(r.errors![0].message, message);
    assert.equal(await snapshot(), before);
  }
  const revoke = `mutation($id: ID!, $t: ID!) { revokeFeedToken(projectId: $id, id: $t) }`;
  const badId = await gql(srv.url, revoke, { ...admin, variables: { id, t: "one" } });
  assert.equal(badId.errors?.[0].extensions.code, "BAD_USER_INPUT");
  assert.match(badId.errors![0].message, /^id must be a numeric ID/);
  const unknown = await gql(srv.url, revoke, { ...admin, variables: { id, t: "999999" } });
  assert.equal(unknown.errors?.[0].extensions.code, "NOT_FOUND");

  const free = await createProject(srv.url, { enterprise: false });
  const before = await snapshot();
  const r = await gql(srv.url, create, {
    ...admin,
    variables: { id: String(free.productionId), name: "t" },
  });
  assert.equal(r.errors?.[0].extensions.code, "PAYMENT_REQUIRED");
  assert.equal(await snapshot(), before);
});

const DESTINATION = `id url eventTypes state createdAt lastAttemptAt lastSuccessAt lastError
  pending dropped`;

/** REST's destination under GraphQL's names. */
const camelDestination = (d: Json) => ({
  id: String(d.id),
  url: d.url,
  eventTypes: d.event_types,
  state: d.state.toUpperCase(),
  createdAt: d.created_at,
  lastAttemptAt: d.last_attempt_at,
  lastSuccessAt: d.last_success_at,
  lastError: d.last_error,
  pending: d.pending,
  dropped: d.dropped,
});

Deno.test("destinations: create (secret once), list, pause, resume, rotate, test, delete, as REST; each change audited once", async () => {
  const p = await createProject(srv.url);
  const id = String(p.productionId);
  const before = await lastAudit();
  const made = await gql(
    srv.url,
    `mutation($id: ID!, $url: String!) { createDestination(projectId: $id,
      input: { url: $url, eventTypes: [install, purchase] }) { secret destination { ${DESTINATION} } } }`,
    { ...admin, variables: { id, url: `${receiver.url}/hook` } },
  );
  assert.equal(made.errors, undefined, JSON.stringify(made.errors));
  const { secret, destination } = made.data.createDestination;
  assert.match(secret, /^whsec_/);
  assert.equal(destination.state, "ACTIVE");
  assert.deepEqual(destination.eventTypes, ["install", "purchase"]);
  assert.equal(destination.pending, 0);
  assert.equal(destination.dropped, 0);

  const list = async () => {
    const g = await gql(
      srv.url,
      `query($id: ID!) { environment(projectId: $id) { destinations { ${DESTINATION} } } }`,
      { ...admin, variables: { id } },
    );
    const r = await rest("GET", `/api/v1/projects/${id}/destinations`);
    assert.deepEqual(g.data.environment.destinations, r.body.destinations.map(camelDestination));
    return g.data.environment.destinations as Json[];
  };
  assert.deepEqual(await list(), [destination]);

  const target = { id, d: destination.id };
  const paused = await gql(
    srv.url,
    `mutation($id: ID!, $d: ID!) { pauseDestination(projectId: $id, id: $d) { state } }`,
    { ...admin, variables: target },
  );
  assert.deepEqual(paused.data, { pauseDestination: { state: "PAUSED" } });
  assert.equal((await list())[0].state, "PAUSED");
  const resumed = await gql(
    srv.url,
    `mutation($id: ID!, $d: ID!) { resumeDestination(projectId: $id, id: $d) { state } }`,
    { ...admin, variables: target },
  );
  assert.deepEqual(resumed.data, { resumeDestination: { state: "ACTIVE" } });

  const rotated = await gql(
    srv.url,
    `mutation($id: ID!, $d: ID!) { rotateDestinationSecret(projectId: $id, id: $d) { secret } }`,
    { ...admin, variables: target },
  );
  const newSecret = rotated.data.rotateDestinationSecret.secret;
  assert.match(newSecret, /^whsec_/);
  assert.notEqual(newSecret, secret);

  const tested = await gql(
    srv.url,
    `mutation($id: ID!, $d: ID!) { testDestination(projectId: $id, id: $d) {
      status error durationMs } }`,
    { ...admin, variables: target },
  );
  assert.equal(tested.errors, undefined, JSON.stringify(tested.errors));
  assert.equal(tested.data.testDestination.status, 204);
  assert.equal(tested.data.testDestination.error, null);
  const delivered = receiver.received.at(-1)!;
  assert.equal(delivered.body, `{"schema_version":1,"events":[],"test":true}`);
  // Signed by the new secret and, for the overlap, the old one.
  assert.equal(delivered.headers["webhook-signature"]!.split(" ").length, 2);

  const deleted = await gql(
    srv.url,
    `mutation($id: ID!, $d: ID!) { deleteDestination(projectId: $id, id: $d) }`,
    { ...admin, variables: target },
  );
  assert.deepEqual(deleted.data, { deleteDestination: true });
  assert.deepEqual(await list(), []);
  const t = destination.id;
  assert.deepEqual(await auditSince(before), [
    ["admin_token", "destination.create", "destination", t],
    ["admin_token", "destination.pause", "destination", t],
    ["admin_token", "destination.resume", "destination", t],
    ["admin_token", "destination.rotate_secret", "destination", t],
    ["admin_token", "destination.delete", "destination", t],
  ]);
  const gone = await gql(
    srv.url,
    `mutation($id: ID!, $d: ID!) { pauseDestination(projectId: $id, id: $d) { state } }`,
    { ...admin, variables: target },
  );
  assert.equal(gone.errors?.[0].extensions.code, "NOT_FOUND");
});

Deno.test("destinations: a bad URL or event type is BAD_USER_INPUT naming it, and nothing is made", async () => {
  const p = await createProject(srv.url);
  const id = String(p.productionId);
  const create = `mutation($id: ID!, $in: CreateDestinationInput!) {
    createDestination(projectId: $id, input: $in) { secret } }`;
  const cases: [unknown, RegExp][] = [
    [{ url: "ftp://example.com/hook" }, /^input\.url: /],
    [{ url: "not a url" }, /^input\.url: /],
    [{ url: "https://user:pw@example.com/hook" }, /^input\.url: must not contain credentials/],
    [{ url: "https://example.com/hook", eventTypes: ["nope"] }, /eventTypes/],
  ];
  for (const [input, message] of cases) {
    const before = await snapshot();
    const r = await gql(srv.url, create, { ...admin, variables: { id, in: input } });
    assert.equal(r.errors?.[0].extensions.code, "BAD_USER_INPUT", JSON.stringify(r.errors));
    assert.match(r.errors![0].message, message);
    assert.equal(await snapshot(), before);
  }
  // A private address is refused where the instance does not allow them.
  const strict = await startTestServer();
  try {
    const q = await createProject(strict.url);
    const r = await gql(strict.url, create, {
      ...admin,
      variables: { id: String(q.productionId), in: { url: "http://127.0.0.1:9/hook" } },
    });
    assert.equal(r.errors?.[0].extensions.code, "BAD_USER_INPUT");
    assert.match(r.errors![0].message, /^input\.url: /);
  } finally {
    await strict.close();
  }
});

Deno.test("API keys: create answers the value once and it works; the list has hints; revoke stops it; scopes never beyond the creator's", async () => {
  const p = await createProject(srv.url);
  const id = String(p.productionId);
  const before = await lastAudit();
  const create = `mutation($id: ID!, $in: CreateApiKeyInput!) { createApiKey(projectId: $id,
    input: $in) { value apiKey { id name scopes hint createdAt expiresAt lastUsedAt } } }`;
  const expiresAt = new Date(srv.clock.now().getTime() + 86_400_000).toISOString();
  const made = await gql(srv.url, create, {
    ...admin,
    variables: { id, in: { name: "ci", scopes: ["LINKS_READ", "ADMIN"], expiresAt } },
  });
  assert.equal(made.errors, undefined, JSON.stringify(made.errors));
  const { value, apiKey } = made.data.createApiKey;
  assert.match(value, /^sk_[A-Za-z0-9_-]{32,}$/);
  assert.deepEqual(apiKey.scopes, ["LINKS_READ", "ADMIN"]);
  assert.equal(apiKey.hint, `sk_…${value.slice(-4)}`);
  assert.equal(apiKey.expiresAt, expiresAt);

  const keys = `query($id: ID!) { environment(projectId: $id) {
    apiKeys { id name scopes hint createdAt expiresAt lastUsedAt } } }`;
  const listed = await gql(srv.url, keys, { ...admin, variables: { id } });
  const viaRest = await rest("GET", `/api/v1/projects/${id}/api_keys`);
  assert.deepEqual(listed.data.environment.apiKeys, [apiKey]);
  assert.deepEqual(
    viaRest.body.api_keys.map((k: Json) => [String(k.id), k.hint, k.scopes]),
    [[apiKey.id, apiKey.hint, ["links:read", "admin"]]],
  );

  // The key works, and as an admin key it may create keys, never beyond its own scopes.
  const asKey = { headers: { Authorization: `Bearer ${value}` } };
  const beyond = await gql(srv.url, create, {
    ...asKey,
    variables: { id, in: { name: "wider", scopes: ["LINKS_WRITE"] } },
  });
  assert.equal(beyond.errors?.[0].extensions.code, "FORBIDDEN");
  assert.equal(beyond.errors?.[0].extensions.reason, "insufficient_scope");
  assert.match(beyond.errors![0].message, /"links:write"/);
  const within = await gql(srv.url, create, {
    ...asKey,
    variables: { id, in: { name: "narrower", scopes: ["LINKS_READ"] } },
  });
  assert.equal(within.errors, undefined, JSON.stringify(within.errors));

  const revoke = `mutation($id: ID!, $k: ID!) { revokeApiKey(projectId: $id, id: $k) }`;
  const revoked = await gql(srv.url, revoke, { ...admin, variables: { id, k: apiKey.id } });
  assert.deepEqual(revoked.data, { revokeApiKey: true });
  const refused = await gql(srv.url, keys, { ...asKey, variables: { id } });
  assert.equal(refused.errors?.[0].extensions.code, "UNAUTHENTICATED");
  assert.deepEqual((await auditSince(before)).map((e) => [e[0], e[1]]), [
    ["admin_token", "api_key.create"],
    ["api_key", "api_key.create"],
    ["admin_token", "api_key.revoke"],
  ]);
  assert.ok(!(await auditSince(before)).flat().includes(value), "no secret in the audit log");
});

Deno.test("API keys: bad input is BAD_USER_INPUT naming the argument, and nothing is made", async () => {
  const p = await createProject(srv.url);
  const id = String(p.productionId);
  const create = `mutation($id: ID!, $in: CreateApiKeyInput!) {
    createApiKey(projectId: $id, input: $in) { value } }`;
  const past = new Date(srv.clock.now().getTime() - 1000).toISOString();
  const cases: [unknown, RegExp][] = [
    [{ name: "", scopes: ["ADMIN"] }, /^input\.name: /],
    [{ name: "k", scopes: [] }, /^input\.scopes: give at least one scope/],
    [{ name: "k", scopes: ["ADMIN", "ADMIN"] }, /^input\.scopes: must not repeat/],
    [{ name: "k", scopes: ["ADMIN"], expiresAt: past }, /^input\.expiresAt: must be in the future/],
    [{ name: "k", scopes: ["links:read"] }, /scopes/],
    [{ name: "k", scopes: ["ADMIN"], expiresAt: "tomorrow" }, /expiresAt/],
  ];
  for (const [input, message] of cases) {
    const before = await snapshot();
    const r = await gql(srv.url, create, { ...admin, variables: { id, in: input } });
    assert.equal(r.errors?.[0].extensions.code, "BAD_USER_INPUT", JSON.stringify(r.errors));
    assert.match(r.errors![0].message, message);
    assert.equal(await snapshot(), before);
  }
});
