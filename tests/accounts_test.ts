// Accounts, setup links, password sign-in, members and roles: a person's session is held to the
// permission table on every page, and losing a membership or the account ends what it opened,
// on the next request, on another instance too.
import assert from "node:assert/strict";
import { createApiKey } from "../services/access/api_keys.ts";
import { CLI_AUDIT } from "../services/access/audit.ts";
import {
  PASSWORD_MAX_FAILURES_PER_ACCOUNT,
  PASSWORD_WINDOW_MS,
} from "../services/access/password_limit.ts";
import { ManualClock } from "./helpers/clock.ts";
import { getPage, postForm, signInOverHttp } from "./helpers/dashboard.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { adminHeaders, assertError, call, createProject, serveApp } from "./helpers/server.ts";

const db = await createTestDatabase();
const clock = new ManualClock("2026-06-01T09:00:00Z");
const srv = serveApp(db, { clock });
const other = serveApp(db, { clock, sql: db.embedded ? srv.sql : undefined });
// Behind a trusted proxy (X-Forwarded-For names the client): requests from many addresses.
const proxied = serveApp(db, {
  clock,
  sql: db.embedded ? srv.sql : undefined,
  config: { TRUST_PROXY: "true" },
});
Deno.test.afterAll(async () => {
  await proxied.close();
  await other.close();
  await srv.close();
  await db.close();
});

const admin = (method: string, path: string, body?: unknown) =>
  call(srv.url, method, path, { headers: adminHeaders, body });
const PASSWORD = "correct horse battery staple";

interface Person {
  id: number;
  email: string;
  name: string;
  setupUrl: string;
}

async function newAccount(name: string): Promise<Person> {
  const email = `${name.toLowerCase()}@example.test`;
  const res = await admin("POST", "/api/v1/admin/accounts", { email, name });
  assert.equal(res.status, 201, res.text);
  return { id: res.body.account.id, email, name, setupUrl: res.body.setup_url };
}

/** Follows the setup link as a browser would: returns the signed-in session. */
async function setUp(person: Person, password = PASSWORD) {
  const token = new URL(person.setupUrl).searchParams.get("token")!;
  const res = await postForm(srv.url, "/dashboard/setup", { cookie: "" }, {
    token,
    password,
    confirm: password,
  });
  assert.equal(res.status, 303, res.text);
  return await sessionFrom(res.headers);
}

async function sessionFrom(headers: Headers) {
  const cookie = headers.get("set-cookie")!.split(";")[0]!;
  const page = await getPage(srv.url, "/dashboard", { cookie });
  assert.equal(page.status, 200);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1]!;
  return { cookie, csrf };
}

function signInAs(email: string, password = PASSWORD) {
  return postForm(srv.url, "/dashboard/sign-in", { cookie: "" }, { email, password });
}

