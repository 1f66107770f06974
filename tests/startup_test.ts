import assert from "node:assert/strict";
import postgres from "postgres";
import { adminTokenWeakness, resolveConfig } from "../config.ts";
import { randomToken } from "../infra/secrets.ts";
import { migrate } from "../db/migrate.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { listening, startService } from "./helpers/process.ts";
import { ADMIN_TOKEN, adminHeaders, call } from "./helpers/server.ts";

/** Every migration folder's number, in order: each must be applied exactly once. */
const MIGRATION_IDS = [...Deno.readDirSync(new URL("../db/migrations", import.meta.url))]
  .filter((e) => e.isDirectory && /^[0-9]{5}_/.test(e.name))
  .map((e) => Number(e.name.slice(0, 5)))
  .sort((a, b) => a - b);

const realPostgres = Boolean(Deno.env.get("DATABASE_URL"));

Deno.test("config: defaults resolve without any environment", () => {
  const c = resolveConfig({});
  assert.equal(c.port, 8000);
  assert.equal(c.databaseUrl, null);
  assert.equal(c.dataDir, "./data");
  assert.equal(c.linkBaseUrl, "http://localhost:8000");
  assert.equal(c.feedRateLimit, 120);
  assert.equal(c.analyticsRetentionDays, 90);
  assert.equal(resolveConfig({ PORT: "9000" }).linkBaseUrl, "http://localhost:9000");
  assert.equal(
    resolveConfig({ LINK_BASE_URL: "https://l.example.com/" }).linkBaseUrl,
    "https://l.example.com",
  );
});

Deno.test("config: a bad value names the variable and what is wrong", () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ PORT: "eighty" }, /^PORT: /],
    [{ PORT: "70000" }, /^PORT: /],
    [{ DATABASE_URL: "mysql://x" }, /^DATABASE_URL: must start with postgres/],
    [{ DATABASE_URL: "postgres://x/db" }, /^ADMIN_TOKEN: required when DATABASE_URL is set/],
    [{ ADMIN_TOKEN: "short" }, /^ADMIN_TOKEN: must be at least 16/],
    [{ CURSOR_SECRET: "short" }, /^CURSOR_SECRET: must be at least 32/],
    [{ LINK_BASE_URL: "ftp://x" }, /^LINK_BASE_URL: must be an http\(s\) URL/],
    [{ ANALYTICS_RETENTION_DAYS: "0" }, /^ANALYTICS_RETENTION_DAYS: /],
    [{ LOG_LEVEL: "loud" }, /^LOG_LEVEL: /],
    [{ DEFAULT_HOST_APPS_PROJECT: "not/a hashid" }, /^DEFAULT_HOST_APPS_PROJECT: must be a/],
  ];
  for (const [env, message] of cases) {
    assert.throws(() => resolveConfig(env), (err: Error) => {
      assert.equal(err.name, "ConfigError");
      assert.match(err.message, message);
      return true;
    });
  }
});

Deno.test("config: ADMIN_TOKEN's strength rule takes generated tokens and refuses weak ones", () => {
  const hex48 = () =>
    Array.from(crypto.getRandomValues(new Uint8Array(24)), (b) => b.toString(16).padStart(2, "0"))
      .join("");
  // `openssl rand -hex 24`, `openssl rand -base64 32`, the embedded default's, the tests' own.
  for (let i = 0; i < 200; i++) assert.equal(adminTokenWeakness(hex48()), null);
  assert.equal(
    adminTokenWeakness(btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))),
    null,
  );
  assert.equal(adminTokenWeakness("adm_" + randomToken(32)), null);
  assert.equal(adminTokenWeakness(ADMIN_TOKEN), null);
  const weak: [string, RegExp][] = [
    ["changeme-admin-token", /is 20 characters; it must be at least 32/],
    ["abcdefghijklmnopqrstuvwxyzabcdefgh", /at least two kinds/],
    ["a".repeat(40) + "1", /at least 10 different characters/],
    ["ab12".repeat(10), /at least 10 different characters/],
  ];
  for (const [token, why] of weak) assert.match(adminTokenWeakness(token) ?? "", why, token);
});

Deno.test("main.ts: a new instance refuses a weak ADMIN_TOKEN; one set up before it keeps starting and says what to do", async () => {
  const weak = "weak-admin-token-12345";
  const db = realPostgres ? await createTestDatabase({ migrate: false }) : null;
  const dataDir = await Deno.makeTempDir();
  const env = (token: string): Record<string, string> =>
    db ? { DATABASE_URL: db.url, ADMIN_TOKEN: token } : { DATA_DIR: dataDir, ADMIN_TOKEN: token };
  try {
    const refused = startService(env(weak));
    // It exits instead of listening (and is stopped should it listen after all).
    await assert.rejects(listening(refused, 180_000).finally(() => refused.stop()));
    assert.equal((await refused.status).code, 1);
    assert.equal(
      refused.stderr().trim(),
      "configuration error: ADMIN_TOKEN: too weak for a new instance: it is 22 characters; " +
        "it must be at least 32; generate one with `openssl rand -hex 24`",
    );
    // Refused before anything was set up: it is still a new instance, and still refuses.
    const again = startService(env(weak));
    assert.equal((await again.status).code, 1);

    // Set up with a strong token, then restarted with a weak one (as an instance upgraded from
    // before the rule): it starts, takes that token, and says loudly what to do.
    const strong = startService(env(ADMIN_TOKEN));
    await listening(strong, 180_000);
    assert.equal((await strong.stop()).code, 0);
    const upgraded = startService(env(weak));
    try {
      const url = await listening(upgraded);
      const res = await call(url, "POST", "/api/v1/admin/projects", {
        headers: { Authorization: `Bearer ${weak}` },
        body: { name: "Still works" },
      });
      assert.equal(res.status, 201);
      const line = upgraded.stdout().split("\n").find((l) => l.includes("ADMIN_TOKEN is weak"));
      assert.ok(line, upgraded.stdout());
      const logged = JSON.parse(line);
      assert.equal(logged.level, "error");
      assert.match(logged.problem, /is 22 characters/);
      assert.match(logged.advice, /openssl rand -hex 24/);
      assert.ok(!line.includes(weak), "the token itself is never logged");
      assert.match(upgraded.stderr(), /WARNING: ADMIN_TOKEN is weak/);
    } finally {
      await upgraded.stop();
    }
  } finally {
    await db?.close();
  }
});

