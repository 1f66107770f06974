// GraphQL's WebSockets are bounded, with real sockets against the real server: connection_init in
// time, no socket kept without a subscription, and caps per client address (IPv6 by /64) and per
// instance, refused before the upgrade. The live tail's own 2-stream limit is graphql_ws_test's.
import assert from "node:assert/strict";
import { createFeedToken, createProject, serveApp } from "./helpers/server.ts";
import { createTestDatabase } from "./helpers/database.ts";

const db = await createTestDatabase();
const INIT_MS = 300;
const IDLE_MS = 600;
// Short timeouts, to watch them act; caps on another instance with the default timeouts.
const timed = serveApp(db, {
  config: {
    GRAPHQL_WS_INIT_TIMEOUT_MS: String(INIT_MS),
    GRAPHQL_WS_IDLE_TIMEOUT_MS: String(IDLE_MS),
  },
});
const capped = serveApp(db, {
  sql: db.embedded ? timed.sql : undefined,
  config: {
    TRUST_PROXY: "true",
    GRAPHQL_WS_MAX_PER_ADDRESS: "3",
    GRAPHQL_WS_MAX_CONNECTIONS: "6",
  },
});
Deno.test.afterAll(async () => {
  await capped.close();
  await timed.close();
  await db.close();
});

interface Socket {
  ws: WebSocket;
  /** "open" once upgraded, "refused" when the upgrade was answered otherwise. */
  opened: Promise<"open" | "refused">;
  closed: Promise<{ code: number; reason: string; afterMs: number }>;
  messages: Record<string, unknown>[];
  /** The next message of `type` (already received or to come). */
  next(type: string): Promise<Record<string, unknown>>;
  send(message: Record<string, unknown>): void;
}

