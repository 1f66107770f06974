// The MCP server (POST /mcp, rest/mcp.ts) driven by the official SDK's client over HTTP, against
// two instances over one database: every tool listed and called, its answers equal to REST's for
// the same request and conforming to its output schema (the SDK client checks them), every
// change audited as the key's; every refusal: a scope the key lacks, another environment, a
// revoked or expired key (on both instances), no key or not a key (before any server is built).
import assert from "node:assert/strict";
import { OPENAPI_DOCUMENT } from "../rest/openapi.ts";
import { managedLinkSchema } from "../rest/openapi_schemas.ts";
import { MCP_TOOLS } from "../rest/mcp_tools.ts";
import { MAX_BATCH_REQUESTS } from "../rest/mcp.ts";
import { PERMISSIONS } from "../services/access/permissions.ts";
import { readPng } from "./helpers/qr.ts";
import { ManualClock } from "./helpers/clock.ts";
import { createTestDatabase } from "./helpers/database.ts";
import {
  callError,
  callOk,
  callTool,
  createKey,
  INITIALIZE,
  MCP_POST_HEADERS,
  mcpClient,
  postMcp,
} from "./helpers/mcp.ts";
import { ingest } from "./helpers/sdk.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  assertError,
  call,
  createProject,
  serveApp,
} from "./helpers/server.ts";

const db = await createTestDatabase();
const clock = new ManualClock("2026-05-01T10:00:00Z");
const srv = serveApp(db, { clock });
// A second instance over the same database: any request may reach either.
const other = serveApp(db, { clock, sql: db.embedded ? srv.sql : undefined });
const both = [srv.url, other.url];
Deno.test.afterAll(async () => {
  await other.close();
  await srv.close();
  await db.close();
});

const project = await createProject(srv.url, { name: "Agents" });
const env = project.productionId;
const full = await createKey(srv.url, env, ["links:read", "links:write", "analytics:read"]);
const reader = await createKey(srv.url, env, ["links:read"]);
const analyst = await createKey(srv.url, env, ["analytics:read"]);
const exporter = await createKey(srv.url, env, ["events:read"]);
// The same project's test environment: another environment, the same people.
const testEnvKey = await createKey(srv.url, project.testId, ["links:read", "links:write"]);

const ALL_TOOLS = [
  "list_links",
  "get_link",
  "create_link",
  "update_link",
  "archive_link",
  "delete_link",
  "link_qr",
  "analytics",
  "funnel",
  "split_results",
];

const restLinks = async (query = "") => {
  const res = await call(srv.url, "GET", `/api/v1/projects/${env}/links${query}`, {
    headers: adminHeaders,
  });
  assert.equal(res.status, 200, res.text);
  return res.body;
};
const linkCount = async () => (await srv.sql`select count(*)::int as n from links`)[0]!.n as number;

Deno.test("each key lists the tools of its scopes, with the REST bodies' schemas", async () => {
  const listed = async (key: string) => {
    const client = await mcpClient(both, key);
    try {
      return (await client.listTools()).tools;
    } finally {
      await client.close();
    }
  };
  const tools = await listed(full.value);
  assert.deepEqual(tools.map((t) => t.name), ALL_TOOLS);
  assert.deepEqual((await listed(reader.value)).map((t) => t.name), [
    "list_links",
    "get_link",
    "link_qr",
  ]);
  assert.deepEqual((await listed(analyst.value)).map((t) => t.name), [
    "analytics",
    "funnel",
    "split_results",
  ]);
  assert.deepEqual(await listed(exporter.value), []);

  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  // Input schemas are the REST bodies' own (one zod source): the same fields as the OpenAPI
  // document's components.
  // deno-lint-ignore no-explicit-any
  const components = OPENAPI_DOCUMENT.components.schemas as Record<string, any>;
  assert.deepEqual(
    Object.keys(byName.create_link!.inputSchema.properties!).sort(),
    Object.keys(components.CreateManagedLinkBody.properties).sort(),
  );
  // deno-lint-ignore no-explicit-any
  const changes = byName.update_link!.inputSchema.properties!.changes as any;
  assert.deepEqual(
    Object.keys(changes.properties).sort(),
    Object.keys(components.PatchLinkBody.properties).sort(),
  );
  assert.deepEqual(changes.additionalProperties, false);
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, "object", tool.name);
    assert.equal(tool.outputSchema?.type, "object", tool.name);
    assert.equal(tool.annotations?.openWorldHint, false, tool.name);
    const reads = ["list_links", "get_link", "link_qr", "analytics", "funnel", "split_results"]
      .includes(tool.name);
    assert.equal(tool.annotations?.readOnlyHint, reads, tool.name);
  }
  assert.equal(byName.delete_link!.annotations?.destructiveHint, true);
  assert.equal(byName.archive_link!.annotations?.destructiveHint, false);
});

