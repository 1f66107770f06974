import { assertError } from "./helpers/server.ts";
// GET /api/v1/projects/:project_id/event_stream: errors in the contract's order, paging,
// filters, cursors, and when capture starts and ends.
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { capture, readAll, readFeed, readOk } from "./helpers/feed.ts";
import {
  adminHeaders,
  call,
  createFeedToken,
  createProject,
  serveApp,
  startTestServer,
} from "./helpers/server.ts";

const clock = new ManualClock("2026-03-02T10:00:00Z");
const srv = await startTestServer({ clock });
Deno.test.afterAll(() => srv.close());

async function feedFixture(options: { enterprise?: boolean } = {}) {
  const p = await createProject(srv.url, { enterprise: true });
  const token = await createFeedToken(srv.url, p.productionId);
  if (options.enterprise === false) await setEnterprise(p.hashid, false);
  return { p, token, env: p.productionId };
}

async function setEnterprise(hashid: string, enterprise: boolean) {
  const res = await call(srv.url, "PATCH", `/api/v1/admin/projects/${hashid}`, {
    headers: adminHeaders,
    body: { enterprise },
  });
  assert.equal(res.status, 200);
}

async function revoke(projectId: number, tokenId: number) {
  const res = await call(
    srv.url,
    "DELETE",
    `/api/v1/projects/${projectId}/event_stream_tokens/${tokenId}`,
    { headers: adminHeaders },
  );
  assert.equal(res.status, 204);
}

const hitsOf = async (tokenId: number) =>
  (await srv.sql<{ n: number }[]>`
    select count(*)::int as n from feed_rate_hits where token_id = ${tokenId}
  `)[0]!.n;

Deno.test("event_stream 401: missing, malformed, unknown or revoked token, before any other check", async () => {
  const { p, token, env } = await feedFixture();
  assertError(await readFeed(srv.url, env, null), 401, "unauthorized");
  for (const authorization of ["Basic abc", "Bearer", "Bearer ", token.value, "bearer"]) {
    assertError(
      await readFeed(srv.url, env, null, { headers: { Authorization: authorization } }),
      401,
      "unauthorized",
    );
  }
  assertError(await readFeed(srv.url, env, "est_" + "x".repeat(43)), 401, "unauthorized");
  assertError(await readFeed(srv.url, env, "pk_" + token.value.slice(4)), 401, "unauthorized");
  // 401 comes before 403, 402 and 400.
  assertError(await readFeed(srv.url, "nope", null, { limit: "x" }), 401, "unauthorized");

  assert.equal((await readFeed(srv.url, env, token.value)).status, 200);
  await revoke(env, token.id);
  // Effective for the very next read, and for good.
  for (let i = 0; i < 3; i++) {
    assertError(await readFeed(srv.url, env, token.value), 401, "unauthorized");
  }
  await setEnterprise(p.hashid, false);
  assertError(
    await readFeed(srv.url, p.testId, token.value, { limit: "0", after: "junk" }),
    401,
    "unauthorized",
  );
});

Deno.test("event_stream 403: token of another environment, project, or an unknown or non-numeric id", async () => {
  const { p, token, env } = await feedFixture();
  const other = await createProject(srv.url);
  for (
    const id of [p.testId, other.productionId, other.testId, "abc", "999999", "0", "-1", "1e3"]
  ) {
    assertError(await readFeed(srv.url, id, token.value), 403, "forbidden");
  }
  // 403 comes before 402 and 400.
  await setEnterprise(p.hashid, false);
  assertError(
    await readFeed(srv.url, p.testId, token.value, { limit: "0", types: ["bogus"] }),
    403,
    "forbidden",
  );
  assertError(await readFeed(srv.url, env, token.value), 402, "enterprise_required");
  assert.equal(await hitsOf(token.id), 0);
});

Deno.test("event_stream 402: a project losing Enterprise stops its reads, regaining it restores them", async () => {
  const { p, token, env } = await feedFixture();
  assert.equal((await readFeed(srv.url, env, token.value)).status, 200);
  await setEnterprise(p.hashid, false);
  assertError(await readFeed(srv.url, env, token.value), 402, "enterprise_required");
  // 402 comes before 400.
  assertError(
    await readFeed(srv.url, env, token.value, { limit: "abc", after: "x" }),
    402,
    "enterprise_required",
  );
  await setEnterprise(p.hashid, true);
  assert.equal((await readFeed(srv.url, env, token.value)).status, 200);
});