function connect(base: string, address?: string): Socket {
  const started = performance.now();
  // Deno's WebSocket takes headers: the address the trusted proxy would have appended.
  const ws = new WebSocket(base.replace(/^http/, "ws") + "/graphql", {
    protocols: ["graphql-transport-ws"],
    ...(address ? { headers: { "X-Forwarded-For": address } } : {}),
  } as unknown as string[]);
  const messages: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  ws.onmessage = (e) => {
    messages.push(JSON.parse(String(e.data)));
    waiters.splice(0).forEach((w) => w());
  };
  let wasOpen = false;
  const opened = new Promise<"open" | "refused">((resolve) => {
    ws.onopen = () => {
      wasOpen = true;
      resolve("open");
    };
    ws.addEventListener("close", () => resolve(wasOpen ? "open" : "refused"));
  });
  ws.onerror = () => {};
  const closed = new Promise<{ code: number; reason: string; afterMs: number }>((resolve) => {
    ws.addEventListener("close", (e) => {
      waiters.splice(0).forEach((w) => w());
      resolve({ code: e.code, reason: e.reason, afterMs: performance.now() - started });
    });
  });
  return {
    ws,
    opened,
    closed,
    messages,
    async next(type) {
      for (;;) {
        const found = messages.find((m) => m.type === type);
        if (found) return found;
        if (ws.readyState === WebSocket.CLOSED) throw new Error(`closed before ${type}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    send: (message) => ws.send(JSON.stringify(message)),
  };
}

/** `promise`, or a rejection when it takes longer than `ms` (a socket that is never closed). */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function initialised(base: string, address?: string): Promise<Socket> {
  const s = connect(base, address);
  assert.equal(await s.opened, "open");
  s.send({ type: "connection_init" });
  await s.next("connection_ack");
  return s;
}

async function closeAll(sockets: Socket[]) {
  for (const s of sockets) s.ws.close();
  await Promise.all(sockets.map((s) => s.closed));
}

/** The upgrade request a WebSocket client sends, by fetch: its answer when it is refused. */
function upgrade(base: string, address: string) {
  return fetch(base + "/graphql", {
    headers: {
      Upgrade: "websocket",
      Connection: "Upgrade",
      "Sec-WebSocket-Version": "13",
      "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
      "Sec-WebSocket-Protocol": "graphql-transport-ws",
      "X-Forwarded-For": address,
    },
  });
}

Deno.test("a socket that sends no connection_init is closed with 4408 after GRAPHQL_WS_INIT_TIMEOUT_MS", async () => {
  const s = connect(timed.url);
  assert.equal(await s.opened, "open");
  // The configured 300 ms, not graphql-ws's default of 3 s.
  const closed = await within(s.closed, 2_000, "closed for want of connection_init");
  assert.equal(closed.code, 4408);
  assert.ok(closed.afterMs >= INIT_MS - 50, String(closed.afterMs));
  assert.deepEqual(s.messages, []);
});

Deno.test("an acknowledged socket with no subscription is closed after GRAPHQL_WS_IDLE_TIMEOUT_MS; pings do not keep it", async () => {
  const s = await initialised(timed.url);
  const pings = setInterval(() => {
    if (s.ws.readyState === WebSocket.OPEN) s.send({ type: "ping" });
  }, IDLE_MS / 6);
  try {
    const closed = await within(s.closed, 5_000, "closed when idle");
    assert.equal(closed.code, 1000);
    assert.equal(closed.reason, "idle: no subscription");
    assert.ok(closed.afterMs >= IDLE_MS - 50, String(closed.afterMs));
    assert.ok(s.messages.some((m) => m.type === "pong"), "pings were answered meanwhile");
  } finally {
    clearInterval(pings);
  }
  // An operation that fails at once (no credentials) leaves it idle all the same.
  const refused = await initialised(timed.url);
  refused.send({
    id: "1",
    type: "subscribe",
    payload: { query: `subscription { eventFeed(projectId: "1") { cursor } }` },
  });
  const after = await within(refused.closed, 5_000, "closed when idle");
  assert.equal(after.code, 1000, JSON.stringify(refused.messages));
  assert.match(JSON.stringify(refused.messages), /UNAUTHENTICATED/);
});

Deno.test("a running subscription holds its socket past the idle timeout; its end starts the timeout", async () => {
  const p = await createProject(timed.url, { enterprise: true });
  const token = await createFeedToken(timed.url, p.productionId);
  const s = connect(timed.url);
  assert.equal(await s.opened, "open");
  s.send({ type: "connection_init", payload: { Authorization: `Bearer ${token.value}` } });
  await s.next("connection_ack");
  s.send({
    id: "feed",
    type: "subscribe",
    payload: {
      query: `subscription($p: ID!) { eventFeed(projectId: $p) { cursor } }`,
      variables: { p: String(p.productionId) },
    },
  });
  // Three idle timeouts with the subscription running: the socket stays.
  await new Promise((resolve) => setTimeout(resolve, 3 * IDLE_MS));
  assert.equal(s.ws.readyState, WebSocket.OPEN);
  assert.ok(!s.messages.some((m) => m.type === "error"), JSON.stringify(s.messages));
  const ended = performance.now();
  s.send({ id: "feed", type: "complete" });
  const closed = await within(s.closed, 5_000, "closed when idle");
  assert.equal(closed.reason, "idle: no subscription");
  assert.ok(performance.now() - ended >= IDLE_MS - 50);
});

Deno.test("sockets are capped per client address (IPv6 by /64) and per instance, refused with 503 before the upgrade", async () => {
  const held: Socket[] = [];
  try {
    for (let i = 0; i < 3; i++) held.push(await initialised(capped.url, "203.0.113.1"));
    // The address's fourth: refused before the upgrade, with the reason and Retry-After.
    const refused = await upgrade(capped.url, "203.0.113.1");
    assert.equal(refused.status, 503);
    assert.ok(Number(refused.headers.get("retry-after")) > 0);
    const body = await refused.json();
    assert.equal(body.errors[0].extensions.code, "RATE_LIMITED");
    assert.match(body.errors[0].message, /from this address/);
    assert.equal(await connect(capped.url, "203.0.113.1").opened, "refused");
    // One /64 is one address.
    held.push(await initialised(capped.url, "2001:db8:7:1::1"));
    held.push(await initialised(capped.url, "2001:db8:7:1::2"));
    held.push(await initialised(capped.url, "2001:db8:7:1:ffff::3"));
    const sameNet = await upgrade(capped.url, "2001:db8:7:1::4");
    assert.equal(sameNet.status, 503);
    await sameNet.body?.cancel();
    // Six open on the instance: a seventh, from an address with none, is refused too.
    const full = await upgrade(capped.url, "198.51.100.9");
    assert.equal(full.status, 503);
    assert.match((await full.json()).errors[0].message, /on this server/);
    // A closed socket frees its place, in both counts.
    const first = held.shift()!;
    first.ws.close();
    await first.closed;
    held.push(await initialised(capped.url, "203.0.113.1"));
    // Another instance counts its own sockets.
    const other = await initialised(timed.url);
    held.push(other);
  } finally {
    await closeAll(held);
  }
});