Deno.test("main.ts: bad configuration stops start-up with one line and no stack trace", async () => {
  const p = startService({ PORT: "eighty", DATA_DIR: await Deno.makeTempDir() });
  const status = await p.status;
  assert.equal(status.code, 1);
  assert.equal(
    p.stderr().trim(),
    "configuration error: PORT: must be a port number from 0 to 65535",
  );
  assert.ok(!p.stderr().includes("    at "));
});

Deno.test("main.ts: a GEOIP_DATABASE that is not a MaxMind database stops start-up, saying so", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/country.mmdb`, "<html>a download page, not a database</html>");
    const p = startService({ DATA_DIR: dir, GEOIP_DATABASE: `${dir}/country.mmdb` });
    assert.equal((await p.status).code, 1);
    assert.match(
      p.stderr().trim(),
      /^configuration error: GEOIP_DATABASE: \S+country\.mmdb is not a MaxMind DB file/,
    );
    assert.ok(!p.stderr().includes("    at "));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main.ts: the embedded default serves, prints the admin token once and keeps data", async () => {
  const dataDir = await Deno.makeTempDir();
  const first = startService({ DATA_DIR: dataDir });
  let token = "";
  let hashid = "";
  try {
    // The embedded database's first start (initdb in WebAssembly) is slow on a loaded machine.
    const url = await listening(first, 180_000);
    assert.equal((await call(url, "GET", "/readyz")).status, 200);
    const m = first.stderr().match(/\b(adm_[A-Za-z0-9_-]{43})\b/);
    assert.ok(m, `no admin token printed: ${first.stderr()}`);
    token = m[1]!;
    assert.equal(adminTokenWeakness(token), null);
    const created = await call(url, "POST", "/api/v1/admin/projects", {
      headers: { Authorization: `Bearer ${token}` },
      body: { name: "Kept", enterprise: true },
    });
    assert.equal(created.status, 201);
    hashid = created.body.project.id;
    // The token is never logged in the JSON log lines.
    assert.ok(!first.stdout().includes(token));
  } finally {
    assert.equal((await first.stop()).code, 0);
  }

  const second = startService({ DATA_DIR: dataDir });
  try {
    const url = await listening(second);
    assert.ok(!second.stderr().includes("adm_"), "the token is printed only at first start");
    const got = await call(url, "GET", `/api/v1/admin/projects/${hashid}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.equal(got.status, 200);
    assert.equal(got.body.project.name, "Kept");
  } finally {
    await second.stop();
  }
});

Deno.test("main.ts: a second process on the same embedded data directory is refused", async () => {
  const dataDir = await Deno.makeTempDir();
  const first = startService({ DATA_DIR: dataDir });
  try {
    // The embedded database's first start (initdb in WebAssembly) took over 60 s once at load 16.
    await listening(first, 180_000);
    const second = startService({ DATA_DIR: dataDir });
    const status = await second.status;
    assert.equal(status.code, 1);
    assert.match(second.stderr(), /in use by another process/);
  } finally {
    await first.stop();
  }
});

Deno.test({
  name: "main.ts: with DATABASE_URL it serves, and two instances started together both come up",
  ignore: !realPostgres,
  async fn() {
    const db = await createTestDatabase({ migrate: false });
    const env = { DATABASE_URL: db.url, ADMIN_TOKEN, DATA_DIR: "/nonexistent" };
    const a = startService(env);
    const b = startService(env);
    try {
      const [ua, ub] = await Promise.all([listening(a), listening(b)]);
      for (const url of [ua, ub]) assert.equal((await call(url, "GET", "/readyz")).status, 200);
      const created = await call(ua, "POST", "/api/v1/admin/projects", {
        headers: adminHeaders,
        body: { name: "Shared" },
      });
      assert.equal(created.status, 201);
      const got = await call(ub, "GET", `/api/v1/admin/projects/${created.body.project.id}`, {
        headers: adminHeaders,
      });
      assert.equal(got.status, 200);
      const sql = postgres(db.url, { max: 1, onnotice: () => {} });
      const rows = await sql`select migration_id from migrations order by migration_id`;
      await sql.end();
      assert.deepEqual(rows.map((r) => r.migration_id), MIGRATION_IDS);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await db.close();
    }
  },
});

Deno.test({
  name: "main.ts: DATABASE_URL without ADMIN_TOKEN is a start-up error",
  async fn() {
    const p = startService({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/none" });
    assert.equal((await p.status).code, 1);
    assert.match(p.stderr(), /^configuration error: ADMIN_TOKEN: required/);
  },
});

Deno.test({
  name: "migrate: concurrent runs on one empty database apply each migration once",
  ignore: !realPostgres,
  async fn() {
    const db = await createTestDatabase({ migrate: false });
    try {
      await Promise.all([migrate(db.url), migrate(db.url), migrate(db.url)]);
      const sql = db.pool(1);
      const rows = await sql`select migration_id from migrations order by migration_id`;
      assert.deepEqual(rows.map((r) => r.migration_id), MIGRATION_IDS);
    } finally {
      await db.close();
    }
  },
});
