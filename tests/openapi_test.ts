import assert from "node:assert/strict";
import { OPENAPI_DOCUMENT } from "../rest/openapi.ts";
import { call, createProject, startTestServer } from "./helpers/server.ts";
import { MAX_EVENTS } from "../inputs/events.ts";
import { MAX_TITLE } from "../inputs/links.ts";
import { ERROR_STATUS } from "../services/errors.ts";
import { FEED_EVENT_TYPES, INGESTED_EVENT_TYPES } from "../services/feed/envelope.ts";
import { LINK_ENVIRONMENTS } from "../services/access/sdk_auth.ts";
import { createApp } from "../app.ts";
import { OpenApiConformance } from "./helpers/openapi_conformance.ts";

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

// The document as a client reads it (JSON), without the literal types of the module.
// deno-lint-ignore no-explicit-any
const doc: any = JSON.parse(JSON.stringify(OPENAPI_DOCUMENT));

type Operation = {
  operationId?: string;
  security?: unknown[];
  responses: Record<string, unknown>;
  parameters?: { name: string; in: string; schema: { enum?: string[] } }[];
};
const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
  Object.entries(ops as Record<string, Operation>).map(([method, op]) => ({
    name: `${method.toUpperCase()} ${path}`,
    op,
  }))
);

Deno.test("every operation has a unique operationId, security and a 4xx answer", () => {
  assert.ok(operations.length >= 30, `only ${operations.length} operations`);
  const ids = operations.map(({ op }) => op.operationId);
  assert.deepEqual(ids.filter((id) => typeof id !== "string" || !/^[a-z][A-Za-z]+$/.test(id)), []);
  assert.equal(new Set(ids).size, ids.length, "operationIds repeat");
  assert.deepEqual(
    operations.filter(({ op }) => !Array.isArray(op.security)).map((o) => o.name),
    [],
  );
  assert.deepEqual(
    operations.filter(({ op }) => !Object.keys(op.responses).some((s) => /^4\d\d$/.test(s)))
      .map((o) => o.name),
    [],
  );
  // Only operations and the link host are public; every /api/ route names its credential.
  const publicApi = operations.filter(({ name, op }) =>
    name.includes(" /api/") && op.security!.length === 0
  );
  assert.deepEqual(publicApi.map((o) => o.name), []);
  assert.ok(doc.servers.length > 0);
  assert.ok(doc.info.license.name);
});

Deno.test("closed sets are enums: ENVIRONMENT, event types, error codes", () => {
  const schemas = doc.components.schemas;
  assert.deepEqual(schemas.Error.properties.error, {
    type: "object",
    properties: {
      status: { type: "integer" },
      code: { type: "string", enum: Object.keys(ERROR_STATUS) },
      message: { type: "string" },
    },
    required: ["status", "code", "message"],
  });
  assert.deepEqual(schemas.FeedEvent.properties.type.enum, [...FEED_EVENT_TYPES]);
  const environments = Object.fromEntries(
    operations.flatMap(({ name, op }) =>
      (op.parameters ?? []).filter((p) => p.name === "ENVIRONMENT").map((p) => [name, p])
    ),
  );
  assert.deepEqual(environments["POST /api/v1/sdk/generate_link"]!.schema.enum, [
    ...LINK_ENVIRONMENTS.keys(),
  ]);
  assert.deepEqual(environments["GET /api/v1/sdk/metrics_for_project"]!.schema.enum, [
    "production",
    "test",
  ]);
  assert.equal(Object.keys(environments).length, 4);
  const feed503 = doc.paths["/api/v1/projects/{project_id}/event_stream"].get
    .responses[503];
  assert.equal(feed503.headers["Retry-After"].schema.type, "integer");
});

Deno.test("tags are arrays of strings in Link, ManagedLink and LinkMetrics", () => {
  const schemas = doc.components.schemas;
  for (const name of ["Link", "ManagedLink", "LinkMetrics"]) {
    assert.deepEqual(schemas[name].properties.tags, {
      type: "array",
      items: { type: "string" },
    }, name);
  }
});

Deno.test("Link and LinkMetrics mark what is always present as required", () => {
  const { Link, LinkMetrics } = doc.components.schemas;
  assert.deepEqual([...Link.required as string[]].sort(), Object.keys(Link.properties).sort());
  // The contract lets a metrics item without a campaign leave tracking_campaign out.
  assert.deepEqual(
    [...LinkMetrics.required as string[]].sort(),
    Object.keys(LinkMetrics.properties).filter((k) => k !== "tracking_campaign").sort(),
  );
});

Deno.test("request bodies are the schemas the handlers parse with", async () => {
  const schemas = doc.components.schemas;
  // Limits come from inputs/: the same constants the validation enforces.
  const generate = schemas.GenerateLinkBody.properties as Record<string, { maxLength?: number }>;
  assert.equal(generate.title!.maxLength, MAX_TITLE);
  const ingestBody = schemas.IngestBody.properties.events as { maxItems: number };
  assert.equal(ingestBody.maxItems, MAX_EVENTS);
  const event = schemas.IngestedEvent.properties as Record<string, { enum?: string[] }>;
  assert.deepEqual(event.type!.enum, [...INGESTED_EVENT_TYPES]);
  assert.deepEqual(schemas.IosApp.required, ["team_id", "bundle_id"]);

  // And the server refuses what the document says it refuses: a title over the maxLength.
  const project = await createProject(srv.url);
  const res = await call(srv.url, "POST", "/api/v1/sdk/generate_link", {
    headers: { "PROJECT-KEY": project.key, ENVIRONMENT: "production" },
    body: { title: "t".repeat(generate.title!.maxLength! + 1) },
  });
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.error.code, "invalid_field");
});

Deno.test("deno task openapi writes the served document", async () => {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "openapi", file],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const served = await call(srv.url, "GET", "/openapi.json");
    assert.deepEqual(JSON.parse(await Deno.readTextFile(file)), served.body);
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("the suite-wide check refuses an answer that drifts from the document", async () => {
  const check = new OpenApiConformance();
  const list = new Request("http://127.0.0.1/api/v1/admin/projects");
  const project = {
    id: "abc",
    name: "A",
    enterprise: false,
    created_at: "2026-01-01T00:00:00.000Z",
    environments: { production: { project_id: 1 }, test: { project_id: 2 } },
    sdk_limits: { per_key: 100_000, per_address: 10_000 },
    reporting_currency: "USD",
    attribution_window_days: 30,
    attribution_model: "first_touch",
  };
  // The list as it was answered before link_domain and apps were read: refused, naming them.
  check.observe(list, Response.json({ projects: [project] }));
  await assert.rejects(() => check.settle(), /required property 'link_domain'/);
  check.observe(list, Response.json({ projects: [{ ...project, link_domain: null, apps: {} }] }));
  await check.settle();
  // A status the operation does not document, and a route the document lacks.
  check.observe(list, Response.json({ error: {} }, { status: 418 }));
  check.observe(new Request("http://127.0.0.1/api/v1/nowhere"), Response.json({}));
  await assert.rejects(() => check.settle(), /status 418 is not documented[^]*not in \/openapi/);
  // This file's own server has been checked all along.
  await call(srv.url, "GET", "/healthz");
  assert.ok(srv.conformance.checked > 0);
});
