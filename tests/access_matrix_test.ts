// Every admin REST route against an API key with each scope (and one of another environment),
// every dashboard page and form against a session of each role (and an outsider's): allowed or
// refused exactly as docs/access.md's table says (helpers/access_table.ts, written by hand, not
// read from permissions.ts), and a refused request changes nothing (row counts and the audit log
// unchanged).
import assert from "node:assert/strict";
import { isOperation, type Operation, type Role, SCOPES } from "../services/access/permissions.ts";
import { EXPECTED_ACCESS, roleMay } from "./helpers/access_table.ts";
import { routeAccess } from "../services/access/routes.ts";
import { getPage, postForm } from "./helpers/dashboard.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer({ config: { DESTINATIONS_ALLOW_PRIVATE: "true" } });
Deno.test.afterAll(() => srv.close());

const project = await createProject(srv.url, { name: "Matrix" });
const elsewhere = await createProject(srv.url, { name: "Elsewhere" });
const admin = (method: string, path: string, body?: unknown) =>
  call(srv.url, method, path, { headers: adminHeaders, body });
const env = project.productionId;
const link = (await admin("POST", `/api/v1/projects/${env}/links`, { title: "Matrix link" }))
  .body.link.path as string;

const routes = [...new Map(
  srv.app.routes.filter((r) => r.method !== "ALL").map((r) => [
    `${r.method} ${r.path}`,
    r,
  ]),
).values()].map((r) => ({
  method: r.method,
  path: r.path,
  operation: routeAccess(r.method, r.path)!,
})).filter((r): r is { method: string; path: string; operation: Operation } =>
  isOperation(r.operation)
);

function concrete(path: string, hashid: string, linkPath = link): string {
  return path
    .replace(":project_id", String(env))
    .replace(":hashid", hashid)
    .replace(/:(token_id|destination_id|account_id|key_id)/, "999999")
    .replace(/:(link_path|path)/, linkPath);
}

/** Deleting routes get a link of their own each time, so the shared one stays for the others. */
const DELETES_LINK = new Set([
  "DELETE /api/v1/projects/:project_id/links/:link_path",
  "POST /dashboard/environments/:project_id/links/:path/delete",
]);
let made = 0;
async function linkFor(key: string): Promise<string> {
  if (!DELETES_LINK.has(key)) return link;
  const res = await admin("POST", `/api/v1/projects/${env}/links`, {
    title: `To delete ${++made}`,
  });
  return res.body.link.path as string;
}

/**
 * The links routes main added, allowed: the answer each must give (not merely "not refused"),
 * and whether it is a change (then exactly one audit entry is written).
 */
const LINK_ROUTES_ALLOWED: Record<string, { status: number; change: boolean }> = {
  "GET /api/v1/projects/:project_id/links": { status: 200, change: false },
  "POST /api/v1/projects/:project_id/links": { status: 201, change: true },
  "PATCH /api/v1/projects/:project_id/links/:link_path": { status: 200, change: true },
  "DELETE /api/v1/projects/:project_id/links/:link_path": { status: 204, change: true },
  "POST /api/v1/projects/:project_id/links/import": { status: 201, change: true },
  "GET /api/v1/projects/:project_id/links/export": { status: 200, change: false },
  "GET /api/v1/projects/:project_id/analytics": { status: 200, change: false },
  "GET /api/v1/projects/:project_id/events_per_day": { status: 200, change: false },
  "GET /dashboard/environments/:project_id/links/new": { status: 200, change: false },
  "POST /dashboard/environments/:project_id/links": { status: 303, change: true },
  "POST /dashboard/environments/:project_id/links/:path/active": { status: 303, change: true },
  "GET /dashboard/environments/:project_id/links/:path/edit": { status: 200, change: false },
  "POST /dashboard/environments/:project_id/links/:path/edit": { status: 303, change: true },
  "POST /dashboard/environments/:project_id/links/:path/archive": { status: 303, change: true },
  "GET /dashboard/environments/:project_id/links/:path/delete": { status: 200, change: false },
  "POST /dashboard/environments/:project_id/links/:path/delete": { status: 303, change: true },
  "POST /dashboard/environments/:project_id/links/import": { status: 303, change: true },
  "GET /dashboard/environments/:project_id/links/export.csv": { status: 200, change: false },
};

