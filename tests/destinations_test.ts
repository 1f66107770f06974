// Push destinations: the admin routes and the deliverer's rules, over a real PostgreSQL, real
// receivers on 127.0.0.1, and a ManualClock for every time rule.
import assert from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import { sealMigratedSecrets } from "../services/destinations/delivery.ts";
import { purgeExpired } from "../services/feed/retention.ts";
import { ManualClock } from "./helpers/clock.ts";
import { capture } from "./helpers/feed.ts";
import { deliveryWorker, eventsOf, startReceiver } from "./helpers/receiver.ts";
import {
  adminHeaders,
  assertError,
  call,
  createFeedToken,
  createProject,
  CURSOR_SECRET,
  serveApp,
  startTestServer,
} from "./helpers/server.ts";

const clock = new ManualClock(new Date());
const srv = await startTestServer({ clock, config: { DESTINATIONS_ALLOW_PRIVATE: "true" } });
// The same database served without the flag: the address rule applies.
const strict = serveApp(srv.db, { clock, sql: srv.sql });
const receivers: { close(): Promise<void> }[] = [];

const api = (method: string, path: string, body?: unknown, base = srv.url) =>
  call(base, method, `/api/v1${path}`, { headers: adminHeaders, body });

async function destination(
  projectId: number,
  url: string,
  eventTypes?: string[],
): Promise<{ id: number; secret: string }> {
  const res = await api("POST", `/projects/${projectId}/destinations`, {
    url,
    ...(eventTypes ? { event_types: eventTypes } : {}),
  });
  assert.equal(res.status, 201, res.text);
  return { id: res.body.destination.id, secret: res.body.destination.secret };
}

async function status(projectId: number, id: number) {
  const res = await api("GET", `/projects/${projectId}/destinations`);
  assert.equal(res.status, 200);
  return res.body.destinations.find((d: { id: number }) => d.id === id);
}

function receiver(...args: Parameters<typeof startReceiver>) {
  const r = startReceiver(...args);
  receivers.push(r);
  return r;
}

Deno.test("POST destinations creates with a secret shown once, and delivers signed batches in order", async () => {
  const p = await createProject(srv.url);
  await createFeedToken(srv.url, p.productionId); // capture runs before the destination exists
  const before = await capture(srv.sql, p.productionId, p.hashid, ["install"], clock);
  const r = receiver();
  const res = await api("POST", `/projects/${p.productionId}/destinations`, { url: r.url + "/in" });
  assert.equal(res.status, 201);
  const d = res.body.destination;
  assert.deepEqual(Object.keys(d).sort(), [
    "belongs_to",
    "created_at",
    "created_by",
    "dropped",
    "event_types",
    "id",
    "last_attempt_at",
    "last_error",
    "last_success_at",
    "pending",
    "secret",
    "state",
    "url",
  ]);
  assert.equal(d.state, "active");
  assert.deepEqual(d.event_types, []);
  assert.match(d.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  // Stored sealed, never as written.
  const [row] = await srv.sql`select secret_sealed from destinations where id = ${d.id}`;
  assert.ok(!row!.secret_sealed.includes(d.secret.slice(6)));
  // The list never shows it.
  const listed = await api("GET", `/projects/${p.productionId}/destinations`);
  assert.ok(!listed.text.includes(d.secret));

  const ids = await capture(srv.sql, p.productionId, p.hashid, ["install", "view", "open"], clock);
  await deliveryWorker(srv).drain();
  assert.equal(r.received.length, 1);
  const got = r.received[0]!;
  assert.deepEqual(eventsOf(got).map((e) => e.id), ids); // not `before`: it predates the destination
  assert.ok(!got.body.includes(before[0]!));
  // The feed's envelopes byte for byte.
  const bodies = await srv.sql<{ body: string }[]>`
    select body from feed_events where environment_id = ${p.productionId} order by xid, seq offset 1
  `;
  assert.equal(got.body, `{"schema_version":1,"events":[${bodies.map((b) => b.body).join(",")}]}`);
  assert.equal(got.headers["content-type"], "application/json");
  assert.match(got.headers["webhook-id"]!, /^msg_/);
  new Webhook(d.secret).verify(got.body, got.headers);

  const s = await status(p.productionId, d.id);
  assert.equal(s.pending, 0);
  assert.equal(s.dropped, 0);
  assert.equal(s.state, "active");
  assert.ok(s.last_success_at);
  assert.equal(s.last_error, null);
});

Deno.test("a batch holds at most 100 events; batch n+1 follows batch n in arrival order", async () => {
  const p = await createProject(srv.url);
  const r = receiver();
  await destination(p.productionId, r.url);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push(...await capture(srv.sql, p.productionId, p.hashid, Array(50).fill("install"), clock));
  }
  await deliveryWorker(srv).drain();
  assert.deepEqual(r.received.map((x) => eventsOf(x).length), [100, 100, 50]);
  assert.deepEqual(r.received.flatMap((x) => eventsOf(x).map((e) => e.id)), ids);
});

