// The layering the README describes, checked: dependencies point one way, main.ts → app.ts →
// transports → inputs/ and services/ → db/. A transport never imports another transport, and
// services never import a transport.
import assert from "node:assert/strict";

/** Each transport and the top-level folders it consists of. */
const TRANSPORTS: Record<string, string[]> = {
  rest: ["rest"],
  graphql: ["schema", "resolvers"],
  dashboard: ["dashboard"],
};
// pages/ renders the static browser pages (GraphiQL, the API reference) that transports serve.
const BELOW_TRANSPORTS = ["services", "infra", "inputs", "pages", "db"];

async function* sourceFiles(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* sourceFiles(path);
    else if (/\.tsx?$/.test(entry.name)) yield path;
  }
}

/** The top-level folders (or root files) a file imports from, by relative specifier. */
async function importedTops(file: string): Promise<Set<string>> {
  const text = await Deno.readTextFile(file);
  const tops = new Set<string>();
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)[^"']*?from\s+["'](\.[^"']+)["']/g)) {
    const resolved = new URL(m[1]!, `file:///${file}`).pathname.slice(1);
    tops.add(resolved.split("/")[0]!);
  }
  return tops;
}

function transportOf(top: string): string | undefined {
  return Object.keys(TRANSPORTS).find((t) => TRANSPORTS[t]!.includes(top));
}

Deno.test("layout: services, inputs and db import no transport; no transport imports another", async () => {
  const problems: string[] = [];
  const folders = [...BELOW_TRANSPORTS, ...Object.values(TRANSPORTS).flat()];
  for (const folder of folders) {
    const own = transportOf(folder);
    for await (const file of sourceFiles(folder)) {
      for (const top of await importedTops(file)) {
        const other = transportOf(top);
        if (top === "app.ts" || top === "main.ts") problems.push(`${file} imports ${top}`);
        if (other && other !== own) problems.push(`${file} imports the ${other} transport`);
      }
    }
  }
  assert.deepEqual(problems, []);
});