Deno.test("event_stream 400: limit, event_types[] and after are checked in that order", async () => {
  const { token, env } = await feedFixture();
  for (const limit of ["0", "1001", "abc", "", "1.5", "-1", "1e2", " 5", "0x10", "99999999999"]) {
    assertError(await readFeed(srv.url, env, token.value, { limit }), 400, "invalid_limit");
  }
  for (const limit of ["1", "1000", "007"]) {
    assert.equal((await readFeed(srv.url, env, token.value, { limit })).status, 200, limit);
  }
  for (const types of [["bogus"], ["install", "Install"], [""], ["install", "views"]]) {
    assertError(
      await readFeed(srv.url, env, token.value, { types }),
      400,
      "invalid_event_type",
    );
  }
  for (const after of ["", "junk", "v1.", "v1.abc.def"]) {
    assertError(await readFeed(srv.url, env, token.value, { after }), 400, "bad_cursor");
  }
  assertError(
    await readFeed(srv.url, env, token.value, { limit: "0", types: ["bogus"], after: "x" }),
    400,
    "invalid_limit",
  );
  assertError(
    await readFeed(srv.url, env, token.value, { limit: "5", types: ["bogus"], after: "x" }),
    400,
    "invalid_event_type",
  );
});

Deno.test("event_stream 503 comes before 400, and rejected requests neither count nor touch the token", async () => {
  const limited = serveApp(srv.db, { clock, config: { FEED_RATE_LIMIT: "3" } });
  try {
    const { token, env } = await feedFixture();
    for (const options of [{ limit: "0" }, { types: ["bogus"] }, { after: "junk" }]) {
      for (let i = 0; i < 3; i++) {
        assert.equal((await readFeed(limited.url, env, token.value, options)).status, 400);
      }
    }
    assertError(await readFeed(limited.url, env + 1, token.value), 403, "forbidden");
    assert.equal(await hitsOf(token.id), 0);
    const [row] = await srv.sql`select last_used_at from feed_tokens where id = ${token.id}`;
    assert.equal(row!.last_used_at, null);

    for (let i = 0; i < 3; i++) {
      assert.equal((await readFeed(limited.url, env, token.value)).status, 200);
    }
    const res = await readFeed(limited.url, env, token.value, { limit: "0" });
    assertError(res, 503, "rate_limited");
    assert.equal(res.headers.get("retry-after"), "60");
    assert.equal(await hitsOf(token.id), 3);
  } finally {
    await limited.close();
  }
});

Deno.test("event_stream pages with small limits walk every event once, in arrival order", async () => {
  const { p, token, env } = await feedFixture();
  const ids: string[] = [];
  for (const batch of [["install"], ["view", "open", "purchase"], ["custom"], ["session"]]) {
    for (let i = 0; i < 3; i++) ids.push(...await capture(srv.sql, env, p.hashid, batch, clock));
  }
  assert.equal(ids.length, 18);

  const sizes: number[] = [];
  const seen: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await readOk(srv.url, env, token.value, { limit: 5, after });
    // The same cursor gives the same answer.
    const again = await readFeed(srv.url, env, token.value, { limit: 5, after });
    assert.deepEqual(again.body, page);
    sizes.push(page.events.length);
    seen.push(...page.events.map((e) => e.id));
    if (page.events.length === 0) {
      // An empty page still answers a cursor: the same position, so it comes back unchanged.
      assert.equal(page.next_after, after);
      break;
    }
    after = page.next_after;
  }
  assert.deepEqual(sizes, [5, 5, 5, 3, 0]);
  assert.deepEqual(seen, ids);

  // New events appear after the caught-up cursor, and only they.
  const more = await capture(srv.sql, env, p.hashid, ["reinstall", "app_open"], clock);
  const next = await readOk(srv.url, env, token.value, { limit: 5, after });
  assert.deepEqual(next.events.map((e) => e.id), more);
  assert.notEqual(next.next_after, after);

  // Omitting after rereads everything retained; the default limit is 100.
  const all = await readOk(srv.url, env, token.value);
  assert.deepEqual(all.events.map((e) => e.id), [...ids, ...more]);
});