Deno.test("event_types filters what a destination receives and counts", async () => {
  const p = await createProject(srv.url);
  const r = receiver();
  const d = await destination(p.productionId, r.url, ["purchase", "install", "install"]);
  const listed = await status(p.productionId, d.id);
  assert.deepEqual(listed.event_types, ["install", "purchase"]);
  const ids = await capture(
    srv.sql,
    p.productionId,
    p.hashid,
    ["view", "install", "view", "purchase", "open"],
    clock,
  );
  assert.equal((await status(p.productionId, d.id)).pending, 2);
  await deliveryWorker(srv).drain();
  assert.deepEqual(r.received.flatMap((x) => eventsOf(x).map((e) => e.id)), [ids[1], ids[3]]);
  // Only unmatched events since: nothing is sent, the place moves on.
  await capture(srv.sql, p.productionId, p.hashid, ["view", "view"], clock);
  await deliveryWorker(srv).drain();
  assert.equal(r.received.length, 1);
  // Two statements, not one correlated: Citus refuses a subquery over the (distributed) feed
  // correlated with the destinations (a reference table).
  const [place] = await srv.sql`
    select environment_id, cursor_xid::text as x, cursor_seq::text as s
    from destinations where id = ${d.id}`;
  const [row] = await srv.sql`
    select (${place!.x}::bigint, ${place!.s}::bigint) >= (
        select f.xid, f.seq from feed_events f where f.environment_id = ${place!.environment_id}
        order by f.xid desc, f.seq desc limit 1
      ) as caught_up`;
  assert.equal(row!.caught_up, true);
});

Deno.test("PATCH paused stops delivery and keeps the place; resuming delivers what waited", async () => {
  const p = await createProject(srv.url);
  const r = receiver();
  const d = await destination(p.productionId, r.url);
  const paused = await api("PATCH", `/projects/${p.productionId}/destinations/${d.id}`, {
    paused: true,
  });
  assert.equal(paused.status, 200);
  assert.equal(paused.body.destination.state, "paused");
  assert.equal(paused.body.destination.secret, undefined);
  const ids = await capture(srv.sql, p.productionId, p.hashid, ["install", "open"], clock);
  await deliveryWorker(srv).drain();
  assert.equal(r.received.length, 0);
  assert.equal((await status(p.productionId, d.id)).pending, 2);
  const resumed = await api("PATCH", `/projects/${p.productionId}/destinations/${d.id}`, {
    paused: false,
  });
  assert.equal(resumed.body.destination.state, "active");
  await deliveryWorker(srv).drain();
  assert.deepEqual(r.received.flatMap((x) => eventsOf(x).map((e) => e.id)), ids);
});

