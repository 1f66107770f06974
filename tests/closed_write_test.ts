// db/closed_write.ts: postgres.js's write after a closed connection (thrown from a timer) and a
// query nobody awaits, lost with its connection, no longer end the process; any other uncaught
// error still does. The whole service under real
// connection terminations is the soak's part (tests/soak_test.ts).
import assert from "node:assert/strict";

const CHILD = new URL("./helpers/closed_write_child.ts", import.meta.url).pathname;

/** Runs `child` with `permissions` and argument `kind`: its exit code and what it printed. */
async function runChild(child: string, kind: string, permissions: string[] = ["--allow-read"]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissions, child, kind],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

const run = (kind: string) => runChild(CHILD, kind);

/** The child lived on, its guard having caught exactly one error. */
function assertSurvived(result: { code: number; stdout: string }) {
  assert.equal(result.code, 0);
  assert.equal(result.stdout.trim(), "alive, caught 1");
}

/** The child died before it could say it lived. */
function assertEnded(result: { code: number; stdout: string }) {
  assert.notEqual(result.code, 0);
  assert.equal(result.stdout, "");
}

Deno.test("postgres.js's write after a closed connection is survived; other errors are not", async () => {
  assertSurvived(await run("postgres"));
  // A write to a socket the server already ended, rejected with no handler (seen in the soak).
  assertSurvived(await run("ended"));
  assertEnded(await run("other"));
});

const LOST_CHILD = new URL("./helpers/lost_query_child.ts", import.meta.url).pathname;
const databaseUrl = Deno.env.get("DATABASE_URL");

Deno.test({
  name: "a query nobody awaits, lost with its connection, is survived with the guard" +
    (databaseUrl ? "" : " (ignored: needs DATABASE_URL)"),
  ignore: !databaseUrl,
  async fn() {
    const run = (kind: string) =>
      runChild(LOST_CHILD, kind, ["--allow-net", "--allow-env", "--allow-read"]);
    assertSurvived(await run("guarded"));
    // Without the guard the same rejection ends the process, as it did in the soak.
    assertEnded(await run("unguarded"));
  },
});

Deno.test("a query nobody awaits, failed by its connection's reset, is survived; other errors are not", async () => {
  const run = (kind: string) => runChild(LOST_CHILD, kind, ["--allow-env", "--allow-read"]);
  assertSurvived(await run("reset"));
  assertEnded(await run("unrelated"));
});
