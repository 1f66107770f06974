// The hot routes are ordinary entries of the one route table (app.ts), framed once as every
// request is (rest/frame.ts): the SDK link lookup's answers, log lines and request ids are those of
// every other route, for a plain path, one to decode and HEAD alike; the link host's hits have
// the same frame, and one-segment paths of other routes stay theirs; POST /graphql too, with the
// body limit applied before the body is read, whether its length is declared or streamed.
import assert from "node:assert/strict";
import { createLogger } from "../infra/log.ts";
import { generateLink } from "./helpers/sdk.ts";
import { assertError, call, createProject, startTestServer } from "./helpers/server.ts";

const logLines: string[] = [];
const logger = createLogger("debug", (line) => logLines.push(line));
const srv = await startTestServer({ logger });
Deno.test.afterAll(() => srv.close());
const project = await createProject(srv.url);
const sdk = { "PROJECT-KEY": project.key, ENVIRONMENT: "production" };

function requestLine(id: string | null): Record<string, unknown> {
  const lines = logLines.map((l) => JSON.parse(l)).filter((l) =>
    l.msg === "request" && l.request_id === id
  );
  assert.equal(lines.length, 1, `one request line for ${id}`);
  const { request_id: _id, time: _t, level: _l, ms, ...rest } = lines[0];
  assert.equal(typeof ms, "number");
  return rest;
}

Deno.test("the SDK link lookup answers, logs and maps errors as every route does", async () => {
  const path = await generateLink(srv.url, project.key, "production", { title: "Hot" });
  const found = await call(srv.url, "GET", `/api/v1/sdk/link/${path}?ignored=1`, { headers: sdk });
  assert.equal(found.status, 200);
  assert.equal(found.body.link.path, path);
  assert.equal(found.headers.get("content-type"), "application/json");
  assert.deepEqual(requestLine(found.headers.get("x-request-id")), {
    msg: "request",
    method: "GET",
    path: `/api/v1/sdk/link/${path}`,
    status: 200,
  });

  const missing = await call(srv.url, "GET", "/api/v1/sdk/link/nothing-here", { headers: sdk });
  assertError(missing, 404, "not_found");
  assert.equal(requestLine(missing.headers.get("x-request-id")).status, 404);

  const wrongKey = await call(srv.url, "GET", `/api/v1/sdk/link/${path}`, {
    headers: { ...sdk, "PROJECT-KEY": "not-a-key" },
  });
  assert.equal(wrongKey.status, 401);
  assert.equal(requestLine(wrongKey.headers.get("x-request-id")).status, 401);

  const noEnvironment = await call(srv.url, "GET", `/api/v1/sdk/link/${path}`, {
    headers: { "PROJECT-KEY": project.key },
  });
  assert.equal(noEnvironment.status >= 400 && noEnvironment.status < 500, true);

  // HEAD, a path to decode and one too deep: the same frame and answers.
  const head = await fetch(`${srv.url}/api/v1/sdk/link/${path}`, { method: "HEAD", headers: sdk });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), "");
  assert.deepEqual(requestLine(head.headers.get("x-request-id")), {
    msg: "request",
    method: "HEAD",
    path: `/api/v1/sdk/link/${path}`,
    status: 200,
  });
  const encoded = await call(
    srv.url,
    "GET",
    `/api/v1/sdk/link/${encodeURIComponent(path)}%2D`,
    { headers: sdk },
  );
  assertError(encoded, 404, "not_found");
  const deeper = await call(srv.url, "GET", `/api/v1/sdk/link/${path}/more`, { headers: sdk });
  assertError(deeper, 404, "not_found");
});

