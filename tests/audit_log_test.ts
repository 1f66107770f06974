// The audit log: each change, through the admin API or the dashboard, writes exactly one entry
// with the right actor, in its own transaction; a refused or failed request writes none; the
// per-project and instance lists page newest first; no secret value is ever in an entry.
import assert from "node:assert/strict";
import { getPage, postForm, signInOverHttp } from "./helpers/dashboard.ts";
import {
  adminHeaders,
  assertError,
  call,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

const srv = await startTestServer({ config: { DESTINATIONS_ALLOW_PRIVATE: "true" } });
Deno.test.afterAll(() => srv.close());

interface Entry {
  id: number;
  at: string;
  actor: { type: string; id: number | null; name: string };
  action: string;
  target: { type: string; id: string };
  detail: Record<string, number> | null;
  request_id: string | null;
}

const maxId = async () =>
  Number((await srv.sql`select coalesce(max(id), 0)::int as n from audit_log`)[0]!.n);
const since = async (id: number) =>
  (await call(srv.url, "GET", "/api/v1/admin/audit_log?limit=100", { headers: adminHeaders }))
    .body.entries.filter((e: Entry) => e.id > id) as Entry[];

/** Runs `change`, which must succeed, and returns the one entry it wrote. */
async function oneEntry(
  change: () => Promise<{ status: number; headers: Headers; text: string }>,
): Promise<Entry & { response: { status: number; headers: Headers; text: string } }> {
  const before = await maxId();
  const response = await change();
  assert.ok(response.status < 400, `${response.status} ${response.text}`);
  const entries = await since(before);
  assert.equal(entries.length, 1, JSON.stringify(entries));
  return { ...entries[0]!, response };
}

/** Runs `change`, which must be refused, and checks it wrote nothing. */
async function noEntry(change: () => Promise<{ status: number }>, status: number) {
  const before = await maxId();
  const res = await change();
  assert.equal(res.status, status);
  assert.deepEqual(await since(before), []);
}

const admin = (method: string, path: string, body?: unknown) =>
  call(srv.url, method, path, { headers: adminHeaders, body });
const secrets: string[] = [];

Deno.test("each admin API change writes one entry with the admin token as its actor", async () => {
  const created = await oneEntry(() =>
    admin("POST", "/api/v1/admin/projects", { name: "Audited", enterprise: true })
  );
  const project = JSON.parse(created.response.text).project;
  secrets.push(project.project_key);
  assert.equal(created.action, "project.create");
  assert.deepEqual(created.actor, { type: "admin_token", id: null, name: "admin token" });
  assert.deepEqual(created.target, { type: "project", id: project.id });
  assert.equal(created.request_id, created.response.headers.get("x-request-id"));
  assert.equal(created.at, srv.clock.now().toISOString(), "dated by the service's clock");
  const env = project.environments.production.project_id;

  const steps: [string, () => ReturnType<typeof admin>, string, string?][] = [
    [
      "project.update",
      () => admin("PATCH", `/api/v1/admin/projects/${project.id}`, { name: "Renamed" }),
      "project",
    ],
    [
      "project.update",
      () =>
        admin("PATCH", `/api/v1/admin/projects/${project.id}`, { link_domain: "go.audit.test" }),
      "project",
    ],
    [
      "project.regenerate_key",
      () => admin("POST", `/api/v1/admin/projects/${project.id}/regenerate_key`),
      "project",
    ],
    [
      "feed_token.create",
      () => admin("POST", `/api/v1/projects/${env}/event_stream_tokens`, { name: "wh" }),
      "feed_token",
    ],
    [
      "destination.create",
      () =>
        admin("POST", `/api/v1/projects/${env}/destinations`, { url: "http://127.0.0.1:9/hook" }),
      "destination",
    ],
    [
      "link.create",
      () => admin("POST", `/api/v1/projects/${env}/links`, { title: "Audited link" }),
      "link",
    ],
    [
      "api_key.create",
      () => admin("POST", `/api/v1/projects/${env}/api_keys`, { name: "ci", scopes: ["admin"] }),
      "api_key",
    ],
  ];
  const ids: Record<string, string> = {};
  for (const [action, step, targetType] of steps) {
    const entry = await oneEntry(step);
    assert.equal(entry.action, action);
    assert.equal(entry.target.type, targetType);
    assert.equal(entry.actor.type, "admin_token");
    ids[targetType] = entry.target.id;
    const body = JSON.parse(entry.response.text);
    for (
      const value of [
        body.project_key,
        body.token?.value,
        body.destination?.secret,
        body.api_key?.value,
      ]
    ) if (value) secrets.push(value);
  }
  const dest = ids["destination"];
  const followUps: [string, () => ReturnType<typeof admin>][] = [
    [
      "link.update",
      () => admin("PATCH", `/api/v1/projects/${env}/links/${ids["link"]}`, { active: false }),
    ],
    [
      "destination.pause",
      () => admin("PATCH", `/api/v1/projects/${env}/destinations/${dest}`, { paused: true }),
    ],
    [
      "destination.resume",
      () => admin("PATCH", `/api/v1/projects/${env}/destinations/${dest}`, { paused: false }),
    ],
    [
      "destination.rotate_secret",
      () => admin("POST", `/api/v1/projects/${env}/destinations/${dest}/rotate_secret`),
    ],
    ["destination.delete", () => admin("DELETE", `/api/v1/projects/${env}/destinations/${dest}`)],
    [
      "feed_token.revoke",
      () => admin("DELETE", `/api/v1/projects/${env}/event_stream_tokens/${ids["feed_token"]}`),
    ],
    ["api_key.revoke", () => admin("DELETE", `/api/v1/projects/${env}/api_keys/${ids["api_key"]}`)],
  ];
  for (const [action, step] of followUps) {
    const entry = await oneEntry(step);
    assert.equal(entry.action, action);
    const body = entry.response.text ? JSON.parse(entry.response.text) : {};
    if (body.secret) secrets.push(body.secret);
  }
});

Deno.test("a change made with an API key names the key as its actor", async () => {
  const p = await createProject(srv.url, { name: "Keyed" });
  const made = await admin("POST", `/api/v1/projects/${p.productionId}/api_keys`, {
    name: "deploy bot",
    scopes: ["links:write", "admin"],
  });
  const key = made.body.api_key;
  secrets.push(key.value);
  const entry = await oneEntry(() =>
    call(srv.url, "POST", `/api/v1/projects/${p.productionId}/links`, {
      headers: { Authorization: `Bearer ${key.value}` },
      body: { title: "by a bot" },
    })
  );
  assert.equal(entry.action, "link.create");
  assert.deepEqual(entry.actor, { type: "api_key", id: key.id, name: "deploy bot" });
});

Deno.test("refused and failed requests write no entry", async () => {
  const p = await createProject(srv.url, { name: "Refusals" });
  const other = await createProject(srv.url, { name: "Holder" });
  await admin("PATCH", `/api/v1/admin/projects/${other.hashid}`, { link_domain: "taken.test" });
  const reader = (await admin("POST", `/api/v1/projects/${p.productionId}/api_keys`, {
    name: "reader",
    scopes: ["links:read"],
  })).body.api_key;
  const env = p.productionId;
  // Unauthenticated, out of scope, another environment.
  await noEntry(
    () => call(srv.url, "POST", "/api/v1/admin/projects", { body: { name: "x" } }),
    401,
  );
  await noEntry(
    () =>
      call(srv.url, "POST", `/api/v1/projects/${env}/links`, {
        headers: { Authorization: `Bearer ${reader.value}` },
        body: { title: "x" },
      }),
    403,
  );
  await noEntry(
    () =>
      call(srv.url, "POST", `/api/v1/projects/${p.testId}/links`, {
        headers: { Authorization: `Bearer ${reader.value}` },
        body: { title: "x" },
      }),
    403,
  );
  // Bad input, unknown targets.
  await noEntry(() => admin("POST", `/api/v1/projects/${env}/api_keys`, { name: "x" }), 400);
  await noEntry(() => admin("DELETE", `/api/v1/projects/${env}/event_stream_tokens/999`), 404);
  await noEntry(() => admin("DELETE", `/api/v1/projects/${env}/destinations/999`), 404);
  await noEntry(
    () => admin("PATCH", `/api/v1/projects/${env}/destinations/999`, { paused: true }),
    404,
  );
  await noEntry(
    () => admin("PATCH", `/api/v1/projects/${env}/links/nosuchlink`, { active: true }),
    404,
  );
  await noEntry(() => admin("POST", "/api/v1/admin/projects/nosuchproject/regenerate_key"), 404);
  // Fails inside the change's transaction (another project has the domain): rolled back whole.
  await noEntry(
    () => admin("PATCH", `/api/v1/admin/projects/${p.hashid}`, { link_domain: "taken.test" }),
    400,
  );
  // A project without Enterprise cannot have a feed token (402).
  const plain = await createProject(srv.url, { name: "Plain", enterprise: false });
  await noEntry(
    () =>
      admin("POST", `/api/v1/projects/${plain.productionId}/event_stream_tokens`, { name: "x" }),
    402,
  );
});

Deno.test("the dashboard's changes are audited the same way", async () => {
  const client = await signInOverHttp(srv.url);
  const created = await oneEntry(() =>
    postForm(srv.url, "/dashboard/projects", client, {
      _csrf: client.csrf,
      name: "From the dashboard",
      enterprise: "on",
    })
  );
  assert.equal(created.action, "project.create");
  assert.equal(created.actor.type, "admin_token");
  assert.equal(created.request_id, created.response.headers.get("x-request-id"));
  const hashid = created.target.id;
  const project = (await admin("GET", `/api/v1/admin/projects/${hashid}`)).body.project;
  const env = project.environments.production.project_id;
  const token = await oneEntry(() =>
    postForm(srv.url, `/dashboard/environments/${env}/tokens`, client, {
      _csrf: client.csrf,
      name: "crm",
    })
  );
  assert.equal(token.action, "feed_token.create");
  const link = await oneEntry(() =>
    postForm(srv.url, `/dashboard/environments/${env}/links`, client, {
      _csrf: client.csrf,
      title: "Dashboard link",
    })
  );
  assert.equal(link.action, "link.create");
  const settings = await oneEntry(() =>
    postForm(srv.url, `/dashboard/projects/${hashid}/apps`, client, {
      _csrf: client.csrf,
      link_domain: "go.dash.test",
    })
  );
  assert.equal(settings.action, "project.update");
  // A form refused for its token writes nothing.
  await noEntry(
    () => postForm(srv.url, "/dashboard/projects", client, { _csrf: "forged", name: "No" }),
    403,
  );
});

/** Runs `read`, which must answer `status`, and checks it wrote nothing. */
const readsNothing = (read: () => Promise<{ status: number }>, status = 200) =>
  noEntry(read, status);

/** A person's account with `role` on the project, signed in to the dashboard. */
async function person(name: string, hashid: string, role: string) {
  const made = await admin("POST", "/api/v1/admin/accounts", {
    email: `${name.toLowerCase().replaceAll(" ", ".")}@audit.test`,
    name,
  });
  const id = made.body.account.id as number;
  const member = await admin("PUT", `/api/v1/admin/projects/${hashid}/members/${id}`, { role });
  assert.equal(member.status, 200, member.text);
  const token = new URL(made.body.setup_url).searchParams.get("token")!;
  const password = `${name} password 0123`;
  const res = await postForm(srv.url, "/dashboard/setup", { cookie: "" }, {
    token,
    password,
    confirm: password,
  });
  assert.equal(res.status, 303, res.text);
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  const home = await getPage(srv.url, "/dashboard", { cookie });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(home.text)![1]!;
  return { id, cookie, csrf };
}

Deno.test("managed links over the API: create, edit, activate, archive, delete and import each write one entry", async () => {
  const p = await createProject(srv.url, { name: "Managed" });
  const env = p.productionId;
  const links = `/api/v1/projects/${env}/links`;
  const created = await oneEntry(() =>
    admin("POST", links, {
      path: "audit-chosen",
      title: "Chosen",
      expires_at: "2030-01-01T00:00:00Z",
    })
  );
  assert.equal(created.action, "link.create");
  assert.deepEqual(created.target, { type: "link", id: "audit-chosen" });
  assert.deepEqual(created.actor, { type: "admin_token", id: null, name: "admin token" });
  assert.equal(created.detail, null);
  assert.equal(created.request_id, created.response.headers.get("x-request-id"));
  for (
    const patch of [
      { title: "Edited", max_views: 10 },
      { active: false },
      { active: true },
      { archived: true },
      { archived: false },
      { expires_at: null },
    ]
  ) {
    const entry = await oneEntry(() => admin("PATCH", `${links}/audit-chosen`, patch));
    assert.equal(entry.action, "link.update", JSON.stringify(patch));
    assert.deepEqual(entry.target, { type: "link", id: "audit-chosen" });
  }
  const deleted = await oneEntry(() => admin("DELETE", `${links}/audit-chosen`));
  assert.equal(deleted.action, "link.delete");
  assert.deepEqual(deleted.target, { type: "link", id: "audit-chosen" });
  assert.equal(deleted.response.status, 204);

  // An import is one entry, whatever its size, with the count.
  const csv = (titles: string[]) => ["title", ...titles].join("\n") + "\n";
  const imported = await oneEntry(() =>
    call(srv.url, "POST", `${links}/import`, {
      headers: { ...adminHeaders, "Content-Type": "text/csv" },
      raw: csv(["One", "Two", "Three"]),
    })
  );
  assert.equal(imported.response.status, 201);
  assert.equal(imported.action, "link.import");
  assert.deepEqual(imported.target, { type: "environment", id: String(env) });
  assert.deepEqual(imported.detail, { count: 3 });
  assert.deepEqual(
    (await admin("GET", `/api/v1/projects/${env}/audit_log?limit=1`)).body.entries[0].detail,
    { count: 3 },
    "the project's list carries the count too",
  );

  // The same through an API key: the key is the actor.
  const key = (await admin("POST", `/api/v1/projects/${env}/api_keys`, {
    name: "importer",
    scopes: ["links:write"],
  })).body.api_key;
  secrets.push(key.value);
  const bearer = { Authorization: `Bearer ${key.value}` };
  const byKey = await oneEntry(() =>
    call(srv.url, "POST", `${links}/import`, {
      headers: { ...bearer, "Content-Type": "text/csv" },
      raw: csv(["Four", "Five"]),
    })
  );
  assert.deepEqual(byKey.actor, { type: "api_key", id: key.id, name: "importer" });
  assert.deepEqual(byKey.detail, { count: 2 });
  const path = (await admin("POST", links, { title: "For the key" })).body.link.path as string;
  const keyDelete = await oneEntry(() =>
    call(srv.url, "DELETE", `${links}/${path}`, { headers: bearer })
  );
  assert.equal(keyDelete.action, "link.delete");
  assert.deepEqual(keyDelete.actor, { type: "api_key", id: key.id, name: "importer" });

  // Refused or failed: nothing written (a bad row rolls the whole import back).
  await noEntry(
    () =>
      call(srv.url, "POST", `${links}/import`, {
        headers: { ...adminHeaders, "Content-Type": "text/csv" },
        raw: "title,max_views\nGood,\nBad,-4\n",
      }),
    400,
  );
  await noEntry(() => admin("DELETE", `${links}/nosuchlink`), 404);
  await noEntry(() => admin("PATCH", `${links}/nosuchlink`, { archived: true }), 404);
  await noEntry(() => admin("POST", links, { path: path, title: "Taken" }), 400);

  // Reads write nothing: the list, the CSV export, analytics, events per day.
  await readsNothing(() => admin("GET", links));
  await readsNothing(() => admin("GET", `${links}/export`));
  await readsNothing(() => admin("GET", `/api/v1/projects/${env}/analytics`));
  await readsNothing(() => admin("GET", `/api/v1/projects/${env}/events_per_day`));
});

Deno.test("the dashboard's link edit, activation, archive and delete each write one entry, a person named as the actor", async () => {
  const client = await signInOverHttp(srv.url);
  const p = await createProject(srv.url, { name: "Dashboard links" });
  const env = p.productionId;
  const base = `/dashboard/environments/${env}/links`;
  const made = await oneEntry(() =>
    postForm(srv.url, base, client, { _csrf: client.csrf, path: "dash-audit", title: "Dash" })
  );
  assert.equal(made.action, "link.create");
  const steps: [string, string, Record<string, string>][] = [
    ["link.update", "edit", { title: "Dash v2", desktop_url: "https://dash.example/" }],
    ["link.update", "active", { active: "false" }],
    ["link.update", "active", { active: "true" }],
    ["link.update", "archive", { archived: "true" }],
    ["link.update", "archive", { archived: "false" }],
  ];
  for (const [action, form, fields] of steps) {
    const entry = await oneEntry(() =>
      postForm(srv.url, `${base}/dash-audit/${form}`, client, { _csrf: client.csrf, ...fields })
    );
    assert.equal(entry.action, action, form);
    assert.deepEqual(entry.target, { type: "link", id: "dash-audit" });
    assert.equal(entry.actor.type, "admin_token");
    assert.equal(entry.request_id, entry.response.headers.get("x-request-id"));
  }
  // A bad edit is refused whole.
  await noEntry(
    () =>
      postForm(srv.url, `${base}/dash-audit/edit`, client, {
        _csrf: client.csrf,
        image: "javascript:alert(1)",
      }),
    400,
  );

  // A person: an editor edits (their account is the actor) but may not delete; an admin may.
  // (A project with members keeps an owner: the owner joins first.)
  await person("Olive Owner", p.hashid, "owner");
  const editor = await person("Edna Editor", p.hashid, "editor");
  const edited = await oneEntry(() =>
    postForm(srv.url, `${base}/dash-audit/archive`, editor, {
      _csrf: editor.csrf,
      archived: "true",
    })
  );
  assert.deepEqual(edited.actor, { type: "account", id: editor.id, name: "Edna Editor" });
  await noEntry(
    () => postForm(srv.url, `${base}/dash-audit/delete`, editor, { _csrf: editor.csrf }),
    403,
  );
  const admin_ = await person("Ada Admin", p.hashid, "admin");
  const deleted = await oneEntry(() =>
    postForm(srv.url, `${base}/dash-audit/delete`, admin_, { _csrf: admin_.csrf })
  );
  assert.equal(deleted.action, "link.delete");
  assert.deepEqual(deleted.target, { type: "link", id: "dash-audit" });
  assert.deepEqual(deleted.actor, { type: "account", id: admin_.id, name: "Ada Admin" });
});

Deno.test("the lists page newest first, per project and for the instance", async () => {
  const p = await createProject(srv.url, { name: "Paged" });
  for (const name of ["a", "b", "c"]) {
    await admin("POST", `/api/v1/projects/${p.productionId}/event_stream_tokens`, { name });
  }
  // Both environments' changes are the project's.
  await admin("POST", `/api/v1/projects/${p.testId}/api_keys`, { name: "t", scopes: ["admin"] });
  const path = `/api/v1/projects/${p.productionId}/audit_log`;
  const first = await admin("GET", `${path}?limit=2`);
  assert.equal(first.status, 200);
  assert.deepEqual(first.body.entries.map((e: Entry) => e.action), [
    "api_key.create",
    "feed_token.create",
  ]);
  assert.ok(first.body.next_after);
  const rest = await admin("GET", `${path}?limit=10&after=${first.body.next_after}`);
  assert.deepEqual(rest.body.entries.map((e: Entry) => e.action), [
    "feed_token.create",
    "feed_token.create",
    "project.create",
  ]);
  assert.equal(rest.body.next_after, null);
  const all = [...first.body.entries, ...rest.body.entries] as Entry[];
  assert.deepEqual(all.map((e) => e.id), all.map((e) => e.id).sort((a, b) => b - a));

  const instance = await admin("GET", "/api/v1/admin/audit_log?limit=100");
  assert.ok(instance.body.entries.length > all.length);

  assertError(await admin("GET", `${path}?limit=0`), 400, "invalid_limit");
  assertError(await admin("GET", `${path}?limit=101`), 400, "invalid_limit");
  assertError(await admin("GET", `${path}?after=abc`), 400, "bad_cursor");
  assertError(await admin("GET", "/api/v1/projects/999999/audit_log"), 404, "not_found");

  // A key reads its project's log with the admin scope only; never the instance's.
  const keyed = async (scopes: string[]) =>
    (await admin("POST", `/api/v1/projects/${p.productionId}/api_keys`, { name: "k", scopes }))
      .body.api_key.value as string;
  const adminKey = await keyed(["admin"]);
  const readerKey = await keyed(["links:read"]);
  const as = (value: string, url: string) =>
    call(srv.url, "GET", url, { headers: { Authorization: `Bearer ${value}` } });
  assert.equal((await as(adminKey, path)).status, 200);
  assertError(await as(readerKey, path), 403, "insufficient_scope", /"admin"/);
  assertError(await as(adminKey, "/api/v1/admin/audit_log"), 403, "forbidden");
});

Deno.test("no secret value is in the audit log", async () => {
  assert.ok(secrets.length >= 6, `only ${secrets.length} secrets collected`);
  const rows = await srv.sql`select * from audit_log`;
  const dump = JSON.stringify(rows);
  for (const secret of secrets) assert.ok(!dump.includes(secret), "a secret is in the log");
});
