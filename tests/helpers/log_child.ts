// A process that logs through the production writer, then ends as `Deno.args[0]` says: "end"
// (returns), "exit" (Deno.exit(3)), "throw" (an uncaught error) or "reject" (an unhandled
// rejection). tests/log_test.ts checks that no line is lost in any of them.
import { createLogger, installFlushOnExit, stdoutLines } from "../../infra/log.ts";

installFlushOnExit(stdoutLines);
const logger = createLogger("info", stdoutLines.write);
const [mode, count] = [Deno.args[0], Number(Deno.args[1])];
// Inside a callback, as a request handler would: its lines are still queued when it ends.
setTimeout(() => {
  for (let i = 0; i < count; i++) logger.info("line", { i });
  if (mode === "exit") Deno.exit(3);
  if (mode === "throw") throw new Error("crash");
  if (mode === "reject") void Promise.reject(new Error("crash"));
}, 0);
