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
  const [service, note, browser, ...rest] = (tasks.test as string).split(" && ");
  assert.equal(rest.length, 0);
  assert.deepEqual(flags(service!), [...flags(tasks.start), "--allow-run"].sort());
  assert.match(service!, /^deno test --config tests\/deno\.json /);
  assert.match(service!, /--ignore=tests\/\*_browser_test\.ts tests\/$/);
  // Between the two: the line saying that the browser tests are skipped, and how to install it.
  assert.equal(note, "deno run --allow-env --allow-read tests/helpers/chromium.ts");
  assert.deepEqual(flags(browser!), ["-A"]);
  assert.match(browser!, /^deno test --config tests\/deno\.json /);
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

Deno.test("every test of a *_browser_test.ts file is declared with the browser helper's test, which alone decides to skip it", async () => {
  // Where Chromium is missing, all of them are ignored, or (REQUIRE_BROWSER=1) none: no file
  // throws at load, fails instead of skipping, or skips on a rule of its own.
  const wrong: string[] = [];
  for await (const entry of Deno.readDir(new URL("tests/", ROOT))) {
    if (!entry.name.endsWith("_browser_test.ts")) continue;
    const text = await Deno.readTextFile(new URL(`tests/${entry.name}`, ROOT));
    const declared = text.match(/^test\(/gm)?.length ?? 0;
    if (declared === 0) wrong.push(`${entry.name}: no test declared with test()`);
    if (/Deno\.test(\.(ignore|only))?\(/.test(text)) wrong.push(`${entry.name}: Deno.test`);
    if (/^\s+(ignore|only):/m.test(text)) wrong.push(`${entry.name}: ignore or only of its own`);
    if (/hasChromium|CHROMIUM/.test(text)) wrong.push(`${entry.name}: its own Chromium check`);
    // A browser launched as the file loads would fail it where the tests are skipped.
    if (/^(const|let) \w+ = await launchBrowser\(/m.test(text)) {
      wrong.push(`${entry.name}: launches the browser at load even when skipped`);
    }
    if (!/import \{[^}]*\btest\b[^}]*\} from "\.\/helpers\/browser\.ts"/.test(text)) {
      wrong.push(`${entry.name}: test() is not the one of helpers/browser.ts`);
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("without Chromium, browser tests are ignored and one line says how to install it; with REQUIRE_BROWSER=1 they fail", async () => {
  const dir = await Deno.makeTempDir({ prefix: "browser-skip-" });
  const helper = new URL("tests/helpers/browser.ts", ROOT).href;
  // Both ways of declaring one, as the *_browser_test.ts files do.
  await Deno.writeTextFile(
    `${dir}/x_browser_test.ts`,
    `import { launchBrowser, test } from "${helper}";
test("by name", async () => await (await launchBrowser()).close());
test({ name: "by definition", async fn() { await (await launchBrowser()).close(); } });
`,
  );
  const run = async (env: Record<string, string>, ...args: string[]) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args,
      cwd: ROOT,
      // REQUIRE_BROWSER is the run's own (CI sets it): each case says whether it is set.
      env: { NO_COLOR: "1", CHROMIUM_PATH: `${dir}/no-chromium`, REQUIRE_BROWSER: "", ...env },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decode = (b: Uint8Array) => new TextDecoder().decode(b);
    return { code: out.code, text: decode(out.stdout) + decode(out.stderr) };
  };
  try {
    const note = await run({}, "run", "--allow-env", "--allow-read", "tests/helpers/chromium.ts");
    assert.equal(note.code, 0);
    assert.equal(
      note.text,
      `Chromium is not installed at ${dir}/no-chromium: the browser tests are skipped (ignored). ` +
        "Install it: apt-get update && apt-get install -y chromium\n",
    );
    const file = `${dir}/x_browser_test.ts`;
    const test = ["test", "--config", "tests/deno.json", "--no-check", "-A", file];
    const skipped = await run({}, ...test);
    assert.equal(skipped.code, 0, skipped.text);
    assert.match(skipped.text, /^ok \| 0 passed \| 0 failed \| 2 ignored/m);
    const required = await run({ REQUIRE_BROWSER: "1" }, ...test);
    assert.notEqual(required.code, 0);
    assert.match(required.text, /^FAILED \| 0 passed \| 2 failed/m);
    assert.match(required.text, /executable doesn't exist/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
