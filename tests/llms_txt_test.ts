// GET /llms.txt (pages/llms.ts): an index of docs/ for agents, made from docs/README.md's table,
// whose every link is a page the instance serves as Markdown (GET /docs/<page>.md), and nothing
// else is served that way.
import assert from "node:assert/strict";
import { assertError, call, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

const index = await Deno.readTextFile("docs/README.md");
const listed = [...index.matchAll(/^\| \[([a-zA-Z0-9_-]+\.md)\]\(\1\)/gm)].map((m) => m[1]!);

Deno.test("llms.txt lists every page of docs/README.md, the API descriptions and /mcp", async () => {
  assert.ok(listed.length >= 10, listed.join(", "));
  assert.ok(listed.includes("agents.md"));
  const res = await call(srv.url, "GET", "/llms.txt");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/plain; charset=utf-8");
  const text = res.text;
  assert.match(text, /^# Link and event feed service\n\n> /);
  const links = [...text.matchAll(/^- \[([^\]]+)\]\(([^)]+)\)(: .+)?$/gm)];
  const targets = links.map((m) => m[2]!);
  assert.deepEqual(
    targets.filter((t) => t.startsWith("/docs/") && t.endsWith(".md")),
    ["/docs/README.md", ...listed.map((f) => `/docs/${f}`)],
  );
  for (const path of ["/openapi.json", "/docs", "/graphql"]) assert.ok(targets.includes(path));
  assert.match(text, /`\/mcp`/);
  // Each page under its own first heading.
  const agents = links.find((m) => m[2] === "/docs/agents.md")!;
  assert.equal(agents[1], "Agents (MCP)");
});

Deno.test("every page llms.txt links to is served as Markdown, as the file reads", async () => {
  for (const file of ["README.md", ...listed]) {
    const res = await call(srv.url, "GET", `/docs/${file}`);
    assert.equal(res.status, 200, file);
    assert.equal(res.headers.get("content-type"), "text/markdown; charset=utf-8");
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    assert.equal(res.text, await Deno.readTextFile(`docs/${file}`));
  }
  for (
    const path of [
      "/docs/nope.md",
      "/docs/agents",
      "/docs/..%2Fdeno.json",
      "/docs/..%2FREADME.md",
      "/docs/images",
    ]
  ) {
    assertError(await call(srv.url, "GET", path), 404, "not_found");
  }
});
