// DATABASE_URL naming PostgreSQL's Unix socket the way libpq reads it (`?host=/directory`):
// the driver connects through the socket, and main.ts does so under the start task's
// permissions (a socket is a file to Deno: --allow-read and --allow-write).
import assert from "node:assert/strict";
import { driverTarget } from "../db/target.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { listening, startService } from "./helpers/process.ts";
import { ADMIN_TOKEN } from "./helpers/server.ts";

const SOCKET_DIR = Deno.env.get("PGSOCKET_DIR") ?? "/var/run/postgresql";

Deno.test("driverTarget: ?host=/dir becomes the socket path; anything else is left alone", () => {
  assert.deepEqual(driverTarget("postgres://u@localhost/db?host=/var/run/postgresql"), {
    url: "postgres://u@localhost/db",
    path: "/var/run/postgresql/.s.PGSQL.5432",
  });
  assert.deepEqual(driverTarget("postgres://u@localhost:6543/db?host=/tmp/&sslmode=disable"), {
    url: "postgres://u@localhost:6543/db?sslmode=disable",
    path: "/tmp/.s.PGSQL.6543",
  });
  assert.deepEqual(driverTarget("postgres://u@db.internal:5432/db"), {
    url: "postgres://u@db.internal:5432/db",
  });
  // Not a directory: postgres.js's own handling, unchanged.
  assert.deepEqual(driverTarget("postgres://u@h/db?host=other"), {
    url: "postgres://u@h/db?host=other",
  });
});

async function socketExists(port: string): Promise<boolean> {
  try {
    await Deno.stat(`${SOCKET_DIR}/.s.PGSQL.${port}`);
    return true;
  } catch {
    return false;
  }
}

const base = Deno.env.get("DATABASE_URL");
const port = base ? new URL(base).port || "5432" : "";
const usable = base !== undefined && await socketExists(port);

Deno.test({
  name: "main.ts with the start task's permissions serves over a Unix-socket DATABASE_URL" +
    (usable ? "" : ` (ignored: needs DATABASE_URL and its socket in ${SOCKET_DIR})`),
  ignore: !usable,
  async fn() {
    const db = await createTestDatabase({ migrate: false });
    const service = startService({
      // The host part is ignored when ?host= names the socket's directory.
      DATABASE_URL: (() => {
        const u = new URL(db.url);
        u.hostname = "localhost";
        u.searchParams.set("host", SOCKET_DIR);
        return u.toString();
      })(),
      ADMIN_TOKEN,
    });
    try {
      const url = await listening(service);
      const created = await fetch(`${url}/api/v1/admin/projects`, {
        method: "POST",
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "over the socket" }),
      });
      assert.equal(created.status, 201, await created.text());
      // It really went through the socket: the server saw a connection with no client address.
      const sql = db.pool(1);
      const rows = await sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and application_name like 'link-event-feed/%'
          and client_addr is null
      `;
      assert.ok(rows[0]!.n > 0, "no socket connection of the service in pg_stat_activity");
    } finally {
      await service.stop();
      await db.close();
    }
  },
});
