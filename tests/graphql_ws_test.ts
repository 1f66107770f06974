// The feed subscription over WebSocket, with graphql-ws's own client on Deno's WebSocket against
// the real server: the same authentication, errors and limits as over SSE (the 2-stream limit
// shared between the two), revocation within 5 s, and resume by cursor without loss.
import assert from "node:assert/strict";
import { type Client, createClient } from "graphql-ws";
import { gql, type Json } from "./helpers/graphql.ts";
import {
  adminHeaders,
  call,
  createFeedToken,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

const wsUrl = srv.url.replace(/^http/, "ws") + "/graphql";

const SUBSCRIPTION = `subscription($p: ID!, $a: String) {
  eventFeed(projectId: $p, after: $a) { cursor node { id type name link { path title } } }
}`;

function client(authorization: string | null): Client {
  return createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    lazy: true,
    retryAttempts: 0,
    connectionParams: authorization === null ? undefined : { Authorization: authorization },
  });
}

/** A subscription's results as they come, with its end (complete, or an error) awaitable. */
function subscribe(c: Client, query: string, variables: Record<string, unknown>) {
  const results: Json[] = [];
  let wake: () => void = () => {};
  let ended = false;
  let error: unknown = null;
  const done = new Promise<void>((resolve) => {
    c.subscribe({ query, variables }, {
      next: (r) => {
        results.push(r);
        wake();
      },
      error: (e) => {
        error = e;
        ended = true;
        wake();
        resolve();
      },
      complete: () => {
        ended = true;
        wake();
        resolve();
      },
    });
  });
  return {
    results,
    done,
    get error() {
      return error;
    },
    /** Waits until `count` results arrived (or the subscription ended), at most `ms`. */
    async take(count: number, ms = 10_000): Promise<Json[]> {
      const deadline = Date.now() + ms;
      while (results.length < count && !ended && Date.now() < deadline) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, Math.max(0, deadline - Date.now()));
        });
      }
      return results.slice(0, count);
    },
  };
}

async function setUp() {
  const p = await createProject(srv.url);
  const token = await createFeedToken(srv.url, p.productionId);
  const made = await call(srv.url, "POST", `/api/v1/projects/${p.productionId}/links`, {
    headers: adminHeaders,
    body: { title: "Subscribed" },
  });
  return { p, token, path: made.body.link.path as string };
}

async function ingest(key: string, events: Json[]) {
  const res = await call(srv.url, "POST", "/api/v1/sdk/events", {
    headers: { "PROJECT-KEY": key, "ENVIRONMENT": "production" },
    body: { events },
  });
  assert.equal(res.status, 202, res.text);
}

const customs = (names: string[], path?: string) =>
  names.map((name) => ({
    type: "custom",
    name,
    occurred_at: new Date().toISOString(),
    ...(path ? { link_path: path } : {}),
  }));

Deno.test("the feed over WebSocket: retained events, then new ones, with links; resume by cursor", async () => {
  const { p, token, path } = await setUp();
  await ingest(p.key, customs(["a", "b", "c"], path));
  const c = client(`Bearer ${token.value}`);
  try {
    const sub = subscribe(c, SUBSCRIPTION, { p: String(p.productionId) });
    const first = await sub.take(3);
    assert.deepEqual(first.map((r) => r.data.eventFeed.node.name), ["a", "b", "c"]);
    assert.deepEqual(first[0].data.eventFeed.node.link, { path, title: "Subscribed" });
    await ingest(p.key, customs(["d", "e"]));
    const more = await sub.take(5);
    assert.deepEqual(more.map((r) => r.data.eventFeed.node.name), ["a", "b", "c", "d", "e"]);
    assert.equal(more[3].data.eventFeed.node.link, null);
    const cursor = more[2].data.eventFeed.cursor;
    await c.dispose();

    // Resume after "c", on a new connection: d and e, then what came meanwhile.
    await ingest(p.key, customs(["f"]));
    const again = client(`Bearer ${token.value}`);
    try {
      const resumed = subscribe(again, SUBSCRIPTION, { p: String(p.productionId), a: cursor });
      const got = await resumed.take(3);
      assert.deepEqual(got.map((r) => r.data.eventFeed.node.name), ["d", "e", "f"]);
      // The cursor is REST's too.
      const rest = await call(
        srv.url,
        "GET",
        `/api/v1/projects/${p.productionId}/event_stream?after=${encodeURIComponent(cursor)}`,
        { headers: { Authorization: `Bearer ${token.value}` } },
      );
      assert.deepEqual(rest.body.events.map((e: Json) => e.name), ["d", "e", "f"]);
    } finally {
      await again.dispose();
    }
  } finally {
    await c.dispose();
  }
});

