import assert from "node:assert/strict";
import { resolveConfig } from "../config.ts";
import { connect } from "../db/connect.ts";
import { createApp } from "../app.ts";
import { ManualClock } from "./helpers/clock.ts";
import { createLogger } from "../services/log.ts";
import { hashSecret } from "../services/secrets.ts";
import { ViewRecorder } from "../services/view_recorder.ts";
import { ADMIN_TOKEN, adminHeaders, call } from "./helpers/server.ts";

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
    assert.ok(lines.some((l) => l.includes('"msg":"database unavailable"')));
    assert.ok(!lines.some((l) => l.includes("pk_x") || l.includes("est_x")));
  } finally {
    controller.abort();
    await server.finished;
    await sql.end({ timeout: 1 });
  }
});