Deno.test("rotate_secret: both signatures for 24 h, then only the new one", async () => {
  const p = await createProject(srv.url);
  const r = receiver();
  const d = await destination(p.productionId, r.url);
  const rotated = await api(
    "POST",
    `/projects/${p.productionId}/destinations/${d.id}/rotate_secret`,
  );
  assert.equal(rotated.status, 200);
  const secret = rotated.body.secret as string;
  assert.match(secret, /^whsec_/);
  assert.notEqual(secret, d.secret);
  await capture(srv.sql, p.productionId, p.hashid, ["install"], clock);
  await deliveryWorker(srv).drain();
  const first = r.received[0]!;
  assert.equal(first.headers["webhook-signature"]!.split(" ").length, 2);
  new Webhook(d.secret).verify(first.body, first.headers);
  new Webhook(secret).verify(first.body, first.headers);

  clock.advance(24 * 3600_000 + 1000);
  try {
    await capture(srv.sql, p.productionId, p.hashid, ["install"], clock);
    await deliveryWorker(srv).drain();
  } finally {
    clock.advance(-(24 * 3600_000 + 1000));
  }
  const second = r.received[1]!;
  const sigs = second.headers["webhook-signature"]!.split(" ");
  assert.equal(sigs.length, 1);
  // The library's own signing, at the attempt's timestamp (verify() would refuse a day-old one).
  const at = new Date(Number(second.headers["webhook-timestamp"]) * 1000);
  assert.equal(sigs[0], new Webhook(secret).sign(second.headers["webhook-id"]!, at, second.body));
  assert.notEqual(
    sigs[0],
    new Webhook(d.secret).sign(second.headers["webhook-id"]!, at, second.body),
  );
});

Deno.test("POST test sends one signed empty delivery now and reports the receiver's answer", async () => {
  const p = await createProject(srv.url);
  const r = receiver();
  const d = await destination(p.productionId, r.url + "/hook?x=1");
  const res = await api("POST", `/projects/${p.productionId}/destinations/${d.id}/test`);
  assert.equal(res.status, 200);
  assert.equal(res.body.status, 204);
  assert.equal(res.body.error, null);
  assert.equal(typeof res.body.duration_ms, "number");
  const got = r.received[0]!;
  assert.deepEqual(JSON.parse(got.body), { schema_version: 1, events: [], test: true });
  new Webhook(d.secret).verify(got.body, got.headers);

  r.answer = () => new Response("nope", { status: 500 });
  const failed = await api("POST", `/projects/${p.productionId}/destinations/${d.id}/test`);
  assert.equal(failed.body.status, 500);
  assert.equal(failed.body.error, "HTTP 500");
  // The state is untouched by tests.
  assert.equal((await status(p.productionId, d.id)).last_attempt_at, null);

  const closed = startReceiver();
  const gone = await destination(p.productionId, closed.url);
  await closed.close();
  const down = await api("POST", `/projects/${p.productionId}/destinations/${gone.id}/test`);
  assert.equal(down.body.status, null);
  assert.match(down.body.error, /network/);
});

Deno.test("a failed batch is retried with the same webhook-id and events, after backoff and Retry-After", async () => {
  const p = await createProject(srv.url);
  const r = receiver((_, n) =>
    n === 1
      ? new Response("busy", { status: 429, headers: { "Retry-After": "120" } })
      : n === 2
      ? new Response(null, { status: 500 })
      : new Response(null, { status: 200 })
  );
  const d = await destination(p.productionId, r.url);
  await capture(srv.sql, p.productionId, p.hashid, ["install", "open"], clock);
  const worker = deliveryWorker(srv, { random: () => 0.999 });
  await worker.drain();
  assert.equal(r.received.length, 1);
  let s = await status(p.productionId, d.id);
  assert.equal(s.last_error, "HTTP 429");
  assert.equal(s.pending, 2);
  clock.advance(119_000);
  await worker.drain();
  assert.equal(r.received.length, 1, "never sooner than Retry-After");
  clock.advance(2_000);
  await worker.drain();
  assert.equal(r.received.length, 2);
  // Second failure: full jitter below 2 s (random 0.999 → just under 2 s).
  clock.advance(1_500);
  await worker.drain();
  assert.equal(r.received.length, 2);
  clock.advance(600);
  await worker.drain();
  assert.equal(r.received.length, 3);
  const ids = new Set(r.received.map((x) => x.headers["webhook-id"]));
  assert.equal(ids.size, 1);
  assert.equal(new Set(r.received.map((x) => x.body)).size, 1);
  s = await status(p.productionId, d.id);
  assert.equal(s.pending, 0);
  assert.equal(s.last_error, null);
});