Deno.test("every tool, called through both instances, answers as REST does and is audited as the key's", async () => {
  const client = await mcpClient(both, full.value);
  try {
    const created = await callTool(client, "create_link", {
      path: "spring-sale",
      title: "Spring sale",
      tags: ["spring", "mail"],
      tracking_campaign: "spring",
      ios_custom_redirect: { url: "https://shop.example/spring" },
      data: { screen: "sale" },
    });
    assert.ok(!created.isError, JSON.stringify(created.content));
    const link = (created.structuredContent as { link: Record<string, unknown> }).link;
    managedLinkSchema.parse(link);
    assert.equal(link.access_path, "https://lnk.example.test/spring-sale");
    assert.match(
      (created.content[0] as { text: string }).text,
      /^Created https:\/\/lnk\.example\.test\/spring-sale \(active, 0 views\) – Spring sale$/,
    );
    // The same link as REST shows it.
    assert.deepEqual(
      link,
      (await restLinks()).links.find((l: { path: string }) => l.path === "spring-sale"),
    );

    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      await callOk(client, "create_link", { title: `Autumn ${i}`, tags: ["autumn"] });
    }
    assert.deepEqual(await callOk(client, "get_link", { path: "spring-sale" }), { link });

    // The list: its filters, order and pages are REST's.
    const queries: [Record<string, unknown>, string][] = [
      [{}, ""],
      [{ tag: "autumn", order: "created_at", limit: 2 }, "?tag=autumn&order=created_at&limit=2"],
      [{ q: "spring", state: "active" }, "?q=spring&state=active"],
      [{ campaign: "spring", sdk_generated: "false" }, "?campaign=spring&sdk_generated=false"],
    ];
    for (const [args, query] of queries) {
      assert.deepEqual(await callOk(client, "list_links", args), await restLinks(query), query);
    }
    const first = await callOk(client, "list_links", { tag: "autumn", limit: 2 });
    assert.equal(first.links.length, 2);
    assert.ok(first.next_after);
    const second = await callOk(client, "list_links", {
      tag: "autumn",
      limit: 2,
      after: first.next_after,
    });
    assert.equal(second.links.length, 1);
    assert.equal(second.next_after, null);
    const listText = await callTool(client, "list_links", { tag: "autumn", limit: 2 });
    assert.match((listText.content[0] as { text: string }).text, /^2 links:\n.*\n.*\nMore: /);

    const updated = await callOk(client, "update_link", {
      path: "spring-sale",
      changes: { title: "Spring sale, last days", tracking_campaign: null, max_views: 100 },
    });
    assert.equal(updated.link.title, "Spring sale, last days");
    assert.equal(updated.link.tracking_campaign, null);
    assert.equal(updated.link.max_views, 100);
    assert.deepEqual(updated, await callOk(client, "get_link", { path: "spring-sale" }));

    // The QR code: a PNG whose modules are the code of the link's URL.
    const qr = await callTool(client, "link_qr", { path: "spring-sale" });
    assert.ok(!qr.isError);
    const image = qr.content.find((c) => c.type === "image") as { data: string; mimeType: string };
    assert.equal(image.mimeType, "image/png");
    const read = readPng(Uint8Array.from(atob(image.data), (ch) => ch.charCodeAt(0)));
    assert.equal(read.text, "https://lnk.example.test/spring-sale");
    assert.deepEqual(qr.structuredContent, {
      path: "spring-sale",
      access_path: "https://lnk.example.test/spring-sale",
      mime_type: "image/png",
      size: read.width,
    });

    const archived = await callOk(client, "archive_link", { path: "spring-sale" });
    assert.equal(archived.link.state, "archived");
    assert.ok(!(await restLinks()).links.some((l: { path: string }) => l.path === "spring-sale"));
    assert.deepEqual(
      await callOk(client, "list_links", { state: "archived" }),
      await restLinks("?state=archived"),
    );
    // Archiving twice is no error (idempotent).
    assert.equal(
      (await callOk(client, "archive_link", { path: "spring-sale" })).link.archived,
      true,
    );

    assert.deepEqual(await callOk(client, "delete_link", { path: "spring-sale" }), {
      deleted: { path: "spring-sale" },
    });
    assert.equal(
      await callError(client, "get_link", { path: "spring-sale" }),
      "not_found: link not found",
    );
    const gone = await call(srv.url, "PATCH", `/api/v1/projects/${env}/links/spring-sale`, {
      headers: adminHeaders,
      body: { title: "x" },
    });
    assertError(gone, 404, "not_found");

    // Every change is the key's in the audit log, with the request it came in.
    const log = await call(srv.url, "GET", `/api/v1/projects/${env}/audit_log?limit=100`, {
      headers: adminHeaders,
    });
    // By id: the route's own order is not relied on here.
    const mine = log.body.entries.filter((e: { actor: { type: string } }) =>
      e.actor.type === "api_key"
    ).sort((a: { id: number }, b: { id: number }) => a.id - b.id);
    assert.deepEqual(
      mine.map((e: { action: string; target: { id: string } }) => `${e.action} ${e.target.id}`)
        .filter((s: string) => s.includes("spring-sale")),
      [
        "link.create spring-sale",
        "link.update spring-sale",
        "link.update spring-sale",
        "link.update spring-sale",
        "link.delete spring-sale",
      ],
    );
    for (const entry of mine) {
      assert.deepEqual(entry.actor, { type: "api_key", id: full.id, name: full.name });
      assert.equal(typeof entry.request_id, "string");
    }
    assert.equal(mine.filter((e: { action: string }) => e.action === "link.create").length, 4);
  } finally {
    await client.close();
  }
});

