// Secrets at rest and in logs: every secret the service hands out or takes in (a project key, a
// feed token, a destination's signing secret, a password, an sk_ key, dashboard sessions, an
// account's setup link, the admin token, the OpenID Connect client secret) is used the way
// clients use it, including through query strings and failed attempts; then neither a pg_dump of
// the database nor any line the server logged during the whole test holds one of them. They are
// kept as hashes; the destination secret, which must sign, is kept sealed (encrypted).
import assert from "node:assert/strict";
import { createLogger } from "../infra/log.ts";
import { ManualClock } from "./helpers/clock.ts";
import { getPage, postForm, signInOverHttp } from "./helpers/dashboard.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  call,
  createFeedToken,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

const OIDC_CLIENT_SECRET = "oidc-client-secret-never-logged-0123456789";
const PASSWORD = "a password nobody may read back";
const WRONG_PASSWORD = "a wrong password also never logged";

const lines: string[] = [];
const srv = await startTestServer({
  clock: new ManualClock("2026-06-01T09:00:00Z"),
  // Everything the server says, debug included.
  logger: createLogger("debug", (line) => lines.push(line)),
  config: {
    DESTINATIONS_ALLOW_PRIVATE: "true",
    // A provider that is not there: the sign-in that tries it logs a warning.
    OIDC_ISSUER: "http://127.0.0.1:9/",
    OIDC_CLIENT_ID: "feeds",
    OIDC_CLIENT_SECRET,
  },
});
Deno.test.afterAll(() => srv.close());

