// POST /mcp against what no well-behaved client sends, with a valid key: random bytes, mutated
// and reshaped JSON-RPC messages, random arguments to every tool, wrong content types and accept
// headers, batches, deep nesting and bodies over the limit (declared or streamed). No answer is
// a 5xx, every refusal is a 4xx or a JSON-RPC error, and the server answers well afterwards.
// The generator is seeded: a failure names its seed and case.
import assert from "node:assert/strict";
import { MAX_BODY_BYTES } from "../rest/frame.ts";
import { MCP_TOOLS } from "../rest/mcp_tools.ts";
import { createKey, INITIALIZE, MCP_POST_HEADERS, postMcp } from "./helpers/mcp.ts";
import { createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());
const project = await createProject(srv.url);
const key = await createKey(srv.url, project.productionId, [
  "links:read",
  "links:write",
  "analytics:read",
]);
const auth = { ...MCP_POST_HEADERS, Authorization: `Bearer ${key.value}` };

/** A small deterministic generator (mulberry32). */
function random(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  return { next, int, pick };
}

const SEED = Number(Deno.env.get("MCP_FUZZ_SEED") ?? 38);
const rnd = random(SEED);

const STRINGS = [
  "",
  "a",
  "spring",
  "\u0000",
  "\ud800",
  "😀",
  "x".repeat(5000),
  "javascript:alert(1)",
  "https://example.com/",
  "../../etc/passwd",
  "2026-01-01T00:00:00Z",
  "-views",
  "true",
  "NaN",
];

/** A random JSON value, `depth` levels at most. */
function value(depth: number): unknown {
  const kind = rnd.int(depth > 0 ? 9 : 6);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rnd.next() < 0.5;
    case 2:
      return rnd.pick([0, -1, 1.5, 1e308, -2147483649, 2 ** 53, 100, 101]);
    case 3:
    case 4:
      return rnd.pick(STRINGS);
    case 5:
      return rnd.int(1000);
    case 6:
      return Array.from({ length: rnd.int(4) }, () => value(depth - 1));
    default: {
      const keys = [
        "path",
        "title",
        "changes",
        "tags",
        "data",
        "limit",
        "after",
        "order",
        "state",
        "expires_at",
        "max_views",
        "filters",
        "metrics",
        "group_by",
        "interval",
        "tz",
        "from",
        "__proto__",
        "constructor",
      ];
      return Object.fromEntries(
        Array.from({ length: rnd.int(5) }, () => [rnd.pick(keys), value(depth - 1)]),
      );
    }
  }
}

/** A valid message of each kind a client sends. */
function validMessage(id: number): Record<string, unknown> {
  const tool = rnd.pick(MCP_TOOLS);
  return rnd.pick([
    { ...INITIALIZE, id },
    { jsonrpc: "2.0", id, method: "tools/list" },
    { jsonrpc: "2.0", id, method: "ping" },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    {
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: tool.name, arguments: { path: "spring", title: "Spring" } },
    },
  ]);
}

/** `text` with a few characters deleted, repeated, replaced or inserted. */
function mutate(text: string): string {
  let out = text;
  for (let n = 1 + rnd.int(4); n > 0; n--) {
    const at = rnd.int(out.length + 1);
    const op = rnd.int(4);
    const ch = rnd.pick(['"', "{", "}", "[", "]", ",", ":", "\\", "0", "a", " ", "\u0000"]);
    if (op === 0) out = out.slice(0, at) + out.slice(at + 1);
    else if (op === 1) out = out.slice(0, at) + out.slice(at, at + 5).repeat(3) + out.slice(at + 5);
    else if (op === 2) out = out.slice(0, at) + ch + out.slice(at + 1);
    else out = out.slice(0, at) + ch + out.slice(at);
  }
  return out;
}

/** A message with one field given a random value (or removed). */
function reshape(message: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = structuredClone(message);
  const field = rnd.pick(["jsonrpc", "id", "method", "params", "result", "error"]);
  if (rnd.next() < 0.3) delete copy[field];
  else copy[field] = value(3);
  return copy;
}

type Case = { what: string; body: BodyInit | null; headers: Record<string, string> };

