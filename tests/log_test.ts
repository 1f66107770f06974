// The production logger writes its lines in batches (one write per turn of the event loop, or per
// 64 KiB), and loses none when the process ends by an exit, an uncaught error or a rejection.
import assert from "node:assert/strict";
import { batchedLines, createLogger } from "../infra/log.ts";

/** The end of the current turn of the event loop, when batched lines are written. */
const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("lines logged in one turn of the event loop go out in one write, in order", async () => {
  const writes: string[] = [];
  const lines = batchedLines((bytes) => writes.push(new TextDecoder().decode(bytes)));
  const logger = createLogger("info", lines.write);
  for (let i = 0; i < 100; i++) logger.info("hit", { i });
  assert.equal(writes.length, 0, "nothing is written before the turn ends");
  await nextTurn();
  assert.equal(writes.length, 1);
  const out = writes[0]!.split("\n");
  assert.equal(out.pop(), "");
  assert.deepEqual(out.map((l) => JSON.parse(l).i), [...Array(100).keys()]);
});

Deno.test("a turn that logs more than 64 KiB writes as it goes, never more than 64 KiB queued", async () => {
  const writes: Uint8Array[] = [];
  const lines = batchedLines((bytes) => writes.push(bytes));
  const line = "x".repeat(999);
  for (let i = 0; i < 200; i++) lines.write(line);
  assert.equal(writes.length, 3, "200 KB queued in one turn: three writes of 64 KiB or more");
  await nextTurn();
  assert.equal(writes.length, 4);
  const total = writes.reduce((n, w) => n + w.length, 0);
  assert.equal(total, 200 * 1000);
  lines.flush();
  assert.equal(writes.length, 4, "an empty queue writes nothing");
});

for (const mode of ["end", "exit", "throw", "reject"]) {
  Deno.test(`a process that ends by ${mode} has written every line it logged`, async () => {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", new URL("./helpers/log_child.ts", import.meta.url).pathname, mode, "5000"],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    });
    const { code, stdout } = await child.output();
    assert.equal(code, { end: 0, exit: 3, throw: 1, reject: 1 }[mode]);
    const got = new TextDecoder().decode(stdout).split("\n").filter((l) => l !== "");
    assert.equal(got.length, 5000);
    assert.deepEqual(got.map((l) => JSON.parse(l).i), [...Array(5000).keys()]);
  });
}
