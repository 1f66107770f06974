import { assertError } from "./helpers/server.ts";
import assert from "node:assert/strict";
import { createLink } from "../services/links/links.ts";
import {
  adminHeaders,
  call,
  createFeedToken,
  createProject,
  LINK_BASE_URL,
  startTestServer,
} from "./helpers/server.ts";

const srv = await startTestServer();
const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call(srv.url, method, path, { ...options, headers: { ...adminHeaders, ...options.headers } });

Deno.test.afterAll(() => srv.close());

Deno.test("POST /api/v1/admin/projects creates both environments, a sqids hashid and a key shown once", async () => {
  const res = await api("POST", "/api/v1/admin/projects", {
    body: { name: "Acme", enterprise: true },
  });
  assert.equal(res.status, 201);
  const p = res.body.project;
  assert.match(p.id, /^[A-Za-z0-9]{10,}$/);
  assert.equal(p.name, "Acme");
  assert.equal(p.enterprise, true);
  assert.match(p.project_key, /^pk_[A-Za-z0-9_-]{43}$/);
  const prod = p.environments.production.project_id;
  const test = p.environments.test.project_id;
  assert.equal(typeof prod, "number");
  assert.equal(test, prod + 1);
  assert.notEqual(p.id, String(prod));

  const got = await api("GET", `/api/v1/admin/projects/${p.id}`);
  assert.equal(got.status, 200);
  assert.equal(got.body.project.project_key, undefined);
  assert.deepEqual(got.body.project.environments, p.environments);
  assert.ok(!got.text.includes(p.project_key));

  const [stored] = await srv.sql`select key_hash from projects where hashid = ${p.id}`;
  assert.notEqual(stored!.key_hash, p.project_key);
  assert.equal(stored!.key_hash.length, 64);
});

Deno.test("POST /api/v1/admin/projects defaults enterprise to false and rejects bad bodies", async () => {
  const ok = await api("POST", "/api/v1/admin/projects", { body: { name: "Plain" } });
  assert.equal(ok.status, 201);
  assert.equal(ok.body.project.enterprise, false);

  const before = await srv.sql`select count(*)::int as n from projects`;
  assertError(await api("POST", "/api/v1/admin/projects", { raw: "{nope" }), 400, "malformed_json");
  const missing = await api("POST", "/api/v1/admin/projects", { body: { enterprise: true } });
  assertError(missing, 400, "invalid_field");
  assert.match(missing.body.error.message, /name/);
  const wrongType = await api("POST", "/api/v1/admin/projects", {
    body: { name: "X", enterprise: "yes" },
  });
  assertError(wrongType, 400, "invalid_field");
  assert.match(wrongType.body.error.message, /enterprise/);
  assertError(await api("POST", "/api/v1/admin/projects", { body: [1, 2] }), 400, "invalid_field");
  const after = await srv.sql`select count(*)::int as n from projects`;
  assert.equal(after[0]!.n, before[0]!.n);
});

Deno.test("admin routes answer 401 with the error body for a missing or wrong admin token", async () => {
  const paths: [string, string][] = [
    ["POST", "/api/v1/admin/projects"],
    ["GET", "/api/v1/admin/projects/abc"],
    ["PATCH", "/api/v1/admin/projects/abc"],
    ["POST", "/api/v1/admin/projects/abc/regenerate_key"],
    ["POST", "/api/v1/projects/1/event_stream_tokens"],
    ["GET", "/api/v1/projects/1/event_stream_tokens"],
    ["DELETE", "/api/v1/projects/1/event_stream_tokens/1"],
    ["POST", "/api/v1/projects/1/destinations"],
    ["DELETE", "/api/v1/projects/1/destinations/1"],
    ["PATCH", "/api/v1/projects/1/links/abc"],
  ];
  for (const [method, path] of paths) {
    const body = method === "GET" ? undefined : {};
    assertError(await call(srv.url, method, path, { body }), 401, "unauthorized");
    assertError(
      await call(srv.url, method, path, {
        body,
        headers: { Authorization: "Bearer wrong-token-wrong-token" },
      }),
      401,
      "unauthorized",
    );
    assertError(
      await call(srv.url, method, path, { body, headers: { Authorization: "Basic abc" } }),
      401,
      "unauthorized",
    );
  }
  // Those were ten wrong tokens from this address, the admin-token limit (its own tests are in
  // admin_token_limit_test.ts): let them leave the window so the tests after this one are not
  // refused.
  srv.clock.advance(15 * 60_000 + 1000);
});