Deno.test("the link host's hits are answered and logged as every route's, and other routes keep their paths", async () => {
  const path = await generateLink(srv.url, project.key, "production", {
    title: "Hot",
    desktop_custom_redirect: { url: "https://example.com/hot" },
  });
  const hit = await call(srv.url, "GET", `/${path}?utm=1`, {
    headers: { "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0" },
  });
  assert.equal(hit.status, 302);
  assert.equal(hit.headers.get("location"), "https://example.com/hot");
  assert.deepEqual(requestLine(hit.headers.get("x-request-id")), {
    msg: "request",
    method: "GET",
    path: `/${path}`,
    status: 302,
  });
  const missing = await call(srv.url, "GET", "/nothing-here", {});
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get("content-type"), "text/html; charset=utf-8");
  assert.equal(requestLine(missing.headers.get("x-request-id")).status, 404);
  // One-segment paths of other routes are theirs, not links.
  const health = await call(srv.url, "GET", "/healthz", {});
  assert.equal(health.status, 200);
  const docs = await call(srv.url, "GET", "/docs", {});
  assert.equal(docs.status, 200);
  assert.match(docs.headers.get("content-type") ?? "", /text\/html/);
  const api = await call(srv.url, "GET", "/api", {});
  assertError(api, 404, "not_found");
  await srv.views.flush();
});

Deno.test("POST /graphql has the frame; a body over the limit is refused before it is read, declared or streamed", async () => {
  const path = await generateLink(srv.url, project.key, "production", { title: "Hot" });
  const query = JSON.stringify({ query: `{ link(path: "${path}") { path title } }` });
  const headers = { ...sdk, "Content-Type": "application/json" };
  const found = await call(srv.url, "POST", "/graphql?ignored=1", {
    raw: query,
    headers: { ...headers, "X-Request-Id": "client-graphql-1" },
  });
  assert.equal(found.status, 200);
  assert.deepEqual(found.body, { data: { link: { path, title: "Hot" } } });
  assert.equal(found.headers.get("x-request-id"), "client-graphql-1");
  assert.deepEqual(requestLine("client-graphql-1"), {
    msg: "request",
    method: "POST",
    path: "/graphql",
    status: 200,
  });
  // An id that is not plain is replaced, as every route replaces it.
  const replaced = await call(srv.url, "POST", "/graphql", {
    raw: query,
    headers: { ...headers, "X-Request-Id": "not plain!" },
  });
  assert.notEqual(replaced.headers.get("x-request-id"), "not plain!");
  assert.equal(requestLine(replaced.headers.get("x-request-id")).status, 200);
  // Errors keep the frame.
  const invalid = await call(srv.url, "POST", "/graphql", { raw: `{"query":"{ nope }"}`, headers });
  assert.ok(invalid.body.errors?.length);
  assert.equal(requestLine(invalid.headers.get("x-request-id")).status, invalid.status);

  // A streamed body (no Content-Length) is counted by the frame: the same answer and line.
  const stream = (text: string) => ReadableStream.from([new TextEncoder().encode(text)]);
  const chunked = await fetch(`${srv.url}/graphql`, {
    method: "POST",
    headers,
    body: stream(query),
  });
  assert.equal(chunked.status, 200);
  assert.deepEqual(await chunked.json(), { data: { link: { path, title: "Hot" } } });
  assert.deepEqual(requestLine(chunked.headers.get("x-request-id")), {
    msg: "request",
    method: "POST",
    path: "/graphql",
    status: 200,
  });

  // Over 1 MiB, declared or streamed: 413 before the body is parsed, logged as every request.
  const big = JSON.stringify({ query: "{ __typename }", variables: { pad: "x".repeat(1 << 20) } });
  const declared = await call(srv.url, "POST", "/graphql", { raw: big, headers });
  assertError(declared, 413, "payload_too_large");
  assert.equal(requestLine(declared.headers.get("x-request-id")).status, 413);
  const streamed = await fetch(`${srv.url}/graphql`, {
    method: "POST",
    headers,
    body: stream(big),
  });
  assert.equal(streamed.status, 413);
  assert.equal((await streamed.json()).error.code, "payload_too_large");
  assert.equal(requestLine(streamed.headers.get("x-request-id")).status, 413);
});
