// The suite runs the service in-process, so the test task's permissions are the service's: every
// test file runs with the start task's four permissions plus --allow-run (for child processes),
// and only the browser tests, which drive Chromium through playwright-core (it reads /proc, which
// Deno allows only under -A), run with -A. A test that needs more than the start task grants
// fails here instead of passing in CI and failing in production.
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);
const flags = (command: string) =>
  command.split(/\s+/).filter((a) => /^(-A|--allow-)/.test(a)).sort();

Deno.test("the test task grants the service what the start task does, plus --allow-run; only *_browser_test.ts files get -A", async () => {
  const { tasks } = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const [service, browser, ...rest] = (tasks.test as string).split(" && ");
  assert.equal(rest.length, 0);
  assert.deepEqual(flags(service!), [...flags(tasks.start), "--allow-run"].sort());
  assert.match(service!, /--ignore=tests\/\*_browser_test\.ts tests\/$/);
  assert.deepEqual(flags(browser!), ["-A"]);
  assert.match(browser!, / tests\/\*_browser_test\.ts$/);
});

Deno.test("every test file that drives a browser is named *_browser_test.ts, and no other is", async () => {
  const wrong: string[] = [];
  for await (const entry of Deno.readDir(new URL("tests/", ROOT))) {
    if (!entry.isFile || !entry.name.endsWith("_test.ts")) continue;
    const text = await Deno.readTextFile(new URL(`tests/${entry.name}`, ROOT));
    const drives = /from\s+["'](\.\/helpers\/browser\.ts|playwright-core)["']/.test(text);
    if (drives !== entry.name.endsWith("_browser_test.ts")) wrong.push(entry.name);
  }
  assert.deepEqual(wrong, []);
});