Deno.test("analytics takes the analytics route's parameters and answers its figures", async () => {
  const client = await mcpClient(both, full.value);
  try {
    await callOk(client, "create_link", { path: "summer", title: "Summer" });
    clock.set(new Date("2026-05-10T12:00:00Z"));
    const events = ["DE", "DE", "FR", null].map((country, i) => ({
      id: `install-${i}`,
      type: "install",
      occurred_at: `2026-05-0${i + 2}T09:00:00Z`,
      link_path: "summer",
      ...(country ? { geo: { country } } : {}),
    }));
    await ingest(srv.url, project.key, "production", events);
    const cases: [Record<string, unknown>, string][] = [
      [{}, ""],
      [
        {
          from: "2026-05-01",
          to: "2026-05-10",
          interval: "day",
          tz: "Europe/Berlin",
          metrics: ["installs", "views"],
          group_by: "country",
          limit: 1,
        },
        "?from=2026-05-01&to=2026-05-10&interval=day&tz=Europe/Berlin&metrics=installs,views" +
        "&group_by=country&limit=1",
      ],
      [
        { link: "summer", filters: { country: "DE" }, metrics: ["installs"] },
        "?link=summer&filter[country]=DE&metrics=installs",
      ],
    ];
    for (const [args, query] of cases) {
      const rest = await call(srv.url, "GET", `/api/v1/projects/${env}/analytics${query}`, {
        headers: adminHeaders,
      });
      assert.equal(rest.status, 200, rest.text);
      const result = await callTool(client, "analytics", args);
      assert.deepEqual(result.structuredContent, rest.body, query);
    }
    const grouped = await callTool(client, "analytics", { group_by: "country" });
    assert.equal(
      (grouped.structuredContent as { totals: { installs: number } }).totals.installs,
      4,
    );
    assert.match(
      (grouped.content[0] as { text: string }).text,
      /: views 0, installs 4\ncountry DE: views 0, installs 2\n/,
    );
    // A bad parameter is REST's 400 code and message.
    assert.match(
      await callError(client, "analytics", { tz: "Mars/Olympus" }),
      /^invalid_field: tz: must be an IANA time zone name/,
    );
    assert.match(
      await callError(client, "analytics", { limit: 5000 }),
      /^invalid_field: limit: must be a whole number from 1 to 1000/,
    );
    assert.match(
      await callError(client, "analytics", { interval: "fortnight" }),
      /^invalid_field: interval: /,
    );
  } finally {
    await client.close();
  }
});

