// The repository documents itself: README and docs/ link only to files that exist (or to the
// pages other features bring), never outside the repository, and cover every error code, every
// configuration variable and every REST route the app serves.
import assert from "node:assert/strict";
import { createApp } from "../app.ts";
import { ERROR_STATUS } from "../services/errors.ts";
import { silentLogger } from "./helpers/clock.ts";
import { startTestServer } from "./helpers/server.ts";

/** Pages that other features' branches add to docs/ (linked from the index already). */
const COMING = new Set<string>();

const docs = ["README.md", ...[...Deno.readDirSync("docs")].map((e) => `docs/${e.name}`)]
  .filter((p) => p.endsWith(".md"));
const text = Object.fromEntries(docs.map((p) => [p, Deno.readTextFileSync(p)]));

function dirOf(path: string): string {
  return path.includes("/") ? path.slice(0, path.lastIndexOf("/") + 1) : "";
}
function normalise(path: string): string {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "..") out.pop();
    else if (part !== "." && part !== "") out.push(part);
  }
  return out.join("/");
}
/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  return new Set(
    [...markdown.matchAll(/^#+ (.+)$/gm)].map((m) =>
      m[1]!.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-")
    ),
  );
}

Deno.test("every relative link in README.md and docs/ reaches a file (and its heading)", () => {
  const broken: string[] = [];
  for (const [page, markdown] of Object.entries(text)) {
    for (const [, target] of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [file, anchor] = target!.split("#");
      const resolved = file ? normalise(dirOf(page) + file) : page;
      if (COMING.has(resolved)) continue;
      try {
        Deno.statSync(resolved);
      } catch {
        broken.push(`${page}: ${target}`);
        continue;
      }
      if (anchor && resolved.endsWith(".md")) {
        const headings = anchors(text[resolved] ?? Deno.readTextFileSync(resolved));
        if (!headings.has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("nothing sends readers outside the repository for the reference", () => {
  for (const [page, markdown] of Object.entries(text)) {
    assert.doesNotMatch(markdown, /\.\.\/shared|CONTRACT\.md|link-and-event-feed-api\.md/, page);
  }
  for (const name of ["rest-api", "admin-api", "ingestion", "link-host", "graphql", "operations"]) {
    assert.match(text["docs/README.md"]!, new RegExp(`\\(${name}\\.md\\)`), name);
    assert.match(text["README.md"]!, new RegExp(`\\(docs/${name}\\.md`), name);
  }
});

Deno.test("the quick start sends an event of the current time, not a fixed date", () => {
  const readme = text["README.md"]!;
  const quickStart = readme.slice(readme.indexOf("## Admin quick start"));
  const send = quickStart.slice(0, quickStart.indexOf("event_stream?"));
  assert.match(send, /NOW=\$\(date -u \+%Y-%m-%dT%H:%M:%SZ\)/);
  assert.doesNotMatch(send, /"occurred_at": "\d{4}-/);
});

Deno.test("docs/rest-api.md explains every error code", () => {
  for (const [code, status] of Object.entries(ERROR_STATUS)) {
    assert.match(
      text["docs/rest-api.md"]!,
      new RegExp(`\\| ${status} +\\| \`${code}\``),
      `${status} ${code} is not in the error table`,
    );
  }
});

Deno.test("docs/operations.md and the README list every configuration variable", async () => {
  const config = await Deno.readTextFile("config.ts");
  const start = config.indexOf("const envSchema");
  const schema = config.slice(start, config.indexOf("\n});\n", start));
  const variables = [...schema.matchAll(/^ {2}([A-Z_]+):/gm)].map((m) => m[1]!);
  assert.ok(variables.length >= 10, variables.join(", "));
  for (const name of variables) {
    assert.match(text["docs/operations.md"]!, new RegExp(`\\| \`${name}\` `), name);
    assert.match(text["README.md"]!, new RegExp(`\\| \`${name}\` `), name);
  }
});

Deno.test("every REST route the app serves is described in docs/", async () => {
  const srv = await startTestServer();
  try {
    const app = createApp({
      sql: srv.sql,
      config: srv.config,
      clock: srv.clock,
      logger: silentLogger,
      adminTokenHash: "",
      cursorSecret: "x".repeat(32),
      views: srv.views,
    });
    const all = Object.entries(text).filter(([p]) => p.startsWith("docs/")).map(([, t]) => t)
      .join("\n");
    const routes = new Set(
      app.routes
        .filter((r) => r.method !== "ALL" && r.method !== "HEAD" && !r.path.endsWith("*"))
        .filter((r) => r.path !== "/:path")
        // The dashboard's HTML pages are for people (docs/dashboard.md), not a REST API.
        .filter((r) => !r.path.startsWith("/dashboard"))
        .map((r) => `${r.method} ${r.path}`),
    );
    const undocumented = [...routes].filter((route) => {
      const [method, path] = route.split(" ") as [string, string];
      // The SDK routes are written relative to {base_url}.
      const written = path.replace(/^\/api\/v1\/sdk/, "{base_url}");
      return !all.includes(`${method} ${written}`) && !all.includes(`\`${method} ${written}`);
    });
    assert.deepEqual(undocumented, []);
  } finally {
    await srv.close();
  }
});