Deno.test("a destination without success for an hour is failing, and active after the next success", async () => {
  const p = await createProject(srv.url);
  let up = false;
  const r = receiver(() => new Response(null, { status: up ? 204 : 503 }));
  const d = await destination(p.productionId, r.url);
  await capture(srv.sql, p.productionId, p.hashid, ["install"], clock);
  const worker = deliveryWorker(srv, { backoffCapMs: 60_000 });
  const start = clock.now().getTime();
  while (clock.now().getTime() - start < 3600_000 - 120_000) {
    await worker.drain();
    clock.advance(60_000);
  }
  assert.equal((await status(p.productionId, d.id)).state, "active");
  clock.advance(180_000);
  await worker.drain();
  const s = await status(p.productionId, d.id);
  assert.equal(s.state, "failing");
  assert.equal(s.last_error, "HTTP 503");
  up = true;
  clock.advance(60_000);
  await worker.drain();
  assert.equal((await status(p.productionId, d.id)).state, "active");
  clock.set(new Date(start));
});

Deno.test("events that leave the seven days undelivered are counted in dropped, never skipped silently", async () => {
  const p = await createProject(srv.url);
  const r = receiver(() => new Response(null, { status: 500 }));
  const d = await destination(p.productionId, r.url);
  const paused = await destination(p.productionId, r.url, ["install"]);
  await api("PATCH", `/projects/${p.productionId}/destinations/${paused.id}`, { paused: true });
  const start = clock.now();
  await capture(srv.sql, p.productionId, p.hashid, ["install", "open", "install"], clock);
  await deliveryWorker(srv).drain();
  clock.advance(7 * 24 * 3600_000 + 60_000);
  try {
    const fresh = await capture(srv.sql, p.productionId, p.hashid, ["open"], clock);
    // The purge counts the paused destination's drops before it deletes.
    const purged = await purgeExpired(srv.sql, clock.now(), 90);
    assert.ok(purged.feedEvents >= 3);
    assert.equal((await status(p.productionId, paused.id)).dropped, 2);
    assert.equal((await status(p.productionId, paused.id)).pending, 0);
    const s = await status(p.productionId, d.id);
    assert.equal(s.dropped, 3);
    assert.equal(s.pending, 1);
    // The next batch is the surviving event, under a new webhook-id.
    r.answer = () => new Response(null, { status: 204 });
    await deliveryWorker(srv).drain();
    const last = r.received.at(-1)!;
    assert.deepEqual(eventsOf(last).map((e) => e.id), fresh);
    assert.notEqual(last.headers["webhook-id"], r.received[0]!.headers["webhook-id"]);
  } finally {
    clock.set(start);
  }
});

Deno.test("the deliverer counts drops itself when the purge has not run yet", async () => {
  const p = await createProject(srv.url);
  const r = receiver(() => new Response(null, { status: 500 }));
  const d = await destination(p.productionId, r.url);
  const start = clock.now();
  await capture(srv.sql, p.productionId, p.hashid, ["install", "open"], clock);
  await deliveryWorker(srv).drain();
  clock.advance(7 * 24 * 3600_000 + 60_000);
  try {
    await deliveryWorker(srv).drain();
    const s = await status(p.productionId, d.id);
    assert.equal(s.dropped, 2);
    assert.equal(s.pending, 0);
    assert.equal(r.received.length, 1);
  } finally {
    clock.set(start);
  }
});

Deno.test("DELETE stops delivery, and stops capture when nothing else reads", async () => {
  const p = await createProject(srv.url);
  const r = receiver();
  const d = await destination(p.productionId, r.url);
  await capture(srv.sql, p.productionId, p.hashid, ["install"], clock);
  const del = await api("DELETE", `/projects/${p.productionId}/destinations/${d.id}`);
  assert.equal(del.status, 204);
  await deliveryWorker(srv).drain();
  assert.equal(r.received.length, 0);
  const [env] = await srv.sql`
    select capture_started_at from environments where id = ${p.productionId}`;
  assert.equal(env!.capture_started_at, null);
  assertError(
    await api("DELETE", `/projects/${p.productionId}/destinations/${d.id}`),
    404,
    "not_found",
  );

  // With a feed token left, capture goes on.
  const d2 = await destination(p.productionId, r.url);
  await createFeedToken(srv.url, p.productionId);
  await api("DELETE", `/projects/${p.productionId}/destinations/${d2.id}`);
  const [still] = await srv.sql`
    select capture_started_at from environments where id = ${p.productionId}`;
  assert.ok(still!.capture_started_at);
});