Deno.test("split_results answers as the split route does, for the link's split and a rule's", async () => {
  const client = await mcpClient(both, full.value);
  try {
    await callOk(client, "create_link", {
      path: "ab-test",
      split: [{ url: "https://a.example/", weight: 70 }, { url: "https://b.example/", weight: 30 }],
      rules: [{
        name: "french",
        when: { language: ["fr"] },
        split: [{ url: "https://fr-a.example/", weight: 1 }, {
          url: "https://fr-b.example/",
          weight: 1,
        }],
      }],
    });
    // Views of both splits, through the link host.
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${srv.url}/ab-test`, {
        redirect: "manual",
        headers: {
          "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0",
          ...(i % 2 ? { "Accept-Language": "fr-FR" } : {}),
        },
      });
      await res.body?.cancel();
    }
    await srv.views.flush();
    for (const [args, query] of [[{}, ""], [{ rule: "french" }, "?rule=french"]] as const) {
      const rest = await call(
        srv.url,
        "GET",
        `/api/v1/projects/${env}/links/ab-test/split${query}`,
        {
          headers: adminHeaders,
        },
      );
      assert.equal(rest.status, 200, rest.text);
      const result = await callTool(client, "split_results", { path: "ab-test", ...args });
      assert.deepEqual(result.structuredContent, rest.body, query);
      const views = (rest.body as { variants: { views: number }[] }).variants
        .reduce((n, v) => n + v.views, 0);
      assert.equal(views, 3, query);
    }
    assert.match(
      await callError(client, "split_results", { path: "ab-test", rule: "nope" }),
      /^invalid_field: rule: /,
    );
  } finally {
    await client.close();
  }
});

Deno.test("bad arguments are REST's refusals, and change nothing", async () => {
  const client = await mcpClient(srv.url, full.value);
  try {
    const before = await linkCount();
    assert.equal(
      await callError(client, "create_link", { image: "javascript:alert(1)" }),
      "invalid_field: image: must be an http(s) URL",
    );
    assert.match(
      await callError(client, "create_link", { path: "docs" }),
      /^invalid_field: path: /,
    );
    assert.match(
      await callError(client, "update_link", { path: "summer", changes: {} }),
      /^invalid_field: changes: give at least one field to change/,
    );
    assert.match(
      await callError(client, "update_link", { path: "summer", changes: { path: "other" } }),
      /^invalid_field: changes: /,
    );
    assert.equal(
      await callError(client, "list_links", { limit: 101 }),
      "invalid_limit: limit must be an integer from 1 to 100",
    );
    assert.equal(
      await callError(client, "list_links", { after: "nonsense" }),
      "bad_cursor: after is not a cursor of this list and order",
    );
    assert.match(await callError(client, "get_link", {}), /^invalid_field: path: /);
    assert.equal(
      await callError(client, "get_link", { path: "no-such-link" }),
      "not_found: link not found",
    );
    await callOk(client, "create_link", { path: "taken" });
    assert.equal(
      await callError(client, "create_link", { path: "taken" }),
      "invalid_field: path: is taken (by a link, now or in the past)",
    );
    assert.equal(await linkCount(), before + 1);
    // A tool that does not exist is a protocol error, as the specification has it.
    await assert.rejects(
      client.callTool({ name: "drop_everything", arguments: {} }),
      /-32602.*no tool is named drop_everything/,
    );
  } finally {
    await client.close();
  }
});

Deno.test("a key without a tool's scope is refused with insufficient_scope, and nothing changes", async () => {
  const client = await mcpClient(both, reader.value);
  try {
    const before = await linkCount();
    for (
      const [name, args] of [
        ["create_link", { title: "nope" }],
        ["update_link", { path: "summer", changes: { title: "nope" } }],
        ["archive_link", { path: "summer" }],
        ["delete_link", { path: "summer" }],
        ["analytics", {}],
      ] as const
    ) {
      const text = await callError(client, name, args);
      assert.match(
        text,
        /^insufficient_scope: this API key lacks the scope "(links:write|analytics:read)"/,
        name,
      );
    }
    assert.equal(await linkCount(), before);
    assert.equal((await callOk(client, "get_link", { path: "summer" })).link.title, "Summer");
  } finally {
    await client.close();
  }
  const analystClient = await mcpClient(srv.url, analyst.value);
  try {
    assert.match(
      await callError(analystClient, "list_links"),
      /^insufficient_scope: .*"links:read"/,
    );
  } finally {
    await analystClient.close();
  }
});

Deno.test("a key of one environment reaches nothing of another", async () => {
  const client = await mcpClient(both, testEnvKey.value);
  try {
    const before = await restLinks("?limit=100");
    assert.deepEqual(await callOk(client, "list_links"), { links: [], next_after: null });
    for (
      const [name, args] of [
        ["get_link", { path: "summer" }],
        ["link_qr", { path: "summer" }],
        ["update_link", { path: "summer", changes: { title: "taken over" } }],
        ["archive_link", { path: "summer" }],
        ["delete_link", { path: "summer" }],
      ] as const
    ) {
      assert.equal(await callError(client, name, args), "not_found: link not found", name);
    }
    assert.deepEqual(await restLinks("?limit=100"), before);
    // What it creates is its own environment's.
    const made = await callOk(client, "create_link", { title: "Test only" });
    const testList = await call(srv.url, "GET", `/api/v1/projects/${project.testId}/links`, {
      headers: adminHeaders,
    });
    assert.deepEqual(testList.body.links.map((l: { path: string }) => l.path), [made.link.path]);
    assert.ok(
      !(await restLinks("?limit=100")).links.some((l: { path: string }) =>
        l.path === made.link.path
      ),
    );
  } finally {
    await client.close();
  }
  // Another project's key, likewise.
  const stranger = await createProject(srv.url, { name: "Strangers" });
  const strangerKey = await createKey(srv.url, stranger.productionId, [
    "links:read",
    "links:write",
  ]);
  const strangerClient = await mcpClient(srv.url, strangerKey.value);
  try {
    assert.equal(
      await callError(strangerClient, "get_link", { path: "summer" }),
      "not_found: link not found",
    );
    assert.deepEqual(await callOk(strangerClient, "list_links"), { links: [], next_after: null });
  } finally {
    await strangerClient.close();
  }
});

Deno.test("a revoked key fails on its next call, on every instance; an expired one too", async () => {
  const key = await createKey(srv.url, env, ["links:read"]);
  const onSrv = await mcpClient(srv.url, key.value);
  const onOther = await mcpClient(other.url, key.value);
  try {
    await callOk(onSrv, "list_links");
    await callOk(onOther, "list_links");
    const revoked = await call(srv.url, "DELETE", `/api/v1/projects/${env}/api_keys/${key.id}`, {
      headers: adminHeaders,
    });
    assert.equal(revoked.status, 204, revoked.text);
    await assert.rejects(callTool(onSrv, "list_links"), /401/);
    await assert.rejects(callTool(onOther, "list_links"), /401/);
    const raw = await postMcp(other.url, JSON.stringify(INITIALIZE), {
      ...MCP_POST_HEADERS,
      Authorization: `Bearer ${key.value}`,
    });
    assertError(raw, 401, "unauthorized", /revoked or expired/);
  } finally {
    await onSrv.close();
    await onOther.close();
  }

  const expiring = await createKey(srv.url, env, ["links:read"], {
    expires_at: new Date(clock.now().getTime() + 60_000).toISOString(),
  });
  const client = await mcpClient(both, expiring.value);
  try {
    await callOk(client, "list_links");
    clock.advance(61_000);
    await assert.rejects(callTool(client, "list_links"), /401/);
  } finally {
    await client.close();
  }
});

Deno.test("without a key, with the admin token or a wrong key: 401 before anything is built", async () => {
  const before = await linkCount();
  const cases: [string, Record<string, string>][] = [
    ["no header", {}],
    ["the admin token", { Authorization: `Bearer ${ADMIN_TOKEN}` }],
    ["a key never issued", { Authorization: `Bearer sk_${"A".repeat(43)}` }],
    ["not bearer", { Authorization: `Basic ${btoa("a:b")}` }],
    ["empty bearer", { Authorization: "Bearer " }],
  ];
  for (const [what, headers] of cases) {
    for (
      const body of [
        JSON.stringify(INITIALIZE),
        // Unread: a body that is not JSON is still a 401, not a parse error.
        "{not json",
        JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "create_link", arguments: { title: "x" } },
        }),
      ]
    ) {
      const res = await postMcp(srv.url, body, { ...MCP_POST_HEADERS, ...headers });
      assertError(res, 401, "unauthorized");
      assert.equal(res.headers.get("WWW-Authenticate"), 'Bearer realm="mcp"', what);
      assert.equal(res.headers.get("Mcp-Session-Id"), null, what);
    }
    for (const method of ["GET", "DELETE"]) {
      const res = await call(srv.url, method, "/mcp", { headers });
      assertError(res, 401, "unauthorized");
    }
  }
  assert.equal(await linkCount(), before);
  // The SDK's client, without a key, cannot even initialise.
  await assert.rejects(mcpClient(srv.url, null), /401/);
});

Deno.test("stateless: no session is given, GET and DELETE are 405 for a key", async () => {
  const auth = { Authorization: `Bearer ${full.value}` };
  const init = await postMcp(srv.url, JSON.stringify(INITIALIZE), { ...MCP_POST_HEADERS, ...auth });
  assert.equal(init.status, 200, init.text);
  assert.equal(init.headers.get("Mcp-Session-Id"), null);
  assert.equal(init.body.result.serverInfo.name, "link-feed");
  assert.deepEqual(init.body.result.capabilities, { tools: {} });
  for (const method of ["GET", "DELETE"]) {
    const res = await fetch(`${srv.url}/mcp`, {
      method,
      headers: { ...auth, Accept: "text/event-stream" },
    });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("Allow"), "POST");
    assert.equal((await res.json()).error.code, -32000);
  }
  // A call needs no initialisation on the instance it reaches.
  const listed = await postMcp(
    other.url,
    JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }),
    { ...MCP_POST_HEADERS, ...auth },
  );
  assert.equal(listed.status, 200, listed.text);
  assert.deepEqual(listed.body.result.tools.map((t: { name: string }) => t.name), ALL_TOOLS);
  // A batch holds at most 10 requests: those beyond are answered with an error.
  const batch = Array.from({ length: 12 }, (_, i) => ({
    jsonrpc: "2.0",
    id: i,
    method: "tools/call",
    params: { name: "list_links", arguments: { limit: 1 } },
  }));
  const batched = await postMcp(srv.url, JSON.stringify(batch), { ...MCP_POST_HEADERS, ...auth });
  assert.equal(batched.status, 200, batched.text);
  const answers = new Map(
    batched.body.map((m: { id: number }) => [m.id, m] as const),
  ) as Map<number, { result?: { structuredContent: unknown }; error?: { code: number } }>;
  assert.equal(answers.size, 12);
  for (let i = 0; i < 12; i++) {
    if (i < MAX_BATCH_REQUESTS) assert.ok(answers.get(i)!.result?.structuredContent, String(i));
    else assert.equal(answers.get(i)!.error?.code, -32600, String(i));
  }
  // Notifications only: 202, no body.
  const note = await postMcp(
    srv.url,
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    { ...MCP_POST_HEADERS, ...auth },
  );
  assert.equal(note.status, 202);
});

Deno.test("the tool table names an operation of the permission table for each tool", () => {
  assert.deepEqual(MCP_TOOLS.map((t) => t.name), ALL_TOOLS);
  assert.deepEqual(
    Object.fromEntries(MCP_TOOLS.map((t) => [t.name, t.operation])),
    {
      list_links: "links.read",
      get_link: "links.read",
      create_link: "links.write",
      update_link: "links.write",
      archive_link: "links.write",
      delete_link: "links.delete",
      link_qr: "links.read",
      analytics: "analytics.read",
      funnel: "analytics.read",
      split_results: "analytics.read",
    },
  );
});

Deno.test("docs/agents.md lists every tool with its scope and whether it changes anything", async () => {
  const text = await Deno.readTextFile("docs/agents.md");
  const rows = Object.fromEntries(
    [...text.matchAll(/^\| `([a-z_]+)` +\| .+ \| `([a-z:]+)` +\| (yes|no) +\|$/gm)].map((m) => [
      m[1],
      `${m[2]} ${m[3]}`,
    ]),
  );
  assert.deepEqual(
    rows,
    Object.fromEntries(MCP_TOOLS.map((t) => [
      t.name,
      `${PERMISSIONS[t.operation].scope} ${t.listing.annotations?.readOnlyHint ? "no" : "yes"}`,
    ])),
  );
});
