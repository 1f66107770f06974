import assert from "node:assert/strict";
import { OPENAPI_DOCUMENT } from "../rest/openapi.ts";
import { call, startTestServer } from "./helpers/server.ts";
import { createApp } from "../app.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

Deno.test("GET /openapi.json serves an OpenAPI 3.1 document", async () => {
  const res = await call(srv.url, "GET", "/openapi.json");
  assert.equal(res.status, 200);
  assert.equal(res.body.openapi, "3.1.0");
  assert.ok(res.body.paths["/api/v1/projects/{project_id}/event_stream"].get);
});

Deno.test("every REST route the app serves is described in /openapi.json", () => {
  const app = createApp({
    sql: srv.sql,
    config: srv.config,
    clock: srv.clock,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    adminTokenHash: "",
    cursorSecret: "x".repeat(32),
    views: srv.views,
  });
  const documented = new Set(
    Object.entries(OPENAPI_DOCUMENT.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)
    ),
  );
  const served = [
    ...new Set(
      app.routes
        .filter((r) => r.method !== "ALL" && !r.path.endsWith("*") && r.path !== "/graphql")
        // The dashboard's HTML pages are for people, not part of the REST API.
        .filter((r) => !r.path.startsWith("/dashboard"))
        .map((r) => `${r.method} ${r.path.replace(/:([a-z_]+)/g, "{$1}")}`)
        .filter((r) => !r.startsWith("HEAD ")),
    ),
  ];
  assert.ok(served.length >= 15, `too few routes listed: ${served.join(", ")}`);
  const missing = served.filter((r) => !documented.has(r));
  assert.deepEqual(missing, []);
});
