// A process with the lost-connection guard whose query nobody awaits fails when the database
// terminates its backend (a real PostgreSQL, DATABASE_URL):
// deno run -A tests/helpers/lost_query_child.ts <guarded|unguarded|reset|unrelated>
// "reset" and "unrelated" need no database: the socket's own error for a connection the server
// reset, as postgres.js rejects its array-type query with it (db/closed_write.ts), and an error
// of the same shape from no connection at all, which the guard must not swallow.
import postgres from "postgres";
import { surviveLostConnectionRejections } from "../../db/closed_write.ts";

let caught = 0;
if (Deno.args[0] !== "unguarded") surviveLostConnectionRejections(() => caught++);
if (Deno.args[0] === "reset" || Deno.args[0] === "unrelated") {
  const err = Object.assign(new Error("read ECONNRESET"), {
    code: Deno.args[0] === "reset" ? "ECONNRESET" : "ENOENT",
    errno: -104,
    syscall: "read",
  });
  void Promise.reject(err);
  await new Promise((r) => setTimeout(r, 50));
  Deno.stdout.writeSync(new TextEncoder().encode(`alive, caught ${caught}\n`));
  Deno.exit(0);
}
const url = Deno.env.get("DATABASE_URL")!;
const sql = postgres(url, { max: 1, onnotice: () => {} });
const admin = postgres(url, { max: 1, onnotice: () => {} });
const [row] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
const pid = row!.pid;
// Started, then left: the promise .then returns has no handler, as a forgotten one would.
sql`select pg_sleep(30)`.then(() => {});
await new Promise((r) => setTimeout(r, 200));
// Typed: Citus adds pg_terminate_backend(bigint, bigint), and an untyped parameter is ambiguous.
await admin`select pg_terminate_backend(${pid}::int)`;
await new Promise((r) => setTimeout(r, 300));
Deno.stdout.writeSync(new TextEncoder().encode(`alive, caught ${caught}\n`));
await Promise.all([sql.end({ timeout: 1 }), admin.end({ timeout: 1 })]);