/** The PostgreSQL client tools' pg_dump: on PATH, or where Debian puts version 15's. */
async function pgDump(url: string): Promise<string> {
  for (const bin of ["pg_dump", "/usr/lib/postgresql/15/bin/pg_dump"]) {
    try {
      const out = await new Deno.Command(bin, { args: ["--dbname", url], stderr: "piped" })
        .output();
      if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
      return new TextDecoder().decode(out.stdout);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  throw new Error("pg_dump is not installed");
}

/** Every row of every table, as text: the same question asked of any database (PGlite too). */
async function allRows(): Promise<string> {
  const tables = await srv.sql<{ name: string }[]>`
    select format('%I.%I', schemaname, tablename) as name from pg_tables
    where schemaname not in ('pg_catalog', 'information_schema')
  `;
  const parts: string[] = [];
  for (const { name } of tables) {
    const rows = await srv.sql.unsafe(`select t::text as row from ${name} t`);
    parts.push(...rows.map((r) => String(r.row)));
  }
  return parts.join("\n");
}

Deno.test("no secret value is in a pg_dump of the database or in any log line", async () => {
  const secrets = new Map<string, string>([["admin token", ADMIN_TOKEN]]);
  secrets.set("OIDC client secret", OIDC_CLIENT_SECRET);
  secrets.set("password", PASSWORD);
  secrets.set("wrong password", WRONG_PASSWORD);

  // A project (its key), used by the SDK API.
  const project = await createProject(srv.url, { name: "Secret keeper" });
  secrets.set("project key", project.key);
  const sdk = await call(srv.url, "GET", "/api/v1/sdk/metrics_for_project", {
    headers: { "PROJECT-KEY": project.key, ENVIRONMENT: "production" },
  });
  assert.equal(sdk.status, 200, sdk.text);

  // A feed token, used to read the feed.
  const feed = await createFeedToken(srv.url, project.productionId);
  secrets.set("feed token", feed.value);
  const read = await call(srv.url, "GET", `/api/v1/projects/${project.productionId}/event_stream`, {
    headers: { Authorization: `Bearer ${feed.value}` },
  });
  assert.equal(read.status, 200, read.text);

  // A destination: its signing secret.
  const dest = await call(
    srv.url,
    "POST",
    `/api/v1/projects/${project.productionId}/destinations`,
    {
      headers: adminHeaders,
      body: { url: "http://127.0.0.1:9/hooks" },
    },
  );
  assert.equal(dest.status, 201, dest.text);
  const signing: string = dest.body.destination.secret;
  assert.match(signing, /^whsec_/);
  secrets.set("destination secret", signing);
  secrets.set("destination secret (its key)", signing.slice("whsec_".length));

  // An account that sets its password through its setup link (in the URL's query string), and
  // so gets a session; another whose link stays unused.
  const ada = await call(srv.url, "POST", "/api/v1/admin/accounts", {
    headers: adminHeaders,
    body: { email: "ada@example.test", name: "Ada" },
  });
  assert.equal(ada.status, 201, ada.text);
  const adaToken = new URL(ada.body.setup_url).searchParams.get("token")!;
  secrets.set("used setup link", adaToken);
  assert.equal((await getPage(srv.url, `/dashboard/setup?token=${adaToken}`)).status, 200);
  const setUp = await postForm(srv.url, "/dashboard/setup", { cookie: "" }, {
    token: adaToken,
    password: PASSWORD,
    confirm: PASSWORD,
  });
  assert.equal(setUp.status, 303, setUp.text);
  secrets.set("setup session", setUp.headers.get("set-cookie")!.split(";")[0]!.split("=")[1]!);
  const bob = await call(srv.url, "POST", "/api/v1/admin/accounts", {
    headers: adminHeaders,
    body: { email: "bob@example.test", name: "Bob" },
  });
  const bobToken = new URL(bob.body.setup_url).searchParams.get("token")!;
  secrets.set("unused setup link", bobToken);
  assert.equal((await getPage(srv.url, `/dashboard/setup?token=${bobToken}`)).status, 200);

  // Password sign-ins: a wrong one, then the right one (a dashboard session).
  const wrong = await postForm(srv.url, "/dashboard/sign-in", { cookie: "" }, {
    email: "ada@example.test",
    password: WRONG_PASSWORD,
  });
  assert.equal(wrong.status, 401);
  const right = await postForm(srv.url, "/dashboard/sign-in", { cookie: "" }, {
    email: "ada@example.test",
    password: PASSWORD,
  });
  assert.equal(right.status, 303);
  secrets.set("password session", right.headers.get("set-cookie")!.split(";")[0]!.split("=")[1]!);

  // The instance admin's dashboard session, and its form token.
  const admin = await signInOverHttp(srv.url);
  secrets.set("admin session", admin.cookie.split("=")[1]!);
  secrets.set("admin session's form token", admin.csrf);

  // An sk_ key, used, and one that does not exist.
  const key = await call(srv.url, "POST", `/api/v1/projects/${project.productionId}/api_keys`, {
    headers: adminHeaders,
    body: { name: "ci", scopes: ["links:read"], expires_at: null },
  });
  assert.equal(key.status, 201, key.text);
  const sk: string = key.body.api_key.value;
  secrets.set("sk_ key", sk);
  const links = await call(srv.url, "GET", `/api/v1/projects/${project.productionId}/links`, {
    headers: { Authorization: `Bearer ${sk}` },
  });
  assert.equal(links.status, 200, links.text);
  const forged = `sk_${"Z".repeat(40)}`;
  secrets.set("unknown sk_ key", forged);
  const refused = await call(srv.url, "GET", `/api/v1/projects/${project.productionId}/links`, {
    headers: { Authorization: `Bearer ${forged}` },
  });
  assert.equal(refused.status, 401);

  // Single sign-on tried against a provider that is down: refused, and logged as a warning.
  const sso = await call(srv.url, "GET", "/dashboard/sign-in/oidc");
  assert.equal(sso.status, 503);

  // At rest: every row of every table, and pg_dump's whole dump on a real PostgreSQL.
  const rows = await allRows();
  assert.match(rows, /ada@example\.test/, "the rows were read");
  assert.match(rows, /Secret keeper/);
  for (const [what, value] of secrets) {
    assert.ok(!rows.includes(value), `the ${what} is stored as it is`);
  }
  if (!srv.db.embedded) {
    const dump = await pgDump(srv.db.url);
    assert.match(dump, /ada@example\.test/, "the dump holds the data");
    assert.match(dump, /CREATE TABLE public\.accounts/);
    for (const [what, value] of secrets) {
      assert.ok(!dump.includes(value), `the ${what} is in the database dump`);
    }
  }

  // In the logs: the server's every line of this test.
  await srv.views.flush();
  assert.ok(lines.length >= 15, `only ${lines.length} log lines`);
  assert.ok(lines.some((l) => l.includes('"oidc provider unavailable"')));
  for (const line of lines) {
    for (const [what, value] of secrets) {
      assert.ok(!line.includes(value), `the ${what} is in a log line: ${line}`);
    }
  }
});