Deno.test("event_stream serves the stored envelopes unchanged and defaults to 100 a page", async () => {
  const { p, token, env } = await feedFixture();
  await capture(srv.sql, env, p.hashid, Array(150).fill("install"), clock);
  const res = await readFeed(srv.url, env, token.value);
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type")!, /^application\/json/);
  assert.deepEqual(Object.keys(res.body), ["schema_version", "events", "next_after"]);
  assert.equal(res.body.events.length, 100);
  const stored = await srv.sql<{ body: string }[]>`
    select body from feed_events where environment_id = ${env} order by xid, seq limit 100
  `;
  assert.equal(
    res.text,
    `{"schema_version":1,"events":[${stored.map((r) => r.body).join(",")}],"next_after":${
      JSON.stringify(res.body.next_after)
    }}`,
  );
  const e = res.body.events[0]!;
  assert.equal(e.schema_version, 1);
  assert.deepEqual(e.project, { id: p.hashid, test: false });
  const rest = await readOk(srv.url, env, token.value, { after: res.body.next_after, limit: 1000 });
  assert.equal(rest.events.length, 50);
});

Deno.test("event_stream event_types[] filters, and a cursor only continues its own filter set", async () => {
  const { p, token, env } = await feedFixture();
  const types = ["install", "purchase", "view", "install", "custom", "purchase", "open"];
  const ids = await capture(srv.sql, env, p.hashid, types, clock);
  const wanted = ids.filter((_, i) => ["install", "purchase"].includes(types[i]!));

  const first = await readOk(srv.url, env, token.value, {
    limit: 2,
    types: ["purchase", "install"],
  });
  assert.deepEqual(first.events.map((e) => e.id), wanted.slice(0, 2));
  // Order and repetition do not matter: the filter set is normalised.
  const rest = await readAll(srv.url, env, token.value, {
    after: first.next_after,
    limit: 2,
    types: ["install", "purchase", "install"],
  });
  assert.deepEqual(rest.events.map((e) => e.id), wanted.slice(2));
  assert.ok(rest.events.every((e) => e.type === "install" || e.type === "purchase"));

  // Another filter set, narrower, wider, as large but of other types, or none, is a bad cursor.
  for (
    const other of [["install"], ["install", "purchase", "view"], ["open", "view"], [
      "install",
      "open",
    ], []]
  ) {
    assertError(
      await readFeed(srv.url, env, token.value, { after: first.next_after, types: other }),
      400,
      "bad_cursor",
    );
  }
  const unfiltered = await readOk(srv.url, env, token.value, { limit: 3 });
  assertError(
    await readFeed(srv.url, env, token.value, { after: unfiltered.next_after, types: ["view"] }),
    400,
    "bad_cursor",
  );
  // Every type at once is no filter at all.
  const everyType = [
    "view",
    "open",
    "install",
    "reinstall",
    "reactivation",
    "app_open",
    "user_referred",
    "session",
    "purchase",
    "custom",
  ];
  const all = await readOk(srv.url, env, token.value, {
    after: unfiltered.next_after,
    types: everyType,
  });
  assert.deepEqual(all.events.map((e) => e.id), ids.slice(3));
  // A filter with nothing to match still answers a cursor.
  const none = await readOk(srv.url, env, token.value, { types: ["reactivation"] });
  assert.deepEqual(none.events, []);
  const noneAgain = await readOk(srv.url, env, token.value, {
    types: ["reactivation"],
    after: none.next_after,
  });
  assert.equal(noneAgain.next_after, none.next_after);
});

