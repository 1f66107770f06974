// postgres.js 3.4.9 (the latest release) can throw from a write it scheduled with setImmediate
// after the server closed the connection and postgres.js had dropped its socket: "Cannot read
// properties of null (reading 'write')" in connection.js's nextWrite (porsager/postgres#1066,
// #1154, #1208; fixed by unreleased pull requests). Thrown from a timer, it escapes every
// promise, and uncaught it ends the process whenever PostgreSQL restarts or terminates the
// service's connections. By then postgres.js has already failed that connection's queries with
// CONNECTION_CLOSED (answered as 503) and reconnects for the next ones: nothing else is lost.
//
// The same write can also meet a socket that is still there but already ended by the server:
// Node's net (Deno's node:net too) then fails it with "This socket has been ended by the other
// party" (EPIPE), which reaches no handler and surfaces as an unhandled rejection (seen in the
// soak, tests/soak_test.ts, when PostgreSQL terminated the service's connections).
//
// This recognises those two errors by their frame in postgres.js and keeps the process up; every
// other uncaught error still ends it.

const POSTGRES_WRITE_FRAME = /nextWrite .*postgres\/[0-9.]+\/src\/connection\.js/;

export function isClosedConnectionWrite(error: unknown): boolean {
  if (!(error instanceof Error) || !POSTGRES_WRITE_FRAME.test(error.stack ?? "")) return false;
  return (error instanceof TypeError &&
    error.message === "Cannot read properties of null (reading 'write')") ||
    error.message === "This socket has been ended by the other party";
}

/** Installs the guard for the life of the process; `onCaught` is told of each occurrence. */
export function surviveClosedConnectionWrites(onCaught: () => void): void {
  globalThis.addEventListener("error", (event) => {
    if (!isClosedConnectionWrite(event.error)) return;
    event.preventDefault();
    onCaught();
  });
  globalThis.addEventListener("unhandledrejection", (event) => {
    if (!isClosedConnectionWrite(event.reason)) return;
    event.preventDefault();
    onCaught();
  });
}

// postgres.js fails a query with one of these when its connection is lost (its Errors.connection),
// PostgreSQL sends 57P01 when it terminates the backend, and the socket itself fails with
// ECONNRESET (the server reset it) or EPIPE (written after the server closed it).
const LOST_CONNECTION_CODES: ReadonlySet<string> = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "57P01",
  "ECONNRESET",
  "EPIPE",
]);

export function isLostConnection(reason: unknown): boolean {
  const code = (reason as { code?: unknown } | null)?.code;
  return typeof code === "string" && LOST_CONNECTION_CODES.has(code);
}

/**
 * The same for a query's promise that nobody awaits any more when its connection is lost: its
 * rejection, unhandled, would end the process (the short soak saw `Uncaught (in promise) Error:
 * write CONNECTION_CLOSED` right after the database terminated the service's connections, its
 * owner not found). Every background worker is built to survive the process dying at any point
 * (each says what it guarantees then), so a query lost with its connection, which no one was
 * waiting for, is no worse than that death and costs less than one: it is logged through
 * `onCaught` and the process stays up. Any other unhandled rejection still ends it.
 *
 * postgres.js makes one such query itself: each connection, once open, asks for the array types
 * (connection.js, fetchArrayTypes) and nobody awaits it. A connection terminated right then
 * rejected it with `read ECONNRESET` and ended an instance that was waiting for its database
 * (tests/start_up_wait_test.ts). That loses nothing: the connection asks again when it reconnects.
 */
export function surviveLostConnectionRejections(onCaught: (reason: unknown) => void): void {
  globalThis.addEventListener("unhandledrejection", (event) => {
    if (!isLostConnection(event.reason)) return;
    event.preventDefault();
    onCaught(event.reason);
  });
}
