// Start-up waits for its database (services/maintenance/wait_for_database.ts): a step that fails
// because the database is unavailable runs again after a growing pause, within its patience; any
// other failure stops start-up at once. Then the real main.ts, under the start task's
// permissions: started before its database listens, and with its connections terminated while it
// migrates a new database (how an instance died in the soak, tests/soak_test.ts, when it was
// restarted just before the database's connections were terminated).
import assert from "node:assert/strict";
import postgres from "postgres";
import { createDatabase, dropDatabase } from "../db/databases.ts";
import { createLogger } from "../infra/log.ts";
import { pauseAfter, untilDatabaseAnswers } from "../services/maintenance/wait_for_database.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { listening, startService } from "./helpers/process.ts";

const databaseUrl = Deno.env.get("DATABASE_URL");
const ADMIN_TOKEN = "start-up-wait-admin-token-0123456789abcdef";

/** A loopback port nothing listens on (it was free a moment ago). */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** A clock that only moves when start-up pauses, and the pauses it was asked for. */
function fakeTime() {
  let t = 0;
  const pauses: number[] = [];
  return {
    pauses,
    now: () => t,
    sleep: (ms: number) => {
      pauses.push(ms);
      t += ms;
      return Promise.resolve();
    },
  };
}

function collectingLogger() {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger("debug", (line) => lines.push(JSON.parse(line))) };
}

Deno.test("a start-up step is run again while the database is unavailable, then answers", async () => {
  const db = await createTestDatabase({ migrate: false });
  // The real refusal of a port nothing listens on, three times, then the real database.
  const nowhere = postgres(`postgres://postgres@127.0.0.1:${freePort()}/postgres`, {
    max: 1,
    onnotice: () => {},
  });
  const there = db.pool(1);
  try {
    const time = fakeTime();
    const { lines, logger } = collectingLogger();
    let attempts = 0;
    const answer = await untilDatabaseAnswers("test step", async () => {
      attempts++;
      const sql = attempts <= 3 ? nowhere : there;
      const [row] = await sql<{ n: number }[]>`select 41 + 1 as n`;
      return row!.n;
    }, { logger, now: time.now, sleep: time.sleep });
    assert.equal(answer, 42);
    assert.equal(attempts, 4);
    assert.deepEqual(time.pauses, [250, 500, 1000]);
    assert.deepEqual(
      lines.map((l) => [l.msg, l.step, l.attempt, l.retry_in_ms, l.message]),
      [1, 2, 3].map((attempt) => [
        "database unavailable during start-up; trying again",
        "test step",
        attempt,
        pauseAfter(attempt),
        lines[attempt - 1]!.message,
      ]),
    );
    assert.match(String(lines[0]!.message), /ECONNREFUSED/);
  } finally {
    await nowhere.end({ timeout: 1 });
    await db.close();
  }
});

Deno.test("start-up gives up when its patience is spent, and at once on any other error", async () => {
  const db = await createTestDatabase({ migrate: false });
  const nowhere = postgres(`postgres://postgres@127.0.0.1:${freePort()}/postgres`, {
    max: 1,
    onnotice: () => {},
  });
  try {
    const time = fakeTime();
    const { logger } = collectingLogger();
    await assert.rejects(
      untilDatabaseAnswers("refused", () => nowhere`select 1`.execute(), {
        logger,
        patienceMs: 1_000,
        now: time.now,
        sleep: time.sleep,
      }),
      (err: { code?: string }) => err.code === "ECONNREFUSED",
    );
    // 250 + 500 fit in a second; the next pause (1,000 ms) would end past it.
    assert.deepEqual(time.pauses, [250, 500]);
    assert.equal(pauseAfter(20), 5_000, "the pause is capped");

    // A statement the database refuses is not the database's unavailability: no second try.
    const other = fakeTime();
    const sql = db.pool(1);
    await assert.rejects(
      untilDatabaseAnswers("bad statement", () => sql`select * from no_such_table`.execute(), {
        logger,
        now: other.now,
        sleep: other.sleep,
      }),
      (err: { code?: string }) => err.code === "42P01",
    );
    assert.deepEqual(other.pauses, []);
  } finally {
    await nowhere.end({ timeout: 1 });
    await db.close();
  }
});

