// The live tail over real HTTP and the database: SSE and the GraphQL subscription, their checks,
// the open-stream limit (across instances on PostgreSQL), revocation, the 1 h limit, shutdown,
// no loss.
import { onCitus } from "../db/cluster.ts";
import assert from "node:assert/strict";
import { EventSourceParserStream } from "eventsource-parser/stream";
import { openLiveStream } from "../client/live.ts";
import { FeedError } from "../client/errors.ts";
import type { Sql } from "../db/connect.ts";
import { startFeedWakeup } from "../services/feed/wakeup.ts";
import { READ_BOUND_MS } from "../services/feed/live_tail.ts";
import { capture } from "./helpers/feed.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { ManualClock, silentLogger } from "./helpers/clock.ts";
import {
  adminHeaders,
  assertError,
  call,
  createFeedToken,
  createProject,
  serveApp,
  type TestResponse,
  type TestServer,
} from "./helpers/server.ts";

async function openSlots(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from live_streams`;
  return row!.n;
}

const livePath = (projectId: number | string, query = "") =>
  `/api/v1/projects/${projectId}/event_stream/live${query}`;

/**
 * A live-tail request that must be refused, its JSON answer read whole. Where a stream opens
 * instead, it is closed and the step fails (reading it whole would wait forever).
 */
async function refusal(
  base: string,
  path: string,
  options: { headers?: Record<string, string> } = {},
): Promise<TestResponse> {
  const res = await fetch(base + path, { headers: options.headers });
  if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
    await res.body?.cancel();
    assert.fail(`${path}: a stream opened (${res.status}) where a refusal was due`);
  }
  const text = await res.text();
  const json = res.headers.get("content-type")?.includes("application/json");
  return { status: res.status, headers: res.headers, body: json ? JSON.parse(text) : text, text };
}

/** Aborts a stream that should end by itself but did not: the step fails rather than hangs. */
function giveUpAfter(ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`still open after ${ms} ms`)), ms);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/** Reads SSE messages of a fetch response until `count` feed events arrived. */
async function takeEvents(
  body: ReadableStream<Uint8Array>,
  count: number,
): Promise<{ ids: string[]; cursors: string[]; ended: boolean }> {
  const ids: string[] = [];
  const cursors: string[] = [];
  const reader = body.pipeThrough(new TextDecoderStream() as TransformStream<Uint8Array, string>)
    .pipeThrough(
      new EventSourceParserStream(),
    ).getReader();
  // Events that never come end the read (and fail the step) rather than hang it.
  const deadline = setTimeout(() => reader.cancel(), 20_000);
  try {
    while (ids.length < count) {
      const { done, value } = await reader.read();
      if (done) return { ids, cursors, ended: true };
      if (value.event !== "feed_event") continue;
      ids.push(JSON.parse(value.data).id);
      cursors.push(value.id!);
    }
  } finally {
    clearTimeout(deadline);
    await reader.cancel().catch(() => {});
  }
  return { ids, cursors, ended: false };
}

/** Reads a GraphQL-over-SSE subscription until `count` edges arrived. */
async function takeEdges(
  base: string,
  token: string,
  projectId: number,
  after: string | null,
  count: number,
) {
  const res = await fetch(base + "/graphql", {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/json",
      Accept: "text/event-stream",
    },
    body: JSON.stringify({
      query: `subscription ($p: ID!, $a: String) { eventFeed(projectId: $p, after: $a) {
        cursor node { id link { path } } } }`,
      variables: { p: String(projectId), a: after },
    }),
  });
  assert.equal(res.status, 200);
  const reader = res.body!.pipeThrough(
    new TextDecoderStream() as TransformStream<Uint8Array, string>,
  ).pipeThrough(
    new EventSourceParserStream(),
  ).getReader();
  const ids: string[] = [];
  const cursors: string[] = [];
  // deno-lint-ignore no-explicit-any
  const errors: any[] = [];
  const deadline = setTimeout(() => reader.cancel(), 20_000);
  try {
    while (ids.length < count) {
      const { done, value } = await reader.read();
      if (done || value.event === "complete") break;
      if (value.event !== "next") continue;
      const payload = JSON.parse(value.data);
      if (payload.errors) {
        errors.push(...payload.errors);
        break;
      }
      ids.push(payload.data.eventFeed.node.id);
      cursors.push(payload.data.eventFeed.cursor);
    }
  } finally {
    clearTimeout(deadline);
    await reader.cancel().catch(() => {});
  }
  return { ids, cursors, errors };
}

/**
 * The live tail's rules, over `a` and `b`: two instances over one database, or the same one
 * twice (the embedded database serves one connection, so there is only one instance there).
 */
async function liveTailSteps(
  t: Deno.TestContext,
  { a, b, clock }: { a: TestServer; b: TestServer; clock: ManualClock },
): Promise<void> {
  // Step names say "across instances" only where there are two.
  const across = (what: string, other: string) => a === b ? what : `${what}${other}`;

  const project = await createProject(a.url);
  const token = await createFeedToken(a.url, project.productionId);
  const auth = { Authorization: `Bearer ${token.value}` };

  await t.step("every check of the pull feed answers as JSON before the stream", async () => {
    assertError(await refusal(a.url, livePath(project.productionId)), 401, "unauthorized");
    assertError(
      await refusal(a.url, livePath(project.productionId), {
        headers: { Authorization: "Bearer est_nope" },
      }),
      401,
      "unauthorized",
    );
    assertError(
      await refusal(a.url, livePath(project.testId), { headers: auth }),
      403,
      "forbidden",
    );
    assertError(
      await refusal(a.url, livePath(project.productionId, "?event_types[]=nope"), {
        headers: auth,
      }),
      400,
      "invalid_event_type",
    );
    assertError(
      await refusal(a.url, livePath(project.productionId, "?after=v1.bad.cursor"), {
        headers: auth,
      }),
      400,
      "bad_cursor",
    );
    assertError(
      await refusal(a.url, livePath(project.productionId), {
        headers: { ...auth, "Last-Event-ID": "garbage" },
      }),
      400,
      "bad_cursor",
    );
    const other = await createProject(a.url, { name: "Lapsed" });
    const freeToken = await createFeedToken(a.url, other.productionId);
    await call(a.url, "PATCH", `/api/v1/admin/projects/${other.hashid}`, {
      headers: adminHeaders,
      body: { enterprise: false },
    });
    assertError(
      await refusal(a.url, livePath(other.productionId), {
        headers: { Authorization: `Bearer ${freeToken.value}` },
      }),
      402,
      "enterprise_required",
    );
    // A refused stream left no slot behind: two can still open below.
    const n = await openSlots(a.sql);
    assert.equal(n, 0);
  });

  await t.step("GraphQL: the same errors, with the query's codes", async () => {
    const res = await takeEdges(a.url, "est_nope", project.productionId, null, 1);
    assert.equal(res.errors[0]?.extensions?.code, "UNAUTHENTICATED", JSON.stringify(res.errors));
    const bad = await takeEdges(a.url, token.value, project.productionId, "v1.x.y", 1);
    assert.equal(bad.errors[0]?.extensions?.code, "BAD_USER_INPUT");
    assert.match(bad.errors[0]?.message, /^after/);
  });

  await t.step(
    across("a third stream is refused", ", across instances") + "; a closed one frees its slot",
    async () => {
      const c1 = new AbortController();
      const c2 = new AbortController();
      const s1 = await fetch(a.url + livePath(project.productionId), {
        headers: auth,
        signal: c1.signal,
      });
      const s2 = await fetch(b.url + livePath(project.productionId), {
        headers: auth,
        signal: c2.signal,
      });
      assert.equal(s1.status, 200);
      assert.equal(s2.status, 200);
      assert.equal(s1.headers.get("content-type"), "text/event-stream");
      const third = await refusal(b.url, livePath(project.productionId), { headers: auth });
      assertError(third, 503, "rate_limited", /2 open live streams/);
      assert.ok(Number(third.headers.get("retry-after")) >= 1);
      c1.abort();
      await s1.body?.cancel().catch(() => {});
      // The slot is released when the server sees the client leave.
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline) {
        const n = await openSlots(a.sql);
        if (n === 1) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const s3 = await fetch(a.url + livePath(project.productionId), { headers: auth });
      assert.equal(s3.status, 200);
      await s3.body?.cancel();
      c2.abort();
      await s2.body?.cancel().catch(() => {});
    },
  );

  await t.step(
    "concurrent writers; SSE and GraphQL readers resumed mid-stream lose nothing",
    async () => {
      // Wait until the slots above are released.
      for (let i = 0; i < 100; i++) {
        const n = await openSlots(a.sql);
        if (n === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const writers = 6;
      const batches = 10;
      const perBatch = 5;
      const total = writers * batches * perBatch;
      const written: string[] = [];
      const writing = Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          const sql = w % 2 === 0 ? a.sql : b.sql;
          for (let i = 0; i < batches; i++) {
            const ids = await capture(
              sql,
              project.productionId,
              project.hashid,
              Array(perBatch).fill("install"),
              clock,
            );
            written.push(...ids);
            await new Promise((r) => setTimeout(r, Math.random() * 20));
          }
        }),
      );
      const follow = async (kind: "sse" | "graphql") => {
        // Each reader its own token. A token's two slots are freed only once the server sees
        // the previous leg's client leave, so a resume can still find both taken: it is then
        // refused rate_limited with Retry-After, and retries as a client does (waits counted).
        const own = await createFeedToken(a.url, project.productionId, kind);
        const ownAuth = { Authorization: `Bearer ${own.value}` };
        const seen: string[] = [];
        let after: string | null = null;
        let legs = 0;
        let waits = 0;
        const slotsTaken = () => {
          assert.ok(++waits <= 20, `${kind}: refused rate_limited ${waits} times in a row`);
          return new Promise((r) => setTimeout(r, 250));
        };
        while (seen.length < total) {
          legs++;
          // Each leg stops after a few events: a disconnect mid-stream, then a resume.
          const want = Math.min(37, total - seen.length);
          const base = legs % 2 === 0 ? a.url : b.url;
          const got: { ids: string[]; cursors: string[]; errors?: unknown[] } | null =
            kind === "sse"
              ? await (async () => {
                const res: Response = await fetch(base + livePath(project.productionId), {
                  headers: after ? { ...ownAuth, "Last-Event-ID": after } : ownAuth,
                });
                if (res.status === 503) {
                  const body = await res.json();
                  // On Citus also `unavailable`: writes to reference tables there can deadlock,
                  // and the one Citus cancels is answered 503 (docs/SCALING.md, the soak there).
                  assert.ok(
                    body.error.code === "rate_limited" ||
                      (onCitus() && body.error.code === "unavailable"),
                    body.error.code,
                  );
                  assert.ok(res.headers.get("Retry-After"));
                  return null;
                }
                if (res.status !== 200) assert.fail(`${res.status}: ${await res.text()}`);
                return await takeEvents(res.body!, want);
              })()
              : await takeEdges(base, own.value, project.productionId, after, want);
          const refused = got === null ||
            // deno-lint-ignore no-explicit-any
            (got.ids.length === 0 && (got.errors as any[] | undefined)?.length === 1 &&
              ["RATE_LIMITED", ...(onCitus() ? ["UNAVAILABLE"] : [])].includes(
                // deno-lint-ignore no-explicit-any
                (got.errors as any[])[0].extensions?.code,
              ));
          if (refused) {
            legs--;
            await slotsTaken();
            continue;
          }
          waits = 0;
          if ("errors" in got) assert.deepEqual(got.errors, []);
          seen.push(...got.ids);
          if (got.cursors.length > 0) after = got.cursors.at(-1)!;
        }
        return { seen, legs };
      };
      const [sse, gql] = await Promise.all([follow("sse"), follow("graphql"), writing]);
      const order = await a.sql<{ id: string }[]>`
      select body::json->>'id' as id from feed_events
      where environment_id = ${project.productionId} order by xid, seq
    `;
      const expected = order.map((r) => r.id);
      assert.equal(expected.length, total);
      assert.deepEqual(new Set(written), new Set(expected));
      for (const r of [sse, gql]) {
        assert.ok(r.legs >= 5, `resumed ${r.legs} times`);
        // Resuming from the last received cursor redelivers nothing here.
        assert.deepEqual(r.seen, expected);
      }
    },
  );

  await t.step(
    across("revocation", " on another instance") + " ends an open stream within 5 s",
    async () => {
      const limit = giveUpAfter(10_000);
      const stream = await openLiveStream({
        baseUrl: a.url,
        projectId: project.productionId,
        token: token.value,
        signal: limit.signal,
      });
      const started = Date.now();
      const revoke = await call(
        b.url,
        "DELETE",
        `/api/v1/projects/${project.productionId}/event_stream_tokens/${token.id}`,
        { headers: adminHeaders },
      );
      assert.ok(revoke.status < 300, revoke.text);
      let events = 0;
      try {
        for await (const _ of stream) events++;
      } finally {
        limit.clear();
      }
      const took = Date.now() - started;
      assert.ok(took < 5_000, `ended after ${took} ms`);
      assert.equal(events, 300); // the retained events, then the end
    },
  );

  await t.step("a stream ends after 1 h (by the app's clock)", async () => {
    const fresh = await createFeedToken(a.url, project.productionId, "hour");
    const limit = giveUpAfter(10_000);
    const stream = await openLiveStream({
      baseUrl: a.url,
      projectId: project.productionId,
      token: fresh.value,
      after: null,
      signal: limit.signal,
    });
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    clock.advance(60 * 60 * 1000);
    const started = Date.now();
    let n = 1;
    try {
      while (!(await it.next()).done) n++;
    } finally {
      limit.clear();
    }
    assert.equal(n, 300);
    assert.ok(Date.now() - started < 5_000);
  });

  await t.step("errors from a refused client are FeedErrors with the code", async () => {
    await assert.rejects(
      openLiveStream({ baseUrl: a.url, projectId: project.productionId, token: token.value }),
      (err) => err instanceof FeedError && err.status === 401 && err.code === "unauthorized",
    );
  });

  await t.step("shutdown closes open streams cleanly", async () => {
    const fresh = await createFeedToken(a.url, project.productionId, "shutdown");
    const stream = await openLiveStream({
      baseUrl: b.url,
      projectId: project.productionId,
      token: fresh.value,
    });
    assert.equal(b.liveTails.size, 1);
    const it = stream[Symbol.asyncIterator]();
    for (let n = 0; n < 300; n++) assert.equal((await it.next()).done, false);
    // Caught up and waiting: shutdown ends the response normally (no cut connection).
    const closing = b.close();
    assert.equal((await it.next()).done, true);
    await closing;
    assert.equal(b.liveTails.size, 0);
    assert.equal(await openSlots(a.sql), 0);
  });
}

// One instance, polling as it does on the embedded database (no NOTIFY through its socket):
// everything here runs on the default `deno task test` as on PostgreSQL.
Deno.test("live tail, one instance: checks, limits, no loss, revocation, 1 h, shutdown", async (t) => {
  const db = await createTestDatabase();
  const clock = new ManualClock(new Date());
  const srv = serveApp(db, { clock, livePollMs: 250 });
  try {
    await liveTailSteps(t, { a: srv, b: srv, clock });
  } finally {
    await srv.close();
    await db.close();
  }
});

// Two instances over one database, woken by NOTIFY; a long poll interval, so waking comes from
// NOTIFY. The embedded database serves one connection: one instance only.
Deno.test({
  name:
    "live tail, two instances woken by NOTIFY (PostgreSQL only: the embedded database serves one instance)",
  ignore: !Deno.env.get("DATABASE_URL"),
}, async (t) => {
  const db = await createTestDatabase();
  const clock = new ManualClock(new Date());
  const sqlA = db.pool();
  const sqlB = db.pool();
  const wakeA = await startFeedWakeup(sqlA, silentLogger);
  const wakeB = await startFeedWakeup(sqlB, silentLogger);
  const a = serveApp(db, { clock, sql: sqlA, wakeup: wakeA, livePollMs: 2_000 });
  const b = serveApp(db, { clock, sql: sqlB, wakeup: wakeB, livePollMs: 2_000 });
  try {
    await liveTailSteps(t, { a, b, clock });
  } finally {
    await a.close();
    await b.close().catch(() => {});
    await wakeA.close();
    await wakeB.close();
    await db.close();
  }
});

// A page read that never answers (here: it waits on a lock the test holds; in production, a read
// lost on a connection the database dropped) must not keep the stream open with nothing coming:
// after READ_BOUND_MS by the app's clock the stream ends, and the client resumes from its
// cursor without a loss. A lock on the feed's table needs a second connection: PostgreSQL only.
Deno.test({
  name:
    "live tail: a page read that does not answer ends the stream; the client resumes (PostgreSQL only)",
  ignore: !Deno.env.get("DATABASE_URL"),
}, async () => {
  const db = await createTestDatabase();
  const clock = new ManualClock(new Date());
  const srv = serveApp(db, { clock, livePollMs: 50 });
  const locker = db.pool(1);
  try {
    const project = await createProject(srv.url);
    const token = await createFeedToken(srv.url, project.productionId);
    const headers = { Authorization: `Bearer ${token.value}`, Accept: "text/event-stream" };
    const before = await capture(
      srv.sql,
      project.productionId,
      project.hashid,
      ["install", "open", "install"],
      clock,
    );
    const res = await fetch(srv.url + livePath(project.productionId), { headers });
    assert.equal(res.status, 200);
    const reader = res.body!.pipeThrough(
      new TextDecoderStream() as TransformStream<Uint8Array, string>,
    ).pipeThrough(new EventSourceParserStream()).getReader();
    const seen: string[] = [];
    let cursor = "";
    while (seen.length < before.length) {
      const { done, value } = await reader.read();
      assert.ok(!done, "the stream ended before its first events");
      if (value.event !== "feed_event") continue;
      seen.push(JSON.parse(value.data).id);
      cursor = value.id!;
    }
    assert.deepEqual(seen, before);

    const connection = await locker.reserve();
    let ended = false;
    try {
      await connection`begin`;
      await connection`lock table feed_events in access exclusive mode`;
      // The follower's next poll waits on the lock.
      for (let i = 0; i < 200; i++) {
        const [waiting] = await srv.sql<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and query like '%feed_events%'
        `;
        if (waiting!.n > 0) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      assert.equal(srv.liveTails.size, 1);
      clock.advance(READ_BOUND_MS - 1);
      await new Promise((r) => setTimeout(r, 400)); // two watchdog ticks: not yet
      assert.equal(srv.liveTails.size, 1, "ended before its bound");
      clock.advance(1);
      const limit = giveUpAfter(5_000);
      limit.signal.addEventListener("abort", () => reader.cancel().catch(() => {}));
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          assert.notEqual(value.event, "feed_event", "an event came while the read was stuck");
        }
      } finally {
        limit.clear();
      }
      assert.ok(!limit.signal.aborted, "the stream did not end at its bound");
      ended = true;
      assert.equal(srv.liveTails.size, 0);
    } finally {
      await connection`rollback`.catch(() => {});
      connection.release();
      if (!ended) await reader.cancel().catch(() => {});
    }

    // The stuck read answers now, to no one; the client resumes from its last cursor.
    const after = await capture(srv.sql, project.productionId, project.hashid, ["open"], clock);
    const again = await fetch(srv.url + livePath(project.productionId), {
      headers: { ...headers, "Last-Event-ID": cursor },
    });
    assert.equal(again.status, 200);
    const resumed = await takeEvents(again.body!, after.length);
    assert.deepEqual(resumed.ids, after);
    for (let i = 0; i < 100 && (await openSlots(srv.sql)) > 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(await openSlots(srv.sql), 0, "the stalled stream's slot was not released");
  } finally {
    await srv.close();
    await locker.end();
    await db.close();
  }
});
