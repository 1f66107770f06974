// Every GraphQL operation the documentation shows is one the server takes: each ```graphql block
// of README.md and docs/, each .graphql file under docs/, and each document embedded in another
// example (a curl body's "query", a script's `query:`) is parsed and validated against the
// served schema with graphql-js, as a client's code generator or linter would.
import assert from "node:assert/strict";
import { parse, validate } from "graphql";
import { schema } from "../schema/mod.ts";

interface Example {
  where: string;
  document: string;
}

function markdownFiles(dir: string): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) =>
    e.isDirectory
      ? markdownFiles(`${dir}/${e.name}`)
      : e.name.endsWith(".md") || e.name.endsWith(".graphql")
      ? [`${dir}/${e.name}`]
      : []
  );
}

function line(text: string, index: number): number {
  return text.slice(0, index).split("\n").length;
}

/** The GraphQL documents of one page, with the line each starts on. */
function examplesOf(path: string, text: string): Example[] {
  if (path.endsWith(".graphql")) return [{ where: path, document: text }];
  const out: Example[] = [];
  for (const fence of text.matchAll(/^```(\w*)\n([^]*?)^```$/gm)) {
    const [whole, language, body] = fence;
    const bodyStart = fence.index + whole.indexOf("\n") + 1;
    const at = (offset: number) => `${path}:${line(text, bodyStart + offset)}`;
    if (language === "graphql") {
      out.push({ where: at(0), document: body! });
      continue;
    }
    // A JSON body's "query" (curl -d '…'), and a script's query: `…`.
    for (const m of body!.matchAll(/"query":\s*"((?:[^"\\]|\\.)*)"/g)) {
      out.push({ where: at(m.index), document: JSON.parse(`"${m[1]}"`) });
    }
    for (const m of body!.matchAll(/\bquery:\s*`([^`]*)`/g)) {
      out.push({ where: at(m.index), document: m[1]! });
    }
  }
  return out;
}

const pages = ["README.md", ...markdownFiles("docs")];
const examples = pages.flatMap((p) => examplesOf(p, Deno.readTextFileSync(p)));

Deno.test("the documentation's GraphQL examples are found: blocks, files and embedded queries", () => {
  const where = examples.map((e) => e.where);
  // docs/graphql.md's blocks, the curl body and the graphql-ws script; the codegen documents.
  assert.ok(where.filter((w) => w.startsWith("docs/graphql.md:")).length >= 6, where.join(", "));
  assert.ok(where.some((w) => w.startsWith("docs/live-tail.md:")), where.join(", "));
  assert.ok(where.some((w) => w.startsWith("docs/examples/codegen/")), where.join(", "));
  // The extraction itself: a block, a curl body and a script in one page.
  const page = [
    "```graphql",
    "{ a }",
    "```",
    "```sh",
    `curl -d '{"query": "query { b(x: \\"y\\") }"}'`,
    "```",
    "```ts",
    "client.subscribe({ query: `subscription { c }` });",
    "```",
  ].join("\n");
  assert.deepEqual(examplesOf("p.md", page), [
    { where: "p.md:2", document: "{ a }\n" },
    { where: "p.md:5", document: 'query { b(x: "y") }' },
    { where: "p.md:8", document: "subscription { c }" },
  ]);
});

Deno.test("every GraphQL operation in README.md and docs/ validates against the schema", () => {
  const problems: string[] = [];
  for (const { where, document } of examples) {
    try {
      for (const error of validate(schema, parse(document))) {
        problems.push(`${where}: ${error.message}`);
      }
    } catch (err) {
      problems.push(`${where}: ${(err as Error).message}`);
    }
  }
  assert.deepEqual(problems, []);
});