/**
 * A TCP forwarder on `port` to the PostgreSQL of `upstream` that drops the first `dropFirst`
 * connections as soon as they send anything.
 */
function forwarder(port: number, upstream: URL, dropFirst: number) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port });
  const conns = new Set<Deno.Conn>();
  let seen = 0;
  const pipe = (from: Deno.Conn, to: Deno.Conn) =>
    from.readable.pipeTo(to.writable).catch(() => {}).finally(() => {
      try {
        to.close();
      } catch { /* closed */ }
    });
  const accepting = (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      if (seen++ < dropFirst) {
        void conn.read(new Uint8Array(64)).finally(() => conn.close());
        continue;
      }
      const up = await Deno.connect({
        hostname: upstream.hostname,
        port: Number(upstream.port || 5432),
      });
      conns.add(up);
      void pipe(conn, up);
      void pipe(up, conn);
    }
  })().catch(() => {});
  return {
    dropped: () => Math.min(seen, dropFirst),
    async close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      await accepting;
    },
  };
}

Deno.test({
  name: "an instance started before its database listens waits, then serves" +
    (databaseUrl ? "" : " (ignored: needs DATABASE_URL)"),
  ignore: !databaseUrl,
  async fn() {
    const name = `t_wait_${Date.now().toString(36)}`;
    const url = new URL(await createDatabase(databaseUrl!, name));
    const port = freePort();
    const viaPort = new URL(url);
    viaPort.hostname = "127.0.0.1";
    viaPort.port = String(port);
    const service = startService({
      DATABASE_URL: viaPort.toString(),
      ADMIN_TOKEN,
      LOG_LEVEL: "info",
    });
    let proxy: ReturnType<typeof forwarder> | null = null;
    try {
      // Refused until something listens: the instance says so and keeps trying.
      for (let i = 0; i < 600 && !service.stdout().includes("trying again"); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.match(service.stdout(), /"step":"migrations".*ECONNREFUSED/);
      // The database "comes up", and its first connection is dropped as it opens.
      proxy = forwarder(port, url, 1);
      const base = await listening(service, 90_000);
      const ready = await fetch(`${base}/readyz`);
      assert.equal(ready.status, 200, await ready.text());
      assert.equal(proxy.dropped(), 1);
    } finally {
      const status = await service.stop();
      assert.equal(status.code, 0, service.stderr());
      await proxy?.close();
      await dropDatabase(databaseUrl!, name);
    }
  },
});

Deno.test({
  name: "an instance whose connections are terminated while it migrates does not die of it" +
    (databaseUrl ? "" : " (ignored: needs DATABASE_URL)"),
  ignore: !databaseUrl,
  async fn() {
    const name = `t_wait_${Date.now().toString(36)}`;
    const url = await createDatabase(databaseUrl!, name);
    const admin = postgres(databaseUrl!, { max: 1, onnotice: () => {} });
    const service = startService({ DATABASE_URL: url, ADMIN_TOKEN, LOG_LEVEL: "info" });
    try {
      // Every connection of the new database's first seconds is terminated as it appears: the
      // migrations' among them (a new database takes seconds to migrate).
      let terminated = 0;
      const until = Date.now() + 1_500;
      while (Date.now() < until || terminated === 0) {
        const [row] = await admin<{ n: number }[]>`
          select count(*)::int as n from (
            select pg_terminate_backend(pid) from pg_stat_activity
            where datname = ${name} and pid <> pg_backend_pid()
          ) t`;
        terminated += row!.n;
        await new Promise((r) => setTimeout(r, 10));
      }
      const base = await listening(service, 90_000);
      assert.ok(terminated > 0);
      assert.match(service.stdout(), /database unavailable during start-up; trying again/);
      const ready = await fetch(`${base}/readyz`);
      assert.equal(ready.status, 200, await ready.text());
      // It serves: a project made through the admin API.
      const made = await fetch(`${base}/api/v1/admin/projects`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "after the wait" }),
      });
      assert.equal(made.status, 201, await made.text());
    } finally {
      const status = await service.stop();
      assert.equal(status.code, 0, service.stderr());
      await admin.end({ timeout: 5 });
      await dropDatabase(databaseUrl!, name);
    }
  },
});
