// The two configurations: deno.json holds what the service, its CLIs and client/ run, and
// tests/deno.json that plus the packages only the tests and the docs/ examples use. Deno fetches
// every package of a configuration's lock file before it runs a task, so a test-only package in
// deno.json would be fetched by every first `deno task start`; and the tests must run the very
// packages the service runs.
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);
const readJson = async (path: string) => JSON.parse(await Deno.readTextFile(new URL(path, ROOT)));

// deno-lint-ignore no-explicit-any
type Lock = { specifiers: Record<string, string>; npm: Record<string, any> };

Deno.test("tests/deno.json has deno.json's imports, compiler options, lint and fmt, and adds only imports", async () => {
  const service = await readJson("deno.json");
  const tests = await readJson("tests/deno.json");
  for (const [name, target] of Object.entries(service.imports)) {
    assert.equal(tests.imports[name], target, `tests/deno.json: ${name}`);
  }
  for (const key of ["compilerOptions", "lint", "fmt", "nodeModulesDir"]) {
    assert.deepEqual(tests[key], service[key], key);
  }
});

Deno.test("tests/deno.lock resolves every package of deno.lock as deno.lock does", async () => {
  const service: Lock = await readJson("deno.lock");
  const tests: Lock = await readJson("tests/deno.lock");
  for (const [specifier, version] of Object.entries(service.specifiers)) {
    assert.equal(tests.specifiers[specifier], version, specifier);
  }
  // A dependency list may name a package with or without its version (without when the lock has
  // one version of it), so the packages and their integrity are compared, not the lists' text.
  for (const [pkg, entry] of Object.entries(service.npm)) {
    assert.equal(tests.npm[pkg]?.integrity, entry.integrity, pkg);
  }
});

async function* sourceFiles(dir: URL): AsyncGenerator<URL> {
  for await (const entry of Deno.readDir(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) yield* sourceFiles(url);
    else if (/\.tsx?$/.test(entry.name)) yield url;
  }
}

Deno.test("every import of deno.json is used outside tests/ and docs/: it holds nothing test-only", async () => {
  const { imports, tasks } = await readJson("deno.json");
  // What the check task checks with deno.json: the service, its CLIs, client/, bench/, soak/.
  const serviceCheck = (tasks.check as string).split(" && ")[0]!.split(/\s+/).slice(2);
  assert.ok(serviceCheck.includes("main.ts") && !serviceCheck.includes("tests/"));
  const used = new Set<string>();
  const files: URL[] = [];
  for (const path of serviceCheck) {
    if (!path.endsWith("/")) files.push(new URL(path, ROOT));
    else for await (const file of sourceFiles(new URL(path, ROOT))) files.push(file);
  }
  for (const file of files) {
    const text = await Deno.readTextFile(file);
    for (const m of text.matchAll(/(?:from|import\()\s*["']([^"'.][^"']*)["']/g)) used.add(m[1]!);
    // The JSX runtime comes from compilerOptions.jsxImportSource.
    if (file.pathname.endsWith(".tsx")) used.add("hono/jsx");
  }
  // By package: "csv-parse/sync" uses csv-parse whichever of its two keys maps it.
  const packageOf = (target: string) => target.replace(/^npm:\/?/, "").replace(/(.)@.*$/, "$1");
  const usedPackages = new Set<string>();
  for (const specifier of used) {
    for (const [name, target] of Object.entries(imports as Record<string, string>)) {
      const key = name.endsWith("/") ? name : `${name}/`;
      if (specifier === name || specifier.startsWith(key)) usedPackages.add(packageOf(target));
    }
  }
  const unused = Object.values(imports as Record<string, string>).map(packageOf)
    .filter((pkg) => !usedPackages.has(pkg));
  assert.deepEqual([...new Set(unused)], [], "only tests use these: move them to tests/deno.json");
});
