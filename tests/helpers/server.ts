import assert from "node:assert/strict";
// The real app on a random loopback port, over a test database, with a clock the test moves.
import { type Config, resolveConfig } from "../../config.ts";
import type { Sql } from "../../db/connect.ts";
import { createApp } from "../../app.ts";
import { ManualClock } from "./clock.ts";
import { silentLogger } from "./clock.ts";
import type { Logger } from "../../infra/log.ts";
import { GeoIpDatabase } from "../../services/link_host/geoip.ts";
import { hashSecret } from "../../infra/secrets.ts";
import { ViewRecorder } from "../../services/link_host/view_recorder.ts";
import type { AppDeps } from "../../services/deps.ts";
import type { FeedWakeup } from "../../services/feed/wakeup.ts";
import { LiveTails } from "../../services/feed/live_tail.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";
import { OpenApiConformance } from "./openapi_conformance.ts";

export const ADMIN_TOKEN = "test-admin-token-0123456789abcdefgh";
export const CURSOR_SECRET = "test-cursor-secret-0123456789abcdefghij";
export const LINK_BASE_URL = "https://lnk.example.test";

export interface TestServer {
  url: string;
  sql: Sql;
  clock: ManualClock;
  config: Config;
  /** Link-host views are written behind the response: flush before counting them. */
  views: ViewRecorder;
  /** The instance's live-tail streams (closed by close(), as main.ts does at shutdown). */
  liveTails: LiveTails;
  /** The app it serves (its registered routes, for the access table's test). */
  app: ReturnType<typeof createApp>;
  /** Checks every JSON answer against /openapi.json; close() throws on a mismatch. */
  conformance: OpenApiConformance;
  close(): Promise<void>;
}

export interface TestResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** Serves a fresh app over `db` (another instance when called twice on one database). */
export function serveApp(
  db: TestDatabase,
  options: {
    clock?: ManualClock;
    config?: Record<string, string>;
    sql?: Sql;
    /** Capture notifications for live tails; without, they poll (`livePollMs`). */
    wakeup?: FeedWakeup;
    livePollMs?: number;
    /** The app's logger (by default one that writes nothing). */
    logger?: Logger;
    /** The loopback port to serve on (a free one by default). */
    port?: number;
  } = {},
): TestServer {
  const config = resolveConfig({
    DATABASE_URL: db.url,
    ADMIN_TOKEN,
    LINK_BASE_URL,
    ...options.config,
  });
  const clock = options.clock ?? new ManualClock(new Date());
  const sql = options.sql ?? db.pool();
  const logger = options.logger ?? silentLogger;
  const views = new ViewRecorder(sql, { clock, linkBaseUrl: config.linkBaseUrl, logger });
  const deps: AppDeps = {
    sql,
    config,
    clock,
    logger,
    // As main.ts opens it: GEOIP_DATABASE in `config` is the test's own small database.
    geoip: config.geoipDatabase ? new GeoIpDatabase(config.geoipDatabase) : null,
    adminTokenHash: hashSecret(ADMIN_TOKEN),
    cursorSecret: config.cursorSecret ?? CURSOR_SECRET,
    views,
  };
  const liveTails = new LiveTails(deps, {
    wakeup: options.wakeup ?? null,
    ...(options.livePollMs === undefined ? {} : { pollMs: options.livePollMs }),
  });
  const app = createApp({ ...deps, liveTails });
  const conformance = new OpenApiConformance();
  const controller = new AbortController();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
    signal: controller.signal,
    onListen() {},
  }, async (req, info) => conformance.observe(req, await app.fetch(req, info)));
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    sql,
    clock,
    config,
    views,
    liveTails,
    app,
    conformance,
    async close() {
      await liveTails.close();
      controller.abort();
      await server.finished;
      await views.flush();
      await conformance.settle();
    },
  };
}

/** One test file's world: a fresh database and one app over it. */
export async function startTestServer(
  options: {
    clock?: ManualClock;
    config?: Record<string, string>;
    logger?: Logger;
    port?: number;
  } = {},
): Promise<TestServer & { db: TestDatabase }> {
  const db = await createTestDatabase();
  const server = serveApp(db, options);
  return {
    ...server,
    db,
    async close() {
      await server.close();
      await db.close();
    },
  };
}

/** A loopback port free now, for a server whose URL must be known before it starts. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Calls the server and always reads the body (JSON when it is JSON). */
// deno-lint-ignore no-explicit-any
export async function call<T = any>(
  base: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; raw?: string } = {},
): Promise<TestResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["Content-Type"] ??= "application/json";
  }
  const res = await fetch(base + path, { method, headers, body, redirect: "manual" });
  const text = await res.text();
  let parsed: unknown = text;
  if (res.headers.get("content-type")?.includes("application/json")) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** Asserts the contract's error body, whole: status, code and a non-empty message. */
export function assertError(
  res: { status: number; body: unknown },
  status: number,
  code: string,
  message?: RegExp,
): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  const body = res.body as { error: { status: number; code: string; message: string } };
  assert.deepEqual(Object.keys(body), ["error"]);
  assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "status"]);
  assert.equal(body.error.status, status);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, "string");
  assert.ok(body.error.message.length > 0);
  if (message) assert.match(body.error.message, message);
}

export const adminHeaders = { Authorization: `Bearer ${ADMIN_TOKEN}` };

/** Creates a project through the admin API; returns its ids and key. */
export async function createProject(
  base: string,
  input: { name?: string; enterprise?: boolean } = {},
): Promise<{ hashid: string; key: string; productionId: number; testId: number }> {
  const res = await call(base, "POST", "/api/v1/admin/projects", {
    headers: adminHeaders,
    body: { name: input.name ?? "Acme", enterprise: input.enterprise ?? true },
  });
  if (res.status !== 201) throw new Error(`project creation failed: ${res.text}`);
  const p = res.body.project;
  return {
    hashid: p.id,
    key: p.project_key,
    productionId: p.environments.production.project_id,
    testId: p.environments.test.project_id,
  };
}

/** Creates a feed token through the admin API; returns its id and value. */
export async function createFeedToken(
  base: string,
  projectId: number,
  name = "warehouse",
): Promise<{ id: number; value: string }> {
  const res = await call(base, "POST", `/api/v1/projects/${projectId}/event_stream_tokens`, {
    headers: adminHeaders,
    body: { name },
  });
  if (res.status !== 201) throw new Error(`token creation failed: ${res.text}`);
  return { id: res.body.token.id, value: res.body.token.value };
}