Deno.test("GET and PATCH /api/v1/admin/projects/:hashid read and change the enterprise flag", async () => {
  const p = await createProject(srv.url, { name: "Flag", enterprise: false });
  const patched = await api("PATCH", `/api/v1/admin/projects/${p.hashid}`, {
    body: { enterprise: true },
  });
  assert.equal(patched.status, 200);
  assert.equal(patched.body.project.enterprise, true);
  assert.equal(patched.body.project.name, "Flag");
  const got = await api("GET", `/api/v1/admin/projects/${p.hashid}`);
  assert.equal(got.body.project.enterprise, true);

  assertError(await api("GET", "/api/v1/admin/projects/doesnotexist"), 404, "not_found");
  assertError(
    await api("PATCH", "/api/v1/admin/projects/doesnotexist", { body: { enterprise: true } }),
    404,
    "not_found",
  );
  assertError(
    await api("PATCH", `/api/v1/admin/projects/${p.hashid}`, { body: {} }),
    400,
    "invalid_field",
  );
  assertError(
    await api("PATCH", `/api/v1/admin/projects/${p.hashid}`, { body: { enterprise: 1 } }),
    400,
    "invalid_field",
  );
});

Deno.test("POST /api/v1/admin/projects/:hashid/regenerate_key stops the old key at once", async () => {
  const p = await createProject(srv.url);
  const res = await api("POST", `/api/v1/admin/projects/${p.hashid}/regenerate_key`);
  assert.equal(res.status, 200);
  const fresh = res.body.project_key;
  assert.match(fresh, /^pk_/);
  assert.notEqual(fresh, p.key);
  const [row] = await srv.sql`select key_hash from projects where hashid = ${p.hashid}`;
  const { hashSecret } = await import("../infra/secrets.ts");
  assert.equal(row!.key_hash, hashSecret(fresh));
  assert.notEqual(row!.key_hash, hashSecret(p.key));
  assertError(await api("POST", "/api/v1/admin/projects/nope/regenerate_key"), 404, "not_found");
});

Deno.test("event_stream_tokens: create shows the value once, list hides it, revoke removes it", async () => {
  const p = await createProject(srv.url);
  const created = await api("POST", `/api/v1/projects/${p.productionId}/event_stream_tokens`, {
    body: { name: "warehouse" },
  });
  assert.equal(created.status, 201);
  const t = created.body.token;
  assert.equal(t.name, "warehouse");
  assert.match(t.value, /^est_[A-Za-z0-9_-]{43}$/);
  assert.equal(t.last_used_at, null);
  assert.ok(!Number.isNaN(Date.parse(t.created_at)));

  const list = await api("GET", `/api/v1/projects/${p.productionId}/event_stream_tokens`);
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.tokens, [{
    id: t.id,
    name: "warehouse",
    hint: `est_…${t.value.slice(-4)}`,
    created_at: t.created_at,
    last_used_at: null,
    created_by: { type: "admin_token", id: null, name: "admin token" },
    belongs_to: { type: "admin_token", id: null, name: "instance admin" },
  }]);
  assert.ok(!list.text.includes(t.value));
  const [stored] = await srv.sql`select token_hash from feed_tokens where id = ${t.id}`;
  assert.ok(!JSON.stringify(stored).includes(t.value));

  // The other environment has its own tokens.
  const other = await api("GET", `/api/v1/projects/${p.testId}/event_stream_tokens`);
  assert.deepEqual(other.body.tokens, []);

  const del = await api("DELETE", `/api/v1/projects/${p.productionId}/event_stream_tokens/${t.id}`);
  assert.equal(del.status, 204);
  assert.equal(del.text, "");
  const after = await api("GET", `/api/v1/projects/${p.productionId}/event_stream_tokens`);
  assert.deepEqual(after.body.tokens, []);
  assertError(
    await api("DELETE", `/api/v1/projects/${p.productionId}/event_stream_tokens/${t.id}`),
    404,
    "not_found",
  );
  // A token id of another environment is not found here.
  const t2 = await createFeedToken(srv.url, p.testId);
  assertError(
    await api("DELETE", `/api/v1/projects/${p.productionId}/event_stream_tokens/${t2.id}`),
    404,
    "not_found",
  );
});

Deno.test("event_stream_tokens: 402 without Enterprise, 404 for unknown or non-numeric project_id", async () => {
  const p = await createProject(srv.url, { enterprise: false });
  assertError(
    await api("POST", `/api/v1/projects/${p.productionId}/event_stream_tokens`, {
      body: { name: "x" },
    }),
    402,
    "enterprise_required",
  );
  for (const id of ["999999", "abc", "0", "-1", "1e3", "99999999999"]) {
    assertError(
      await api("POST", `/api/v1/projects/${id}/event_stream_tokens`, { body: { name: "x" } }),
      404,
      "not_found",
    );
    assertError(await api("GET", `/api/v1/projects/${id}/event_stream_tokens`), 404, "not_found");
  }
  const q = await createProject(srv.url);
  assertError(
    await api("POST", `/api/v1/projects/${q.productionId}/event_stream_tokens`, { body: {} }),
    400,
    "invalid_field",
  );
  assertError(
    await api("DELETE", `/api/v1/projects/${q.productionId}/event_stream_tokens/abc`),
    404,
    "not_found",
  );
});