/** The dashboard's CSV import is a multipart upload: the form token first, then the file. */
let imports = 0;
async function postImport(url: string, s: { cookie: string; csrf: string }) {
  const form = new FormData();
  form.append("_csrf", s.csrf);
  form.append(
    "file",
    new Blob([`path,title\nmatrix-import-${++imports},Imported\n`], { type: "text/csv" }),
    "links.csv",
  );
  const res = await fetch(srv.url + url, {
    method: "POST",
    body: form,
    headers: { cookie: s.cookie, Origin: srv.url },
    redirect: "manual",
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const auditCount = async () =>
  Number((await srv.sql`select count(*)::int as n from audit_log`)[0]!.n);

/** Checks an allowed request on one of LINK_ROUTES_ALLOWED did what it should. */
async function checkAllowedLinkRoute(
  key: string,
  label: string,
  status: number,
  auditBefore: number,
) {
  const expected = LINK_ROUTES_ALLOWED[key];
  if (!expected) return;
  assert.equal(status, expected.status, label);
  assert.equal(await auditCount() - auditBefore, expected.change ? 1 : 0, `${label}: audit`);
}

/** Bodies that would change something if the request were allowed (a string: a CSV). */
const REST_BODIES: Record<string, unknown> = {
  "POST /api/v1/projects/:project_id/links": { title: "made by a key" },
  "PATCH /api/v1/projects/:project_id/links/:link_path": { active: false },
  "POST /api/v1/projects/:project_id/links/import": "title\nImported by a key\n",
  "POST /api/v1/projects/:project_id/event_stream_tokens": { name: "t" },
  "POST /api/v1/projects/:project_id/api_keys": { name: "k", scopes: ["admin"] },
  "POST /api/v1/projects/:project_id/destinations": { url: "http://127.0.0.1:9/hook" },
  "POST /api/v1/admin/projects": { name: "by a key" },
  "PATCH /api/v1/admin/projects/:hashid": { name: "renamed" },
  "POST /api/v1/admin/accounts": { email: "k@example.test", name: "K" },
  "PUT /api/v1/admin/projects/:hashid/members/:account_id": { role: "viewer" },
};

async function snapshot(): Promise<string> {
  const [row] = await srv.sql`
    select (select count(*) from audit_log) as audit, (select count(*) from links) as links,
      (select count(*) from feed_tokens where revoked_at is null) as tokens,
      (select count(*) from api_keys where revoked_at is null) as keys,
      (select count(*) from destinations) as destinations,
      (select count(*) from accounts) as accounts,
      (select count(*) from project_members) as members,
      (select string_agg(name || key_hash || enterprise, ',' order by id) from projects) as projects,
      (select string_agg(path || active, ',' order by id) from links) as states
  `;
  return JSON.stringify(row);
}

Deno.test("every admin REST route: a key is allowed or refused exactly as the table says", async () => {
  const keys: Record<string, string> = {};
  for (const scope of SCOPES) {
    keys[scope] = (await admin("POST", `/api/v1/projects/${env}/api_keys`, {
      name: scope,
      scopes: [scope],
    })).body.api_key.value;
  }
  const otherEnv = (await admin("POST", `/api/v1/projects/${project.testId}/api_keys`, {
    name: "test env",
    scopes: [...SCOPES],
  })).body.api_key.value as string;
  const rest = routes.filter((r) => r.path.startsWith("/api/v1/"));
  assert.ok(rest.length >= 25, `${rest.length} routes`);
  let allowed = 0;
  for (const r of rest) {
    const permission = EXPECTED_ACCESS[r.operation];
    const key = `${r.method} ${r.path}`;
    const query = r.path.endsWith("/:project_id/export") ? "?from=2026-01-01&to=2026-01-02" : "";
    const environmentRoute = r.path.includes(":project_id");
    const cases: [string, string, string | null][] = [
      ...SCOPES.map((s): [string, string, string | null] => [
        `key with ${s}`,
        keys[s]!,
        !environmentRoute || permission.scope === null
          ? "forbidden"
          : permission.scope === s
          ? null
          : "insufficient_scope",
      ]),
      ["another environment's key", otherEnv, "forbidden"],
    ];
    for (const [who, value, refusal] of cases) {
      const url = concrete(r.path, project.hashid, await linkFor(key)) + query;
      const before = await snapshot();
      const auditBefore = await auditCount();
      const body = r.method === "GET" ? undefined : (REST_BODIES[key] ?? {});
      const res = await call(srv.url, r.method, url, {
        headers: {
          Authorization: `Bearer ${value}`,
          ...(typeof body === "string" ? { "Content-Type": "text/csv" } : {}),
        },
        ...(typeof body === "string" ? { raw: body } : { body }),
      });
      if (refusal === null) {
        assert.ok(![401, 403].includes(res.status), `${key}, ${who}: ${res.status} ${res.text}`);
        await checkAllowedLinkRoute(key, `${key}, ${who}: ${res.text}`, res.status, auditBefore);
        allowed++;
      } else {
        assert.equal(res.status, 403, `${key}, ${who}: ${res.status} ${res.text}`);
        assert.equal(res.body.error.code, refusal, `${key}, ${who}`);
        if (refusal === "insufficient_scope") {
          assert.match(res.body.error.message, new RegExp(`"${permission.scope}"`));
        }
        assert.equal(await snapshot(), before, `${key}, ${who}: a refused request changed data`);
      }
    }
  }
  assert.ok(allowed >= 15, `only ${allowed} allowed cases`);
});

/** Forms that would change something if the request were allowed. */
const DASHBOARD_FORMS: Record<string, Record<string, string>> = {
  "POST /dashboard/environments/:project_id/links": { title: "Made in the matrix" },
  "POST /dashboard/environments/:project_id/links/:path/active": { active: "true" },
  "POST /dashboard/environments/:project_id/links/:path/edit": { title: "Edited in the matrix" },
  "POST /dashboard/environments/:project_id/links/:path/archive": { archived: "false" },
};

const PASSWORD = "matrix password 0123";

/** A live stream's status, without waiting for a stream that never ends. */
async function openStream(path: string, cookie: string): Promise<{ status: number }> {
  const res = await fetch(srv.url + path, { headers: { cookie }, redirect: "manual" });
  await res.body?.cancel();
  return { status: res.status };
}

async function personWithRole(name: string, role: Role | null) {
  const email = `${name}@example.test`;
  const made = await admin("POST", "/api/v1/admin/accounts", { email, name });
  const id = made.body.account.id as number;
  if (role) {
    await admin("PUT", `/api/v1/admin/projects/${project.hashid}/members/${id}`, { role });
  } else {
    // The outsider owns another project: a member of something, not of this one.
    await admin("PUT", `/api/v1/admin/projects/${elsewhere.hashid}/members/${id}`, {
      role: "owner",
    });
  }
  const token = new URL(made.body.setup_url).searchParams.get("token")!;
  const res = await postForm(srv.url, "/dashboard/setup", { cookie: "" }, {
    token,
    password: PASSWORD,
    confirm: PASSWORD,
  });
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  const home = await getPage(srv.url, "/dashboard", { cookie });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(home.text)![1]!;
  return { cookie, csrf };
}

Deno.test("every dashboard page and form: each role is allowed or refused as the table says", async () => {
  // The owner first: a project with members keeps an owner.
  const people: [string, Role | null][] = [
    ["owner", "owner"],
    ["admin", "admin"],
    ["editor", "editor"],
    ["viewer", "viewer"],
    ["outsider", null],
  ];
  const sessions: { name: string; role: Role | null; cookie: string; csrf: string }[] = [];
  for (const [name, role] of people) {
    sessions.push({ name, role, ...await personWithRole(name, role) });
  }
  const dashboard = routes.filter((r) => r.path.startsWith("/dashboard"));
  assert.ok(dashboard.length >= 40, `${dashboard.length} routes`);
  for (const r of dashboard) {
    const key = `${r.method} ${r.path}`;
    for (const s of sessions) {
      const url = concrete(r.path, project.hashid, await linkFor(key));
      const may = roleMay(s.role, r.operation);
      const before = await snapshot();
      const auditBefore = await auditCount();
      const res = r.path.endsWith("/live/stream")
        ? await openStream(url, s.cookie)
        : r.method === "GET"
        ? await getPage(srv.url, url, s)
        : r.path.endsWith("/links/import")
        ? await postImport(url, s)
        : await postForm(srv.url, url, s, { _csrf: s.csrf, ...DASHBOARD_FORMS[key] });
      const label = `${r.method} ${r.path} as ${s.name}`;
      if (may) {
        assert.notEqual(res.status, 403, `${label}: ${res.status}`);
        await checkAllowedLinkRoute(key, label, res.status, auditBefore);
      } else {
        assert.equal(res.status, 403, `${label}: ${res.status}`);
        assert.equal(await snapshot(), before, `${label}: a refused request changed data`);
      }
    }
  }
});
