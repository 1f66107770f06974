// db/closed_write.ts: postgres.js's write after a closed connection (thrown from a timer) no
// longer ends the process; any other uncaught error still does. The whole service under real
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
  const other = await run("other");
  assert.notEqual(other.code, 0);
  assert.equal(other.stdout, "");
});