Deno.test("capture starts with the first token or destination and stops with the last", async () => {
  const p = await createProject(srv.url);
  const capture = async () =>
    (await srv.sql`select capture_started_at from environments where id = ${p.productionId}`)[0]!
      .capture_started_at;
  assert.equal(await capture(), null);

  const d = await api("POST", `/api/v1/projects/${p.productionId}/destinations`, {
    body: { url: "https://crm.example.com/hook" },
  });
  assert.equal(d.status, 201);
  assert.equal(d.body.destination.url, "https://crm.example.com/hook");
  assert.ok(await capture());
  const t = await createFeedToken(srv.url, p.productionId);

  await srv.sql`
    insert into feed_events (environment_id, seq, type, received_at, body)
    values (${p.productionId}, 1, 'install', now(), '{}')
  `;
  // Deleting the destination leaves a token: capture and its data stay.
  const delD = await api(
    "DELETE",
    `/api/v1/projects/${p.productionId}/destinations/${d.body.destination.id}`,
  );
  assert.equal(delD.status, 204);
  assert.ok(await capture());
  // Revoking the last token of an environment without destinations removes the feed data.
  await api("DELETE", `/api/v1/projects/${p.productionId}/event_stream_tokens/${t.id}`);
  assert.equal(await capture(), null);
  const [n] = await srv
    .sql`select count(*)::int as n from feed_events where environment_id = ${p.productionId}`;
  assert.equal(n!.n, 0);
});

Deno.test("destinations reject non-http(s) URLs and unknown ids", async () => {
  const p = await createProject(srv.url);
  for (const url of ["javascript:alert(1)", "ftp://x.example", "not a url", 5]) {
    const res = await api("POST", `/api/v1/projects/${p.productionId}/destinations`, {
      body: { url },
    });
    assertError(res, 400, "invalid_field");
    assert.match(res.body.error.message, /url/);
  }
  assertError(
    await api("DELETE", `/api/v1/projects/${p.productionId}/destinations/12345`),
    404,
    "not_found",
  );
});

Deno.test("PATCH /api/v1/projects/:project_id/links/:link_path deactivates and reactivates", async () => {
  const p = await createProject(srv.url);
  const link = await createLink(srv.sql, p.productionId, { title: "Hello", tags: ["a"] });
  const off = await api("PATCH", `/api/v1/projects/${p.productionId}/links/${link.path}`, {
    body: { active: false },
  });
  assert.equal(off.status, 200);
  assert.equal(off.body.link.active, false);
  assert.equal(off.body.link.path, link.path);
  assert.equal(off.body.link.title, "Hello");
  assert.deepEqual(off.body.link.tags, ["a"]);
  assert.equal(off.body.link.access_path, `${LINK_BASE_URL}/${link.path}`);
  const on = await api("PATCH", `/api/v1/projects/${p.productionId}/links/${link.path}`, {
    body: { active: true },
  });
  assert.equal(on.body.link.active, true);
  // The link belongs to production: the test environment does not see it.
  assertError(
    await api("PATCH", `/api/v1/projects/${p.testId}/links/${link.path}`, {
      body: { active: false },
    }),
    404,
    "not_found",
  );
  assertError(
    await api("PATCH", `/api/v1/projects/${p.productionId}/links/${link.path}`, {
      body: { active: "no" },
    }),
    400,
    "invalid_field",
  );
});

Deno.test("unknown routes are 404 and bodies over 1 MiB are 413, both with the error body", async () => {
  assertError(await call(srv.url, "GET", "/api/v1/nothing-here"), 404, "not_found");
  const big = JSON.stringify({ name: "x".repeat(1024 * 1024 + 10) });
  assertError(await api("POST", "/api/v1/admin/projects", { raw: big }), 413, "payload_too_large");
});

Deno.test("GET /healthz and /readyz answer", async () => {
  const h = await call(srv.url, "GET", "/healthz");
  assert.equal(h.status, 200);
  assert.deepEqual(h.body, { status: "ok" });
  const r = await call(srv.url, "GET", "/readyz");
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { status: "ready" });
  assert.ok(r.headers.get("x-request-id"));
});
