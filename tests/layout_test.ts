// The layering the README describes, checked on the real import graph (`deno info --json` over
// every source file, type-only imports included): dependencies point one way, and no module
// imports itself through others.
//
//   entry points (main.ts, cli/, bench/, soak/)
//   → app.ts, the one module that knows every transport
//   → transports: rest/, GraphQL (graphql/, the server; schema/, the types; resolvers/, the
//     fields' bodies), dashboard/ (never each other)
//   → pages/ (the browser pages transports serve)
//   → inputs/ (request parsing shared by the transports)
//   → services/ (the domain and its SQL)
//   → infra/, db/, config.ts
//
// client/ is the feed's client library: it imports nothing of the server (the server's tools,
// bench/ and soak/, may use it as any client does).
import assert from "node:assert/strict";
import { relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

const ROOT = fromFileUrl(new URL("..", import.meta.url));

/** Each top-level folder or root file, with its layer's rank (higher imports lower). */
const RANKS: Record<string, number> = {
  "main.ts": 7,
  cli: 7,
  bench: 7,
  soak: 7,
  "app.ts": 6,
  rest: 5,
  schema: 5,
  resolvers: 5,
  graphql: 5,
  dashboard: 5,
  pages: 4,
  inputs: 3,
  services: 2,
  infra: 1,
  db: 1,
  "config.ts": 1,
};
/** Transports: same rank, but never importing one another. */
const TRANSPORT: Record<string, string> = {
  rest: "rest",
  schema: "graphql",
  resolvers: "graphql",
  graphql: "graphql",
  dashboard: "dashboard",
};
const SOURCE_TOPS = [...Object.keys(RANKS), "client"];

async function* sourceFiles(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* sourceFiles(path);
    else if (/\.tsx?$/.test(entry.name)) yield path;
  }
}

/** Every source file's local imports (paths relative to the repository), from deno's graph. */
async function importGraph(): Promise<Map<string, Set<string>>> {
  const files: string[] = [];
  for (const top of SOURCE_TOPS) {
    const path = `${ROOT}${top}`;
    const stat = await Deno.stat(path).catch(() => null);
    if (!stat) continue;
    if (stat.isFile) files.push(path);
    else for await (const f of sourceFiles(path)) files.push(f);
  }
  // One graph for all of them: a module that imports every source file.
  const dir = await Deno.makeTempDir();
  const all = `${dir}/all.ts`;
  await Deno.writeTextFile(all, files.map((f) => `import "file://${f}";`).join("\n"));
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", all],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  await Deno.remove(dir, { recursive: true });
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: {
      specifier: string;
      dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
    }[];
  };
  const local = (specifier: string) =>
    specifier.startsWith(`file://${ROOT}`) ? relative(ROOT, fromFileUrl(specifier)) : null;
  const graph = new Map<string, Set<string>>();
  for (const m of info.modules) {
    const from = local(m.specifier);
    if (!from || from.startsWith("..")) continue;
    const to = new Set<string>();
    for (const d of m.dependencies ?? []) {
      for (const s of [d.code?.specifier, d.type?.specifier]) {
        const target = s && local(s);
        if (target) to.add(target);
      }
    }
    graph.set(from, to);
  }
  return graph;
}

const graph = await importGraph();
const top = (file: string) => file.split("/")[0]!;

Deno.test("layout: the graph covers the server's files", () => {
  for (
    const file of ["main.ts", "app.ts", "rest/frame.ts", "services/feed/feed.ts", "db/connect.ts"]
  ) {
    assert.ok(graph.has(file), `${file} is not in the import graph`);
  }
});

Deno.test("layout: every import points down the layers, and no transport imports another", () => {
  const problems: string[] = [];
  for (const [from, targets] of graph) {
    const fromTop = top(from);
    for (const to of targets) {
      const toTop = top(to);
      if (fromTop === toTop) continue;
      if (fromTop === "client") {
        problems.push(`${from} → ${to}: client/ imports nothing of the server`);
        continue;
      }
      const [a, b] = [RANKS[fromTop], RANKS[toTop]];
      if (a === undefined || b === undefined) continue;
      const [ta, tb] = [TRANSPORT[fromTop], TRANSPORT[toTop]];
      if (ta && tb && ta !== tb) problems.push(`${from} → ${to}: one transport imports another`);
      else if (b > a) problems.push(`${from} → ${to}: an import up the layers`);
    }
  }
  assert.deepEqual(problems, []);
});

/** The strongly connected components of more than one file (Tarjan). */
function cycles(g: Map<string, Set<string>>): string[][] {
  let index = 0;
  const stack: string[] = [];
  const on = new Set<string>();
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of g.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) found.push(scc.sort());
    }
  };
  for (const v of g.keys()) if (!idx.has(v)) visit(v);
  return found;
}

Deno.test("layout: no import cycle", () => {
  assert.deepEqual(cycles(graph), []);
});

Deno.test("layout: the cycle check finds a cycle", () => {
  const g = new Map([["a.ts", new Set(["b.ts"])], ["b.ts", new Set(["c.ts"])], [
    "c.ts",
    new Set(["a.ts"]),
  ]]);
  assert.deepEqual(cycles(g), [["a.ts", "b.ts", "c.ts"]]);
});