Deno.test("WebSocket refusals carry the query's extensions.code", async () => {
  const { p, token } = await setUp();
  const cases: [string | null, Record<string, unknown>, string, string][] = [
    [null, { p: String(p.productionId) }, "UNAUTHENTICATED", "unauthorized"],
    ["Bearer est_wrong", { p: String(p.productionId) }, "UNAUTHENTICATED", "unauthorized"],
    [`Bearer ${token.value}`, { p: String(p.testId) }, "FORBIDDEN", "forbidden"],
    [
      `Bearer ${token.value}`,
      { p: String(p.productionId), a: "nope" },
      "BAD_USER_INPUT",
      "bad_cursor",
    ],
  ];
  for (const [authorization, variables, code, reason] of cases) {
    const c = client(authorization);
    try {
      const sub = subscribe(c, SUBSCRIPTION, variables);
      await sub.done;
      const errors = sub.results[0]?.errors ?? (sub.error as Json[]);
      assert.equal(errors?.[0]?.extensions?.code, code, JSON.stringify([sub.results, sub.error]));
      assert.equal(errors[0].extensions.reason, reason);
    } finally {
      await c.dispose();
    }
  }
  // A query is POST /graphql's; an oversized document is refused before it is parsed.
  const c = client(`Bearer ${token.value}`);
  try {
    const query = subscribe(c, `{ __typename }`, {});
    await query.done;
    assert.match(JSON.stringify(query.error), /subscriptions/);
    const big = subscribe(c, `subscription { __typename } # ${"x".repeat(40_000)}`, {});
    await big.done;
    assert.match(JSON.stringify(big.error), /larger than 32768 bytes/);
  } finally {
    await c.dispose();
  }
  // Without the protocol, no upgrade.
  const plain = await fetch(srv.url + "/graphql", {
    headers: {
      Upgrade: "websocket",
      Connection: "Upgrade",
      "Sec-WebSocket-Version": "13",
      "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
    },
  });
  assert.equal(plain.status, 400);
  assert.equal((await plain.json()).errors[0].extensions.code, "BAD_USER_INPUT");
});

Deno.test("the 2-stream limit of a token is shared by SSE and WebSocket; leaving frees a slot", async () => {
  const { p, token } = await setUp();
  const auth = { Authorization: `Bearer ${token.value}` };
  const controller = new AbortController();
  const sse = await fetch(`${srv.url}/api/v1/projects/${p.productionId}/event_stream/live`, {
    headers: auth,
    signal: controller.signal,
  });
  assert.equal(sse.status, 200);
  const c = client(auth.Authorization);
  try {
    const one = subscribe(c, SUBSCRIPTION, { p: String(p.productionId) });
    // The stream is open once its slot is taken: wait for it.
    for (let i = 0; i < 100; i++) {
      const [row] = await srv.sql`select count(*)::int as n from live_streams
        where token_id = ${token.id}`;
      if (row!.n >= 2) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const third = subscribe(c, SUBSCRIPTION, { p: String(p.productionId) });
    await third.done;
    assert.equal(third.results[0]?.errors?.[0].extensions.code, "RATE_LIMITED");
    const overSse = await fetch(`${srv.url}/api/v1/projects/${p.productionId}/event_stream/live`, {
      headers: auth,
    });
    assert.equal(overSse.status, 503);
    await overSse.body?.cancel();
    // The SSE client leaves: a WebSocket subscription gets its slot.
    controller.abort();
    await sse.body?.cancel().catch(() => {});
    let opened = false;
    for (let i = 0; i < 100 && !opened; i++) {
      const retry = subscribe(c, SUBSCRIPTION, { p: String(p.productionId) });
      await Promise.race([retry.done, new Promise((r) => setTimeout(r, 300))]);
      opened = retry.results.length === 0 && retry.error === null;
    }
    assert.ok(opened, "a slot was freed");
    assert.equal(one.error, null);
  } finally {
    await c.dispose();
  }
});

Deno.test("revoking the token ends a WebSocket subscription within 5 s", async () => {
  const { p, token } = await setUp();
  await ingest(p.key, customs(["x"]));
  const c = client(`Bearer ${token.value}`);
  try {
    const sub = subscribe(c, SUBSCRIPTION, { p: String(p.productionId) });
    assert.equal((await sub.take(1)).length, 1);
    const started = Date.now();
    const revoke = await call(
      srv.url,
      "DELETE",
      `/api/v1/projects/${p.productionId}/event_stream_tokens/${token.id}`,
      { headers: adminHeaders },
    );
    assert.equal(revoke.status, 204);
    await Promise.race([
      sub.done,
      new Promise((_, reject) => setTimeout(() => reject(new Error("still open")), 10_000)),
    ]);
    const took = Date.now() - started;
    assert.ok(took < 5_000, `ended after ${took} ms`);
    // Its slot is freed: by the server once the stream has ended, which the client may see a
    // moment before (the complete message goes out first), so within the same 5 s.
    const open = async () =>
      (await srv.sql`select count(*)::int as n from live_streams
        where token_id = ${token.id}`)[0]!.n as number;
    while (await open() > 0 && Date.now() - started < 5_000) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(await open(), 0, "the stream's slot is still held after 5 s");
  } finally {
    await c.dispose();
  }
  // The GraphQL query agrees: the token is gone.
  const r = await gql(srv.url, `query($p: ID!) { eventFeed(projectId: $p) { schemaVersion } }`, {
    headers: { Authorization: `Bearer ${token.value}` },
    variables: { p: String(p.productionId) },
  });
  assert.equal(r.errors?.[0].extensions.code, "UNAUTHENTICATED");
});