Deno.test("private, loopback, link-local and multicast addresses are refused without the flag", async () => {
  const p = await createProject(srv.url);
  for (
    const url of [
      "http://127.0.0.1:9/x",
      "http://localhost:9/x",
      "http://[::1]/",
      "http://10.1.2.3/",
      "http://192.168.0.1/",
      "http://169.254.169.254/latest/meta-data",
      "http://224.0.0.1/",
      "http://0.0.0.0/",
      "http://[::ffff:127.0.0.1]/",
      "http://[fe80::1]/",
      // IPv6 forms that carry a private IPv4 (services/destinations/url.ts, embeddedIPv4).
      "http://[::127.0.0.1]/",
      "http://[::a9fe:a9fe]/latest/meta-data",
      "http://[::ffff:0:a00:1]/",
      "http://[64:ff9b::a9fe:a9fe]/",
      "http://[64:ff9b:1::a00:1]/",
      "http://[2002:a9fe:a9fe::1]/",
      "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
    ]
  ) {
    const res = await api("POST", `/projects/${p.productionId}/destinations`, { url }, strict.url);
    assertError(res, 400, "invalid_field", /^url: /);
  }
  const none = await api("GET", `/projects/${p.productionId}/destinations`);
  assert.deepEqual(none.body.destinations, []);
  // At delivery too: created where allowed, delivered by an instance without the flag.
  const r = receiver();
  const d = await destination(p.productionId, r.url.replace("127.0.0.1", "localhost"));
  const d6 = await destination(p.productionId, r.url.replace("127.0.0.1", "[::127.0.0.1]"));
  await capture(srv.sql, p.productionId, p.hashid, ["install"], clock);
  await deliveryWorker(srv, { allowPrivate: false }).drain();
  assert.equal(r.received.length, 0);
  const s = await status(p.productionId, d.id);
  assert.match(s.last_error, /^refused: localhost resolves to (127\.0\.0\.1|::1)/);
  assert.equal(s.pending, 1);
  const s6 = await status(p.productionId, d6.id);
  assert.match(s6.last_error, /^refused: ::7f00:1 resolves to ::7f00:1, a loopback/);
  assert.equal(s6.pending, 1);
  const t = await api(
    "POST",
    `/projects/${p.productionId}/destinations/${d.id}/test`,
    undefined,
    strict.url,
  );
  assert.equal(t.body.status, null);
  assert.match(t.body.error, /^refused/);
});

Deno.test("redirects are not followed, and long answers are cut at 64 KiB", async () => {
  const p = await createProject(srv.url);
  const target = receiver();
  const r = receiver(() =>
    new Response(null, { status: 307, headers: { Location: target.url + "/elsewhere" } })
  );
  const d = await destination(p.productionId, r.url);
  await capture(srv.sql, p.productionId, p.hashid, ["install"], clock);
  await deliveryWorker(srv).drain();
  assert.equal(r.received.length, 1);
  assert.equal(target.received.length, 0);
  assert.equal((await status(p.productionId, d.id)).last_error, "HTTP 307");

  // A receiver answering 2xx with a never-ending body: success as soon as 64 KiB were read.
  const chunk = new Uint8Array(16 * 1024);
  r.answer = () =>
    new Response(new ReadableStream({ pull: (c) => c.enqueue(chunk) }), { status: 200 });
  clock.advance(5_000);
  await deliveryWorker(srv).drain();
  assert.equal((await status(p.productionId, d.id)).pending, 0);
});

