// A process with the closed-connection guard that throws from a timer, as postgres.js does:
// deno run tests/helpers/closed_write_child.ts <postgres|ended|other>
import { setImmediate } from "node:timers";
import { surviveClosedConnectionWrites } from "../../db/closed_write.ts";

let caught = 0;
surviveClosedConnectionWrites(() => caught++);
// "ended": the other form, a write to a socket the server already ended, rejected unhandled.
const FRAME = `    at Immediate.nextWrite ` +
  `(file:///cache/npm/registry.npmjs.org/postgres/3.4.9/src/connection.js:255:22)`;
if (Deno.args[0] === "ended") {
  const err = new Error("This socket has been ended by the other party");
  err.stack = `Error: ${err.message}\n    at Socket._writeAfterFIN [as write] ` +
    `(ext:deno_node/net.ts:1:10175)\n${FRAME}`;
  setImmediate(() => void Promise.reject(err));
} else {
  setImmediate(() => {
    const err = new TypeError("Cannot read properties of null (reading 'write')");
    if (Deno.args[0] === "postgres") {
      // The frame postgres.js 3.4.9 throws from (src/connection.js, nextWrite).
      err.stack = `TypeError: ${err.message}\n${FRAME}`;
    }
    throw err;
  });
}
setTimeout(() => {
  Deno.stdout.writeSync(new TextEncoder().encode(`alive, caught ${caught}\n`));
}, 50);
