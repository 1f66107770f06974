// db/closed_write.ts: postgres.js's write after a closed connection (thrown from a timer) and a
// query nobody awaits, lost with its connection, no longer end the process; any other uncaught
// error still does. The whole service under real
// connection terminations is the soak's part (tests/soak_test.ts).
import assert from "node:assert/strict";

const CHILD = new URL("./helpers/closed_write_child.ts", import.meta.url).pathname;

async function run(kind: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", CHILD, kind],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

Deno.test("postgres.js's write after a closed connection is survived; other errors are not", async () => {
  const survived = await run("postgres");
  assert.equal(survived.code, 0);
  assert.equal(survived.stdout.trim(), "alive, caught 1");
  // A write to a socket the server already ended, rejected with no handler (seen in the soak).
  const ended = await run("ended");
  assert.equal(ended.code, 0);
  assert.equal(ended.stdout.trim(), "alive, caught 1");
  const other = await run("other");
  assert.notEqual(other.code, 0);
  assert.equal(other.stdout, "");
});

const LOST_CHILD = new URL("./helpers/lost_query_child.ts", import.meta.url).pathname;
const databaseUrl = Deno.env.get("DATABASE_URL");

Deno.test({
  name: "a query nobody awaits, lost with its connection, is survived with the guard" +
    (databaseUrl ? "" : " (ignored: needs DATABASE_URL)"),
  ignore: !databaseUrl,
  async fn() {
    const run = async (kind: string) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-net", "--allow-env", "--allow-read", LOST_CHILD, kind],
        stdout: "piped",
        stderr: "piped",
      }).output();
      return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
    };
    const guarded = await run("guarded");
    assert.equal(guarded.code, 0);
    assert.equal(guarded.stdout.trim(), "alive, caught 1");
    // Without the guard the same rejection ends the process, as it did in the soak.
    const unguarded = await run("unguarded");
    assert.notEqual(unguarded.code, 0);
    assert.equal(unguarded.stdout, "");
  },
});