Deno.test("bad bodies and parameters of the destination routes are 4xx with the error body", async () => {
  const p = await createProject(srv.url);
  const r = receiver();
  const d = await destination(p.productionId, r.url);
  const base = `/projects/${p.productionId}/destinations`;
  const malformed = await call(srv.url, "POST", `/api/v1${base}`, {
    headers: { ...adminHeaders, "Content-Type": "application/json" },
    raw: "{nope",
  });
  assertError(malformed, 400, "malformed_json");
  assertError(await api("POST", base, {}), 400, "invalid_field", /url/);
  assertError(await api("POST", base, { url: "ftp://x.example" }), 400, "invalid_field", /url/);
  assertError(
    await api("POST", base, { url: "http://user:pw@example.com/" }),
    400,
    "invalid_field",
    /credentials/,
  );
  assertError(
    await api("POST", base, { url: r.url, event_types: "install" }),
    400,
    "invalid_field",
    /event_types/,
  );
  assertError(
    await api("POST", base, { url: r.url, event_types: [3] }),
    400,
    "invalid_field",
    /event_types\[0\]/,
  );
  assertError(
    await api("POST", base, { url: r.url, event_types: ["nope"] }),
    400,
    "invalid_event_type",
  );
  assertError(await api("POST", "/projects/999999/destinations", { url: r.url }), 404, "not_found");
  assertError(await api("GET", "/projects/abc/destinations"), 404, "not_found");
  assertError(await api("PATCH", `${base}/${d.id}`, {}), 400, "invalid_field", /paused/);
  assertError(await api("PATCH", `${base}/${d.id}`, { paused: "yes" }), 400, "invalid_field");
  for (const id of ["999999", "abc", "0", "1e3", "99999999999999"]) {
    assertError(await api("PATCH", `${base}/${id}`, { paused: true }), 404, "not_found");
    assertError(await api("POST", `${base}/${id}/rotate_secret`), 404, "not_found");
    assertError(await api("POST", `${base}/${id}/test`), 404, "not_found");
    assertError(await api("DELETE", `${base}/${id}`), 404, "not_found");
  }
  // Another environment's destination is not found through this one.
  assertError(
    await api("POST", `/projects/${p.testId}/destinations/${d.id}/test`),
    404,
    "not_found",
  );
  for (
    const [method, path] of [
      ["GET", base],
      ["POST", base],
      ["PATCH", `${base}/${d.id}`],
      ["POST", `${base}/${d.id}/rotate_secret`],
      ["POST", `${base}/${d.id}/test`],
      ["DELETE", `${base}/${d.id}`],
    ] as const
  ) {
    const body = method === "GET" ? undefined : {};
    assertError(await call(srv.url, method, `/api/v1${path}`, { body }), 401, "unauthorized");
  }
  // Nothing changed: still one destination, unpaused, its secret unchanged.
  const s = await status(p.productionId, d.id);
  assert.equal(s.state, "active");
  assert.equal((await api("GET", base)).body.destinations.length, 1);
});

Deno.test("secrets a migration generated are sealed by the first instance to start", async () => {
  const p = await createProject(srv.url);
  const r = receiver();
  const d = await destination(p.productionId, r.url);
  const legacy = "whsec_" + btoa("0123456789abcdef0123456789abcdef");
  await srv.sql`update destinations set secret_sealed = ${"plain:" + legacy} where id = ${d.id}`;
  await sealMigratedSecrets(srv.sql, CURSOR_SECRET);
  const [row] = await srv.sql`select secret_sealed from destinations where id = ${d.id}`;
  assert.match(row!.secret_sealed, /^v1:/);
  await capture(srv.sql, p.productionId, p.hashid, ["install"], clock);
  await deliveryWorker(srv).drain();
  new Webhook(legacy).verify(r.received[0]!.body, r.received[0]!.headers);
});

Deno.test("one instance at a time: a live lease keeps others off; an expired one is taken over", async () => {
  const p = await createProject(srv.url);
  let hang = true;
  const r = receiver(() => hang ? "hang" : new Response(null, { status: 204 }));
  await destination(p.productionId, r.url);
  const ids = await capture(srv.sql, p.productionId, p.hashid, ["install", "open"], clock);
  const a = deliveryWorker(srv, { instanceId: "a", timeoutMs: 60_000 });
  const b = deliveryWorker(srv, { instanceId: "b" });
  const aRun = a.drain();
  while (r.received.length === 0) await new Promise((res) => setTimeout(res, 10));
  await b.drain();
  assert.equal(r.received.length, 1, "b must not deliver while a holds the lease");
  // a stalls (as a dead process would); its lease lapses 20 s later.
  clock.advance(21_000);
  hang = false;
  await b.drain();
  assert.equal(r.received.length, 2);
  assert.equal(r.received[1]!.headers["webhook-id"], r.received[0]!.headers["webhook-id"]);
  assert.deepEqual(eventsOf(r.received[1]!).map((e) => e.id), ids);
  await r.close();
  await aRun;
});

Deno.test("teardown", async () => {
  for (const r of receivers) await r.close().catch(() => {});
  await strict.close();
  await srv.close();
});