function randomCase(i: number): Case {
  const kind = rnd.int(8);
  const message = validMessage(i);
  switch (kind) {
    case 0: {
      const bytes = Uint8Array.from({ length: rnd.int(300) }, () => rnd.int(256));
      return { what: "random bytes", body: bytes, headers: auth };
    }
    case 1:
      return { what: "mutated message", body: mutate(JSON.stringify(message)), headers: auth };
    case 2:
      return { what: "reshaped message", body: JSON.stringify(reshape(message)), headers: auth };
    case 3:
      return { what: "random JSON", body: JSON.stringify(value(4)), headers: auth };
    case 4: {
      const tool = rnd.pick(MCP_TOOLS);
      const args = rnd.next() < 0.2 ? value(2) : value(4);
      return {
        what: `${tool.name} with random arguments`,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: i,
          method: "tools/call",
          params: { name: tool.name, arguments: args },
        }),
        headers: auth,
      };
    }
    case 5: {
      const batch = Array.from(
        { length: rnd.pick([0, 1, 2, 5, 101]) },
        (_, n) => rnd.next() < 0.7 ? validMessage(i * 1000 + n) : value(2),
      );
      return { what: `batch of ${batch.length}`, body: JSON.stringify(batch), headers: auth };
    }
    case 6: {
      const contentType = rnd.pick([
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json-seq",
        "application/jsonx",
        "",
      ]);
      const headers: Record<string, string> = { ...auth, "Content-Type": contentType };
      if (contentType === "") delete headers["Content-Type"];
      return {
        what: `content type ${contentType || "none"}`,
        body: JSON.stringify(message),
        headers,
      };
    }
    default: {
      const accept = rnd.pick(["", "application/json", "text/event-stream", "*/*", "text/html"]);
      const headers: Record<string, string> = { ...auth, Accept: accept };
      if (accept === "") delete headers.Accept;
      return { what: `accept ${accept || "none"}`, body: JSON.stringify(message), headers };
    }
  }
}

/** The answer's shape: a 2xx carries JSON-RPC (or nothing, 202), a 4xx an error body. */
function checkAnswer(what: string, res: Awaited<ReturnType<typeof postMcp>>): void {
  const where = `seed ${SEED}, ${what}: ${res.status} ${res.text.slice(0, 300)}`;
  assert.ok(res.status < 500, where);
  if (res.status === 202) return;
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/, where);
  if (res.status === 200) {
    const messages = Array.isArray(res.body) ? res.body : [res.body];
    for (const m of messages) {
      assert.equal(m.jsonrpc, "2.0", where);
      assert.ok("result" in m || "error" in m, where);
      // A tool's failure never leaks an internal error.
      if (m.result?.isError) assert.doesNotMatch(m.result.content[0].text, /^internal:/, where);
    }
  } else {
    assert.ok(res.status >= 400 && res.status < 500, where);
  }
}

Deno.test("400 random, mutated and reshaped messages: no 5xx, every answer well formed", async () => {
  const statuses = new Map<number, number>();
  for (let i = 0; i < 400; i++) {
    const c = randomCase(i);
    const res = await postMcp(srv.url, c.body, c.headers);
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    checkAnswer(`case ${i} (${c.what})`, res);
  }
  // The fuzz reached both the transport's refusals and the tools.
  for (const status of [200, 400, 406, 415]) assert.ok(statuses.has(status), `no ${status}`);
});

Deno.test("bodies over 1 MiB are refused with 413 before they are parsed", async () => {
  const big = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "create_link", arguments: { title: "x".repeat(MAX_BODY_BYTES) } },
  });
  const declared = await postMcp(srv.url, big, auth);
  assert.equal(declared.status, 413, declared.text);
  assert.equal(declared.body.error.code, "payload_too_large");
  // Streamed without a length: counted as it comes, refused at the limit.
  const chunk = new TextEncoder().encode("[".repeat(64 * 1024));
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent > 2 * MAX_BODY_BYTES) return controller.close();
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
  const streamed = await postMcp(srv.url, stream, auth);
  assert.equal(streamed.status, 413, streamed.text);
  // Just within the limit, deeply nested: a parse error, not a crash.
  const nested = "[".repeat(MAX_BODY_BYTES - 10);
  const deep = await postMcp(srv.url, nested, auth);
  assert.equal(deep.status, 400, deep.text);
  assert.equal(deep.body.error.code, -32700);
});

Deno.test("after the fuzz the server answers a well-formed call", async () => {
  const res = await postMcp(
    srv.url,
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "create_link", arguments: { path: "after-fuzz", title: "Still here" } },
    }),
    auth,
  );
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.result.structuredContent.link.path, "after-fuzz");
});