Deno.test("an account is created with a setup link that works once, for 7 days", async () => {
  const res = await admin("POST", "/api/v1/admin/accounts", {
    email: "Ada@Example.test",
    name: "Ada",
  });
  assert.equal(res.status, 201, res.text);
  assert.deepEqual(Object.keys(res.body.account).sort(), ["created_at", "email", "id", "name"]);
  const setupUrl = new URL(res.body.setup_url);
  assert.equal(setupUrl.origin, srv.url);
  assert.equal(setupUrl.pathname, "/dashboard/setup");
  const token = setupUrl.searchParams.get("token")!;
  assert.match(token, /^[A-Za-z0-9_-]{43}$/);
  // The same email, in any case, is a conflict; bad bodies are 400; nothing stored.
  assertError(
    await admin("POST", "/api/v1/admin/accounts", { email: "ada@example.TEST", name: "Again" }),
    409,
    "conflict",
  );
  assertError(
    await admin("POST", "/api/v1/admin/accounts", { email: "not-an-email", name: "X" }),
    400,
    "invalid_field",
    /email/,
  );
  const listed = await admin("GET", "/api/v1/admin/accounts");
  assert.equal(listed.body.accounts.length, 1);

  const form = await getPage(srv.url, `/dashboard/setup?token=${token}`);
  assert.equal(form.status, 200);
  assert.match(form.text, /Ada@Example\.test/);
  const short = await postForm(srv.url, "/dashboard/setup", { cookie: "" }, {
    token,
    password: "too short",
    confirm: "too short",
  });
  assert.equal(short.status, 400);
  assert.match(short.text, /at least 12 characters/);
  const differ = await postForm(srv.url, "/dashboard/setup", { cookie: "" }, {
    token,
    password: PASSWORD,
    confirm: PASSWORD + "!",
  });
  assert.equal(differ.status, 400);

  const done = await postForm(srv.url, "/dashboard/setup", { cookie: "" }, {
    token,
    password: PASSWORD,
    confirm: PASSWORD,
  });
  assert.equal(done.status, 303);
  await sessionFrom(done.headers);
  const [row] = await srv.sql`select password_hash from accounts where id = ${res.body.account.id}`;
  assert.match(row!.password_hash, /^scrypt\$15\$8\$3\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  // Used: the link is gone.
  assert.equal((await getPage(srv.url, `/dashboard/setup?token=${token}`)).status, 404);
  const again = await postForm(srv.url, "/dashboard/setup", { cookie: "" }, {
    token,
    password: "another long password",
    confirm: "another long password",
  });
  assert.equal(again.status, 404);

  // Another account's link, 7 days on: still valid one second before, gone at the mark.
  const late = await newAccount("Late");
  const lateToken = new URL(late.setupUrl).searchParams.get("token")!;
  clock.advance(7 * 86_400_000 - 1_000);
  assert.equal((await getPage(srv.url, `/dashboard/setup?token=${lateToken}`)).status, 200);
  clock.advance(1_000);
  assert.equal((await getPage(srv.url, `/dashboard/setup?token=${lateToken}`)).status, 404);
  const expired = await postForm(srv.url, "/dashboard/setup", { cookie: "" }, {
    token: lateToken,
    password: PASSWORD,
    confirm: PASSWORD,
  });
  assert.equal(expired.status, 404);
});

Deno.test("a person signs in with email and password; failures are limited per address", async () => {
  const grace = await newAccount("Grace");
  await setUp(grace);
  const ok = await signInAs("GRACE@example.test");
  assert.equal(ok.status, 303);
  const session = await sessionFrom(ok.headers);
  assert.equal(session.cookie.length > 20, true);
  // A person in no project is told who can add them, not offered a form they may not use.
  const home = await getPage(srv.url, "/dashboard", session);
  assert.match(home.text, /You are not a member of any project yet/);
  assert.doesNotMatch(home.text, /Create your first project|Create a project/);
  const wrong = await signInAs(grace.email, "not the password at all");
  assert.equal(wrong.status, 401);
  assert.match(wrong.text, /do not match an account/);
  const unknown = await signInAs("nobody@example.test");
  assert.equal(unknown.status, 401);
  // 10 failures in 15 minutes from one address (2 above): then even the right password waits.
  for (let i = 0; i < 8; i++) {
    assert.equal((await signInAs(grace.email, `wrong password ${i}`)).status, 401);
  }
  const limited = await signInAs(grace.email);
  assert.equal(limited.status, 503);
  assert.match(limited.text, /Too many failed sign-ins/);
  clock.advance(15 * 60_000 + 1_000);
  assert.equal((await signInAs(grace.email)).status, 303);
});

/** A password sign-in to the proxied instance from `address` (with a browser's `cookie`). */
function signInFrom(address: string, email: string, password = PASSWORD, cookie = "") {
  return postForm(proxied.url, "/dashboard/sign-in", { cookie }, { email, password }, {
    Origin: proxied.url,
    "X-Forwarded-For": address,
  });
}

/** The device cookie an answer sets, as the browser then sends it. */
function deviceCookie(headers: Headers): string {
  const set = headers.getSetCookie().find((c) => c.startsWith("dashboard_device="));
  assert.ok(set, headers.getSetCookie().join("\n"));
  assert.match(set, /HttpOnly/);
  assert.match(set, /SameSite=Strict/);
  assert.match(set, /Path=\/dashboard/);
  return set.split(";")[0]!;
}

Deno.test("password guesses spread over many addresses are limited per account, for 15 minutes at most", async () => {
  clock.advance(PASSWORD_WINDOW_MS + 1_000);
  const hopper = await newAccount("Hopper");
  await setUp(hopper);
  // Five addresses, two wrong passwords each: every address stays far under its own limit, but
  // the account has had its 10.
  for (let a = 0; a < 5; a++) {
    for (let i = 0; i < PASSWORD_MAX_FAILURES_PER_ACCOUNT / 5; i++) {
      assert.equal(
        (await signInFrom(`203.0.113.${a + 1}`, hopper.email, `guess ${a}.${i}`)).status,
        401,
      );
    }
  }
  // Then even the right password, from an address never seen, waits (any case of the email).
  const limited = await signInFrom("198.51.100.7", "HOPPER@example.test");
  assert.equal(limited.status, 503);
  assert.match(limited.text, /Too many failed sign-ins for this account/);
  const retryAfter = Number(limited.headers.get("retry-after"));
  assert.ok(retryAfter > 0 && retryAfter <= PASSWORD_WINDOW_MS / 1000, String(retryAfter));
  // Another account signs in from the same addresses: the limit is the account's.
  const lovelace = await newAccount("Lovelace");
  await setUp(lovelace);
  assert.equal((await signInFrom("203.0.113.1", lovelace.email)).status, 303);
  // An email no account has is counted the same way: the limit tells nothing about who exists.
  for (let i = 0; i < PASSWORD_MAX_FAILURES_PER_ACCOUNT; i++) {
    assert.equal((await signInFrom(`192.0.2.${i + 1}`, "nobody@example.test", "x")).status, 401);
  }
  assert.match((await signInFrom("192.0.2.200", "nobody@example.test")).text, /for this account/);
  // Bounded: once the failures leave the window (15 minutes after the last), the person gets in.
  clock.advance(retryAfter * 1000 - 2_000);
  assert.equal((await signInFrom("198.51.100.7", hopper.email)).status, 503);
  clock.advance(2_000);
  assert.equal((await signInFrom("198.51.100.7", hopper.email)).status, 303);
});

Deno.test("a browser its person signed in from gets in while others fill the account's count; it has a count of its own", async () => {
  clock.advance(PASSWORD_WINDOW_MS + 1_000);
  const knuth = await newAccount("Knuth");
  await setUp(knuth);
  const first = await signInFrom("198.51.100.20", knuth.email);
  assert.equal(first.status, 303);
  const device = deviceCookie(first.headers);
  // Someone fills the account's count from addresses of their own.
  for (let i = 0; i < PASSWORD_MAX_FAILURES_PER_ACCOUNT; i++) {
    assert.equal((await signInFrom(`203.0.113.${150 + i}`, knuth.email, `guess ${i}`)).status, 401);
  }
  // Without the device cookie the right password waits; with it, the person gets in.
  assert.equal((await signInFrom("198.51.100.21", knuth.email)).status, 503);
  const known = await signInFrom("198.51.100.21", knuth.email, PASSWORD, device);
  assert.equal(known.status, 303, known.text);
  // Another account's device cookie, or a forged one, is no device of this account's.
  const other = await newAccount("Dijkstra");
  await setUp(other);
  const otherDevice = deviceCookie((await signInFrom("198.51.100.22", other.email)).headers);
  assert.equal((await signInFrom("198.51.100.22", knuth.email, PASSWORD, otherDevice)).status, 503);
  const forged = device.replace(/.$/, (c) => (c === "A" ? "B" : "A"));
  assert.equal((await signInFrom("198.51.100.21", knuth.email, PASSWORD, forged)).status, 503);
  // A stolen device cookie buys only its own 10 guesses per 15 minutes.
  for (let i = 0; i < PASSWORD_MAX_FAILURES_PER_ACCOUNT; i++) {
    const res = await signInFrom(`192.0.2.${150 + i}`, knuth.email, `device guess ${i}`, device);
    assert.equal(res.status, 401);
  }
  const spent = await signInFrom("198.51.100.21", knuth.email, PASSWORD, device);
  assert.equal(spent.status, 503);
  assert.match(spent.text, /for this account/);
});

Deno.test("wrong current passwords on the change-password form count as failed sign-ins", async () => {
  clock.advance(PASSWORD_WINDOW_MS + 1_000);
  const turing = await newAccount("Turing");
  const session = await setUp(turing);
  const change = (current: string, address: string) =>
    postForm(proxied.url, "/dashboard/account", session, {
      _csrf: session.csrf,
      current,
      password: "a brand new password",
      confirm: "a brand new password",
    }, { Origin: proxied.url, "X-Forwarded-For": address });
  for (let i = 0; i < PASSWORD_MAX_FAILURES_PER_ACCOUNT; i++) {
    const res = await change(`wrong current ${i}`, `203.0.113.${100 + i}`);
    assert.equal(res.status, 400, res.text);
    assert.match(res.text, /is not your password/);
  }
  // The account's count is full: the right current password waits, and so does a sign-in.
  const refused = await change(PASSWORD, "198.51.100.50");
  assert.equal(refused.status, 503);
  assert.match(refused.text, /Too many wrong passwords were tried/);
  assert.equal((await signInFrom("198.51.100.51", turing.email)).status, 503);
  clock.advance(PASSWORD_WINDOW_MS);
  const changed = await change(PASSWORD, "198.51.100.50");
  assert.equal(changed.status, 303, changed.text);
  assert.equal(
    (await signInFrom("198.51.100.51", turing.email, "a brand new password")).status,
    303,
  );
});

Deno.test("members act as their role allows, and nothing changes when they may not", async () => {
  const project = await createProject(srv.url, { name: "Team" });
  const elsewhere = await createProject(srv.url, { name: "Elsewhere" });
  const owner = await newAccount("Olive");
  const editor = await newAccount("Eddie");
  const viewer = await newAccount("Vera");
  const members = `/api/v1/admin/projects/${project.hashid}/members`;
  // The first member must be an owner: a project with members keeps one.
  assertError(await admin("PUT", `${members}/${editor.id}`, { role: "editor" }), 409, "conflict");
  assert.equal((await admin("PUT", `${members}/${owner.id}`, { role: "owner" })).status, 200);
  const put = await admin("PUT", `${members}/${editor.id}`, { role: "editor" });
  assert.deepEqual(put.body.member, {
    account_id: editor.id,
    email: editor.email,
    name: "Eddie",
    role: "editor",
  });
  await admin("PUT", `${members}/${viewer.id}`, { role: "viewer" });
  assertError(
    await admin("PUT", `${members}/${viewer.id}`, { role: "boss" }),
    400,
    "invalid_field",
  );
  assertError(await admin("PUT", `${members}/999999`, { role: "viewer" }), 404, "not_found");
  const list = await admin("GET", members);
  assert.deepEqual(list.body.members.map((m: { role: string }) => m.role), [
    "owner",
    "editor",
    "viewer",
  ]);
  // The only owner can neither leave nor be demoted.
  assertError(await admin("DELETE", `${members}/${owner.id}`), 409, "conflict");
  assertError(await admin("PUT", `${members}/${owner.id}`, { role: "admin" }), 409, "conflict");

  const ed = await setUp(editor);
  const ve = await setUp(viewer);
  const ol = await setUp(owner);
  const env = `/dashboard/environments/${project.productionId}`;
  // Projects: each sees only their own; none may create one.
  const home = await getPage(srv.url, "/dashboard", ed);
  assert.match(home.text, /Team/);
  assert.doesNotMatch(home.text, /Elsewhere/);
  assert.doesNotMatch(home.text, /Create a project/);
  const counts = async () => ({
    projects: Number((await srv.sql`select count(*) as n from projects`)[0]!.n),
    links: Number((await srv.sql`select count(*) as n from links`)[0]!.n),
    tokens: Number((await srv.sql`select count(*) as n from feed_tokens`)[0]!.n),
    audit: Number((await srv.sql`select count(*) as n from audit_log`)[0]!.n),
  });
  const before = await counts();
  const refused: [typeof ed, string, Record<string, string>?][] = [
    [ed, "/dashboard/projects", { name: "Mine" }],
    [ve, `${env}/links`, { title: "viewer's link" }],
    [ed, `${env}/tokens`, { name: "t" }],
    [ed, `/dashboard/projects/${project.hashid}`, { name: "Renamed by editor" }],
    [ed, `/dashboard/projects/${project.hashid}/regenerate-key`, {}],
    [ed, `/dashboard/environments/${elsewhere.productionId}/links`, { title: "x" }],
  ];
  for (const [who, path, fields] of refused) {
    const res = await postForm(srv.url, path, who, { _csrf: who.csrf, ...fields });
    assert.equal(res.status, 403, `${path}: ${res.status}`);
  }
  for (
    const [who, path] of [
      [ve, `${env}/export`],
      [ed, `${env}/tokens`],
      [ed, `${env}/live`],
      [ed, `/dashboard/environments/${elsewhere.productionId}/links`],
      [ed, `/dashboard/projects/${elsewhere.hashid}`],
    ] as const
  ) {
    assert.equal((await getPage(srv.url, path, who)).status, 403, path);
  }
  assert.deepEqual(await counts(), before);

  // What their roles allow.
  assert.equal((await getPage(srv.url, `${env}/links`, ve)).status, 200);
  assert.equal((await getPage(srv.url, `${env}/metrics`, ve)).status, 200);
  const made = await postForm(srv.url, `${env}/links`, ed, { _csrf: ed.csrf, title: "Eddie's" });
  assert.equal(made.status, 303);
  const [entry] = await srv.sql`select * from audit_log order by id desc limit 1`;
  assert.equal(entry!.action, "link.create");
  assert.equal(entry!.actor_type, "account");
  assert.equal(entry!.actor_id, editor.id);
  assert.equal(entry!.actor_name, "Eddie");
  const renamed = await postForm(srv.url, `/dashboard/projects/${project.hashid}`, ol, {
    _csrf: ol.csrf,
    name: "Team renamed",
  });
  assert.equal(renamed.status, 303);
  // A member's settings form has no Enterprise switch: the project keeps its Enterprise access.
  const after = await admin("GET", `/api/v1/admin/projects/${project.hashid}`);
  assert.equal(after.body.project.name, "Team renamed");
  assert.equal(after.body.project.enterprise, true);
  assert.equal((await getPage(srv.url, `${env}/tokens`, ol)).status, 200);
});

Deno.test("removing a member or an account ends its sessions and keys on the next request", async () => {
  const project = await createProject(srv.url, { name: "Leaving" });
  const owner = await newAccount("Owen");
  const leaver = await newAccount("Lea");
  const members = `/api/v1/admin/projects/${project.hashid}/members`;
  await admin("PUT", `${members}/${owner.id}`, { role: "owner" });
  await admin("PUT", `${members}/${leaver.id}`, { role: "admin" });
  const lea = await setUp(leaver);
  const env = `/dashboard/environments/${project.productionId}`;
  assert.equal((await getPage(other.url, `${env}/tokens`, lea)).status, 200);

  // A key Lea creates (the service the dashboard's key page calls) is bounded by her role.
  const principal = { type: "account" as const, id: leaver.id, name: "Lea", email: leaver.email };
  const key = await createApiKey(srv.sql, clock, principal, String(project.productionId), {
    name: "lea's",
    scopes: ["admin", "links:read"],
    expires_at: null,
  }, CLI_AUDIT);
  const asKey = (url: string, path: string) =>
    call(url, "GET", path, { headers: { Authorization: `Bearer ${key.value}` } });
  const tokens = `/api/v1/projects/${project.productionId}/event_stream_tokens`;
  assert.equal((await asKey(other.url, tokens)).status, 200);
  // Demoted to viewer: the key keeps only what a viewer may give (links:read).
  await admin("PUT", `${members}/${leaver.id}`, { role: "viewer" });
  assertError(await asKey(other.url, tokens), 403, "insufficient_scope");
  assert.equal(
    (await asKey(other.url, `/api/v1/projects/${project.productionId}/links`)).status,
    200,
  );
  assert.equal((await getPage(other.url, `${env}/tokens`, lea)).status, 403);

  // Removed: the project is closed to her session and her key, at once, on the other instance.
  assert.equal((await admin("DELETE", `${members}/${leaver.id}`)).status, 204);
  assert.equal((await getPage(other.url, `${env}/links`, lea)).status, 403);
  assertError(
    await asKey(other.url, `/api/v1/projects/${project.productionId}/links`),
    401,
    "unauthorized",
  );
  assertError(await admin("DELETE", `${members}/${leaver.id}`), 404, "not_found");

  // The account removed: its session ends everywhere (sign in again).
  assert.equal((await getPage(other.url, "/dashboard", lea)).status, 200);
  assert.equal((await admin("DELETE", `/api/v1/admin/accounts/${leaver.id}`)).status, 204);
  const after = await getPage(other.url, "/dashboard", lea);
  assert.equal(after.status, 303);
  assert.match(after.headers.get("location") ?? "", /sign-in/);
  assertError(await admin("DELETE", `/api/v1/admin/accounts/${leaver.id}`), 404, "not_found");
  // The only owner of a project with other members cannot be removed.
  const stay = await newAccount("Stay");
  await admin("PUT", `${members}/${stay.id}`, { role: "editor" });
  assertError(await admin("DELETE", `/api/v1/admin/accounts/${owner.id}`), 409, "conflict");
});

Deno.test("the only owner stays, even when no other member would: 409 on REST and the dashboard", async () => {
  const project = await createProject(srv.url, { name: "Sole" });
  const sole = await newAccount("Solo");
  const members = `/api/v1/admin/projects/${project.hashid}/members`;
  assert.equal((await admin("PUT", `${members}/${sole.id}`, { role: "owner" })).status, 200);
  // The instance admin removing or demoting the only owner, who is the only member too.
  assertError(await admin("DELETE", `${members}/${sole.id}`), 409, "conflict");
  assertError(await admin("PUT", `${members}/${sole.id}`, { role: "viewer" }), 409, "conflict");
  const dashboard = await signInOverHttp(srv.url);
  const removed = await postForm(
    srv.url,
    `/dashboard/projects/${project.hashid}/members/${sole.id}/remove`,
    dashboard,
    { _csrf: dashboard.csrf },
  );
  assert.equal(removed.status, 409);
  assert.match(removed.text, /keeps at least one owner/);
  const demoted = await postForm(
    srv.url,
    `/dashboard/projects/${project.hashid}/members`,
    dashboard,
    {
      _csrf: dashboard.csrf,
      email: sole.email,
      role: "admin",
    },
  );
  assert.equal(demoted.status, 409);
  // The owner themself cannot leave either.
  const so = await setUp(sole);
  const left = await postForm(
    srv.url,
    `/dashboard/projects/${project.hashid}/members/${sole.id}/remove`,
    so,
    { _csrf: so.csrf },
  );
  assert.equal(left.status, 409);
  assert.deepEqual(
    (await admin("GET", members)).body.members.map((m: { role: string }) => m.role),
    [
      "owner",
    ],
  );
  // Another owner first: then the first may go, and the project keeps an owner.
  const next = await newAccount("Next");
  assert.equal((await admin("PUT", `${members}/${next.id}`, { role: "owner" })).status, 200);
  assert.equal((await admin("DELETE", `${members}/${sole.id}`)).status, 204);
});

Deno.test("accounts and members are the instance admin's and people's, never a key's", async () => {
  const project = await createProject(srv.url, { name: "Keyless" });
  const key = (await admin("POST", `/api/v1/projects/${project.productionId}/api_keys`, {
    name: "all",
    scopes: ["links:read", "links:write", "analytics:read", "events:read", "admin"],
  })).body.api_key.value;
  const as = (method: string, path: string, body?: unknown) =>
    call(srv.url, method, path, { headers: { Authorization: `Bearer ${key}` }, body });
  assertError(await as("GET", "/api/v1/admin/accounts"), 403, "forbidden");
  assertError(
    await as("POST", "/api/v1/admin/accounts", { email: "k@example.test", name: "K" }),
    403,
    "forbidden",
  );
  assertError(
    await as("GET", `/api/v1/admin/projects/${project.hashid}/members`),
    403,
    "forbidden",
  );
});

Deno.test("only hashes of passwords, keys and links are in a pg_dump", async () => {
  if (db.embedded) return; // pg_dump needs a PostgreSQL server
  const person = await newAccount("Dumped");
  const setupToken = new URL(person.setupUrl).searchParams.get("token")!;
  const unusedSetup = new URL((await newAccount("Unused")).setupUrl).searchParams.get("token")!;
  await setUp(person, "a password that must not leak");
  const project = await createProject(srv.url, { name: "Dump" });
  const key = (await admin("POST", `/api/v1/projects/${project.productionId}/api_keys`, {
    name: "dumped",
    scopes: ["admin"],
  })).body.api_key.value;
  const dump = new Deno.Command("pg_dump", { args: [db.url], stdout: "piped", stderr: "piped" });
  const out = await dump.output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const text = new TextDecoder().decode(out.stdout);
  assert.match(text, /scrypt\$15/);
  for (
    const secret of ["a password that must not leak", key, setupToken, unusedSetup, project.key]
  ) {
    assert.ok(!text.includes(secret), "a secret is in the dump");
  }
});
