// The two postgres.js patches (db/pool_queues.ts, db/closed_write.ts) lean on the driver's
// internals as postgres.js 3.4.9, the latest release, has them. These checks read the installed
// driver's own source and fail as soon as an upgrade changes what a patch relies on, or fixes
// what it works around: the patch is then to be checked against the new release and, if the
// release fixes the fault, deleted.
import assert from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";

const SRC = new URL(".", import.meta.resolve("postgres"));
const source = (file: string) => Deno.readTextFile(fromFileUrl(new URL(file, SRC)));

Deno.test("postgres.js is the release the patches were written for", async () => {
  const imports = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)))
    .imports as Record<
      string,
      string
    >;
  assert.equal(
    imports.postgres,
    "npm:postgres@3.4.9",
    "a new postgres.js: check db/pool_queues.ts (porsager/postgres#747) and db/closed_write.ts " +
      "(#1066, #1208) against it, then update this test",
  );
});

Deno.test("pool_queues.ts: the pool's queues still leave holes, and a query still hands over its connection", async () => {
  const queue = await source("queue.js");
  // shift() leaves a hole at the front that only a shift emptying the array reclaims (#747).
  assert.match(queue, /xs\[index - 1\] = undefined/, "queue.js's shift no longer leaves holes");
  assert.match(queue, /xs\.indexOf\(x\)/);
  const connection = await source("connection.js");
  // The repair reaches the queues through the connection `onexecute` is handed.
  assert.match(connection, /q\.options\.onexecute\(connection\)/);
  const index = await source("index.js");
  // Every move between queues sets the connection's `queue`, which the repair watches.
  assert.match(index, /c\.queue = queue/);
});

Deno.test("closed_write.ts: a scheduled write still reaches a socket that may be gone", async () => {
  const connection = await source("connection.js");
  // nextWrite writes to `socket` without checking it still exists (#1066, #1208): the frame the
  // guard recognises. A release that checks it makes the guard unnecessary.
  assert.match(connection, /function nextWrite\(fn\) \{\n\s+const x = socket\.write\(chunk, fn\)/);
});