Deno.test("event_stream rejects tampered, truncated, foreign and otherwise signed cursors with 400", async () => {
  const { p, token, env } = await feedFixture();
  await capture(srv.sql, env, p.hashid, ["install", "open", "view"], clock);
  const page = await readOk(srv.url, env, token.value, { limit: 1 });
  const cursor = page.next_after;
  assert.match(cursor, /^v2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  assert.ok(!cursor.includes(String(env)) || cursor.length > 20);

  const [, payload, mac] = cursor.split(".") as [string, string, string];
  const flip = (s: string, i: number) =>
    s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
  // A payload naming the start instead, signed with nothing: the client cannot build cursors.
  const forged = Buffer.from(JSON.stringify([env, "0", "0", "0", []])).toString("base64url");
  const bad = [
    cursor.slice(0, -1),
    cursor.slice(0, cursor.length - 10),
    cursor.slice(0, cursor.indexOf(".", 3)),
    cursor + "A",
    `v2.${flip(payload, 5)}.${mac}`,
    `v2.${payload}.${flip(mac, 0)}`,
    // The version is signed with the payload: a v2 cursor relabelled v1 does not verify.
    `v1.${payload}.${mac}`,
    `v3.${payload}.${mac}`,
    `v2.${forged}.${mac}`,
    `v2.${payload}`,
    ` ${cursor}`,
    "v2." + "A".repeat(5000) + "." + mac,
    "ünïcode",
    "null",
    "0",
  ];
  for (const after of bad) {
    assertError(await readFeed(srv.url, env, token.value, { after }), 400, "bad_cursor");
  }

  // A cursor of another environment, even of the same project, is foreign.
  const testToken = await createFeedToken(srv.url, p.testId);
  const foreign = await readOk(srv.url, p.testId, testToken.value);
  assertError(
    await readFeed(srv.url, env, token.value, { after: foreign.next_after }),
    400,
    "bad_cursor",
  );
  // An instance with another cursor secret does not accept it; one sharing the secret does.
  const otherSecret = serveApp(srv.db, {
    clock,
    config: { CURSOR_SECRET: "another-cursor-secret-0123456789abcdefgh" },
  });
  const sameSecret = serveApp(srv.db, { clock });
  try {
    assertError(
      await readFeed(otherSecret.url, env, token.value, { after: cursor }),
      400,
      "bad_cursor",
    );
    const continued = await readOk(sameSecret.url, env, token.value, { after: cursor });
    assert.deepEqual(continued.events.map((e) => e.type), ["open", "view"]);
  } finally {
    await otherSecret.close();
    await sameSecret.close();
  }
});

Deno.test("capture starts at the first token or destination: earlier events are not in the feed", async () => {
  const p = await createProject(srv.url);
  const env = p.productionId;
  await capture(srv.sql, env, p.hashid, ["install", "open"], clock);
  const [before] = await srv.sql`
    select count(*)::int as n from feed_events where environment_id = ${env}
  `;
  assert.equal(before!.n, 0);

  const token = await createFeedToken(srv.url, env);
  const after = await capture(srv.sql, env, p.hashid, ["view"], clock);
  assert.deepEqual((await readAll(srv.url, env, token.value)).events.map((e) => e.id), after);

  // A destination starts capture just as well.
  const d = await call(srv.url, "POST", `/api/v1/projects/${p.testId}/destinations`, {
    headers: adminHeaders,
    body: { url: "https://crm.example.com/hook" },
  });
  assert.equal(d.status, 201);
  const captured = await capture(srv.sql, p.testId, p.hashid, ["install"], clock);
  const testToken = await createFeedToken(srv.url, p.testId);
  assert.deepEqual(
    (await readAll(srv.url, p.testId, testToken.value)).events.map((e) => e.id),
    captured,
  );
});

Deno.test("the last revocation removes the captured feed; an older cursor reads the new capture from its start", async () => {
  const p = await createProject(srv.url);
  const env = p.productionId;
  const a = await createFeedToken(srv.url, env, "a");
  const b = await createFeedToken(srv.url, env, "b");
  await capture(srv.sql, env, p.hashid, ["install", "open", "view"], clock);
  const { after: oldCursor } = await readAll(srv.url, env, a.value);

  // Revoking one of two tokens keeps the feed.
  await revoke(env, a.id);
  assert.equal((await readAll(srv.url, env, b.value)).events.length, 3);
  await revoke(env, b.id);
  const [left] = await srv.sql`
    select count(*)::int as n from feed_events where environment_id = ${env}
  `;
  assert.equal(left!.n, 0);
  // Analytics captured while idle are not kept for the feed.
  await capture(srv.sql, env, p.hashid, ["custom"], clock);

  clock.advance(1000);
  const c = await createFeedToken(srv.url, env, "c");
  // Even if sequence numbers started over (a restore, say), the epoch in the cursor keeps an old
  // cursor from skipping what the new capture holds.
  await srv.sql`select setval('feed_events_seq', 1, false)`;
  const fresh = await capture(srv.sql, env, p.hashid, ["purchase", "session"], clock);
  const page = await readOk(srv.url, env, c.value, { after: oldCursor });
  assert.deepEqual(page.events.map((e) => e.id), fresh);
  assert.notEqual(page.next_after, oldCursor);
  assert.deepEqual((await readOk(srv.url, env, c.value, { after: page.next_after })).events, []);
});
