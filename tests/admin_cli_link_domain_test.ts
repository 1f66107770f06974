// deno task admin set-link-domain / set-apps: the same rules as the HTTP admin API.
import assert from "node:assert/strict";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

async function admin(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/admin.ts", ...args],
    env: { DATABASE_URL: srv.db.url, LINK_BASE_URL: "https://lnk.example.test" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

// The CLI is a second process on the test's database: the embedded one serves a single
// connection, held by the test server, so this runs on real PostgreSQL.
Deno.test({
  name: "admin CLI sets the link domain and apps, and refuses a bad value naming the field",
  ignore: srv.db.embedded,
}, async () => {
  const p = await createProject(srv.url, { name: "CLI" });
  const domain = await admin("set-link-domain", "--project", p.hashid, "--domain", "Go.Cli.Test");
  assert.equal(domain.code, 0, domain.stderr);
  assert.equal(JSON.parse(domain.stdout).project.link_domain, "go.cli.test");

  const ios = { team_id: "ABCDE12345", bundle_id: "com.cli.app", scheme: "cli" };
  const apps = await admin("set-apps", "--project", p.hashid, "--ios", JSON.stringify(ios));
  assert.equal(apps.code, 0, apps.stderr);
  assert.deepEqual(JSON.parse(apps.stdout).project.apps, { ios });

  const bad = await admin(
    "set-apps",
    "--project",
    p.hashid,
    "--android",
    JSON.stringify({ package: "com.cli.app", sha256_cert_fingerprints: ["AB:CD"] }),
  );
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /apps\.android\.sha256_cert_fingerprints\[0\]: /);
  const res = await call(srv.url, "GET", `/api/v1/admin/projects/${p.hashid}`, {
    headers: adminHeaders,
  });
  assert.deepEqual(res.body.project.apps, { ios });

  const none = await admin("set-link-domain", "--project", p.hashid, "--none");
  assert.equal(none.code, 0, none.stderr);
  assert.equal(JSON.parse(none.stdout).project.link_domain, null);
});
