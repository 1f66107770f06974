// The browser pages' routes without a browser: GraphiQL's files and /docs
// (tests/pages_browser_test.ts renders them in Chromium).
import assert from "node:assert/strict";
import { call, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(async () => {
  await srv.close();
});

Deno.test("GraphiQL's files are served with their content hash and cached", async () => {
  const html = await call(srv.url, "GET", "/graphql", {
    headers: { Accept: "text/html" },
  });
  assert.equal(html.status, 200);
  const scripts = [
    ...html.text.matchAll(/(?:src|href)="(\/graphql\/assets\/[^"]+)"/g),
  ].map((m) => m[1]!);
  // The icon, GraphiQL's stylesheet, the narrow-screen one, the boot script and the bundle.
  assert.equal(scripts.length, 5, html.text);
  for (const src of scripts) {
    const res = await fetch(srv.url + src, {
      headers: { "Accept-Encoding": "gzip" },
    });
    await res.arrayBuffer();
    assert.equal(res.status, 200, src);
    assert.match(res.headers.get("cache-control") ?? "", /immutable/);
  }
  const missing = await call(
    srv.url,
    "GET",
    "/graphql/assets/0000/graphiql.js",
  );
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.code, "not_found");
});

Deno.test("/docs is never taken for a link", async () => {
  const res = await call(srv.url, "GET", "/docs/anything");
  assert.equal(res.status, 404);
  assert.equal(res.body.error.code, "not_found");
});
