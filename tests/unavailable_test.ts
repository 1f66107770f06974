import assert from "node:assert/strict";
import { resolveConfig } from "../config.ts";
import { onCitus } from "../db/cluster.ts";
import { connect } from "../db/connect.ts";
import { createApp } from "../app.ts";
import { ManualClock } from "./helpers/clock.ts";
import { createLogger } from "../infra/log.ts";
import { hashSecret } from "../infra/secrets.ts";
import { ViewRecorder } from "../services/link_host/view_recorder.ts";
import { gql } from "./helpers/graphql.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  assertError,
  call,
  createProject,
  startTestServer,
} from "./helpers/server.ts";
import { generateLinkCall } from "./helpers/sdk.ts";

Deno.test("with the database down, requests answer 503 unavailable, never 500, and say why in the log", async () => {
  // Nothing listens on port 1: every query fails to connect.
  const sql = connect("postgres://postgres@127.0.0.1:1/none", 1);
  const lines: string[] = [];
  const logger = createLogger("info", (l) => lines.push(l));
  const app = createApp({
    sql,
    config: resolveConfig({ DATABASE_URL: "postgres://x/y", ADMIN_TOKEN }),
    clock: new ManualClock(),
    logger,
    adminTokenHash: hashSecret(ADMIN_TOKEN),
    cursorSecret: "x".repeat(32),
    views: new ViewRecorder(sql, { clock: new ManualClock(), linkBaseUrl: "http://x", logger }),
  });
  const controller = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: controller.signal, onListen() {} },
    app.fetch,
  );
  const base = `http://127.0.0.1:${server.addr.port}`;
  try {
    const ready = await call(base, "GET", "/readyz");
    assert.equal(ready.status, 503);
    assert.equal(ready.body.error.code, "unavailable");
    assert.equal((await call(base, "GET", "/healthz")).status, 200);
    const cases: [string, string, Record<string, string>][] = [
      ["GET", "/api/v1/sdk/link/abc", { "PROJECT-KEY": "pk_x", ENVIRONMENT: "production" }],
      ["GET", "/api/v1/admin/projects/abc", adminHeaders],
      ["GET", "/api/v1/projects/1/event_stream", { Authorization: "Bearer est_x" }],
    ];
    for (const [method, path, headers] of cases) {
      const res = await call(base, method, path, { headers });
      assert.equal(res.status, 503, `${path}: ${res.text}`);
      assert.deepEqual(res.body.error, {
        status: 503,
        code: "unavailable",
        message: "the service is unavailable; retry with backoff",
      });
      assert.equal(res.headers.get("retry-after"), "1");
    }
    // GraphQL answers the same outage with a retryable code and the same Retry-After meaning.
    const graphql = await gql(base, '{ link(path: "abcdefgh") { path } }', {
      headers: { "PROJECT-KEY": "pk_x", ENVIRONMENT: "production" },
    });
    assert.equal(graphql.errors?.length, 1);
    assert.equal(graphql.errors![0].message, "the service is unavailable; retry with backoff");
    assert.deepEqual(graphql.errors![0].extensions, {
      code: "UNAVAILABLE",
      reason: "unavailable",
      retryAfter: 1,
    });
    assert.ok(lines.some((l) => l.includes('"msg":"database unavailable"')));
    assert.ok(!lines.some((l) => l.includes("pk_x") || l.includes("est_x")));
  } finally {
    controller.abort();
    await server.finished;
    await sql.end({ timeout: 1 });
  }
});

Deno.test("a value PostgreSQL refuses (a data exception) is 400 on REST and BAD_USER_INPUT on GraphQL", async () => {
  const server = await startTestServer();
  try {
    const project = await createProject(server.url);
    // A real data exception from the real database: a trigger refusing every new link's
    // counters (written with the link, in its transaction) with SQLSTATE 22023, as PostgreSQL
    // does for a value it cannot store. On the counters, not the links: on Citus links are a
    // reference table, which takes no trigger, and the counters a distributed one, which does
    // once allowed (the error then comes from the worker, relayed with its code).
    // One statement a query: Citus refused the two in one ("cannot insert multiple commands into a
    // prepared statement", as it passed the DDL on to the workers).
    await server.sql.begin(async (tx) => {
      if (onCitus()) await tx.unsafe("set local citus.enable_unsafe_triggers to on");
      await tx.unsafe(`
        create function refuse_link() returns trigger language plpgsql as $$
        begin raise exception 'refused' using errcode = '22023'; end $$`);
      await tx.unsafe(`
        create trigger refuse_link before insert on link_counters
          for each row execute function refuse_link()`);
    });
    const rest = await generateLinkCall(server.url, project.key, "production", { title: "x" });
    assertError(rest, 400, "invalid_field", /^a value in the request cannot be stored$/);
    const graphql = await gql(
      server.url,
      'mutation { generateLink(input: { title: "x" }) { url } }',
      { headers: { "PROJECT-KEY": project.key, ENVIRONMENT: "production" } },
    );
    assert.equal(graphql.errors?.length, 1);
    assert.equal(graphql.errors![0].message, "a value in the request cannot be stored");
    assert.deepEqual(graphql.errors![0].extensions, {
      code: "BAD_USER_INPUT",
      reason: "invalid_field",
    });
    const [count] = await server.sql`select count(*)::int as n from links`;
    assert.equal(count!.n, 0);
  } finally {
    await server.close();
  }
});
