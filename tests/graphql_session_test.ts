// A member's dashboard session authenticates GraphQL: queries with the cookie alone, mutations
// with the session's X-CSRF-Token and no cross-site Origin. An ended session (signed out, 12
// hours idle by the clock, the account removed) is UNAUTHENTICATED on the next request, a removed
// member is refused; a bearer credential takes precedence over the cookie; GraphiQL opened with
// a session runs as it.
import assert from "node:assert/strict";
import { getPage, postForm, signInOverHttp } from "./helpers/dashboard.ts";
import { gql, type Json } from "./helpers/graphql.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

const rest = (method: string, path: string, body?: unknown) =>
  call(srv.url, method, path, { headers: adminHeaders, body });
const PASSWORD = "graph session password 0123";
let people = 0;

/** Projects that have an owner already (a project with members always keeps one). */
const owned = new Set<string>();

async function account(): Promise<{ id: number; setupUrl: string }> {
  const email = `person${++people}@example.test`;
  const made = await rest("POST", "/api/v1/admin/accounts", { email, name: `Person ${people}` });
  assert.equal(made.status, 201, made.text);
  return { id: made.body.account.id, setupUrl: made.body.setup_url };
}

/** A person with `role` on `hashid`, signed in: their cookie, form token and account id. */
async function member(hashid: string, role: string) {
  if (role !== "owner" && !owned.has(hashid)) {
    const owner = await account();
    const res = await rest("PUT", `/api/v1/admin/projects/${hashid}/members/${owner.id}`, {
      role: "owner",
    });
    assert.equal(res.status, 200, res.text);
  }
  owned.add(hashid);
  const made = await account();
  const id = made.id;
  const put = await rest("PUT", `/api/v1/admin/projects/${hashid}/members/${id}`, { role });
  assert.equal(put.status, 200, put.text);
  const token = new URL(made.setupUrl).searchParams.get("token")!;
  const setup = await postForm(srv.url, "/dashboard/setup", { cookie: "" }, {
    token,
    password: PASSWORD,
    confirm: PASSWORD,
  });
  assert.equal(setup.status, 303, setup.text);
  const cookie = setup.headers.get("set-cookie")!.split(";")[0]!;
  const home = await getPage(srv.url, "/dashboard", { cookie });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(home.text)![1]!;
  return { id, cookie, csrf };
}

const LIST = `query($id: ID!) { environment(projectId: $id) {
  name links(first: 10) { edges { node { path title } } } } }`;
const CREATE = `mutation($id: ID!, $title: String!) {
  createLink(projectId: $id, input: { title: $title }) { path title } }`;

const count = async () =>
  (await srv.sql`select (select count(*) from links)::int + (select count(*) from audit_log)::int
    as n`)[0]!.n as number;

Deno.test("sign-in sets the session cookie for the dashboard and /graphql only; sign-out clears both", async () => {
  const res = await fetch(`${srv.url}/dashboard/sign-in`, {
    method: "POST",
    body: new URLSearchParams({ token: "test-admin-token-0123456789abcdefgh" }),
    redirect: "manual",
  });
  await res.body?.cancel();
  const cookies = res.headers.getSetCookie();
  assert.equal(cookies.length, 2, cookies.join("\n"));
  assert.deepEqual(cookies.map((c) => /Path=([^;]+)/.exec(c)?.[1]).sort(), [
    "/dashboard",
    "/graphql",
  ]);
  for (const c of cookies) {
    assert.match(c, /HttpOnly/);
    assert.match(c, /SameSite=Strict/);
  }
  const cookie = cookies[0]!.split(";")[0]!;
  const home = await getPage(srv.url, "/dashboard", { cookie });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(home.text)![1]!;
  const out = await postForm(srv.url, "/dashboard/sign-out", { cookie }, { _csrf: csrf });
  const cleared = out.headers.getSetCookie();
  assert.deepEqual(cleared.map((c) => /Path=([^;]+)/.exec(c)?.[1]).sort(), [
    "/dashboard",
    "/graphql",
  ]);
  assert.ok(cleared.every((c) => /Max-Age=0/.test(c)), cleared.join("\n"));
  // The session itself is gone: the cookie no longer authenticates GraphQL.
  const p = await createProject(srv.url);
  const r = await gql(srv.url, LIST, { headers: { cookie }, variables: { id: p.productionId } });
  assert.equal(r.errors?.[0].extensions.code, "UNAUTHENTICATED");
});

Deno.test("a member's session runs queries with the cookie alone, through the permission table", async () => {
  const p = await createProject(srv.url);
  const other = await createProject(srv.url, { name: "Not theirs" });
  await rest("POST", `/api/v1/projects/${p.productionId}/links`, { title: "Seen" });
  const viewer = await member(p.hashid, "viewer");
  const mine = await gql(srv.url, LIST, {
    headers: { cookie: viewer.cookie },
    variables: { id: p.productionId },
  });
  assert.equal(mine.errors, undefined, JSON.stringify(mine.errors));
  assert.deepEqual(mine.data.environment.links.edges.map((e: Json) => e.node.title), ["Seen"]);
  // Another project's environment is not theirs to see: null, as an unknown one.
  const theirs = await gql(srv.url, LIST, {
    headers: { cookie: viewer.cookie },
    variables: { id: other.productionId },
  });
  assert.deepEqual(theirs.data, { environment: null });
  // A viewer's role does not manage tokens: FORBIDDEN naming the role.
  const tokens = await gql(
    srv.url,
    `query($id: ID!) { environment(projectId: $id) { feedTokens { id } } }`,
    { headers: { cookie: viewer.cookie }, variables: { id: p.productionId } },
  );
  assert.equal(tokens.errors?.[0].extensions.code, "FORBIDDEN");
  assert.match(tokens.errors![0].message, /admin role.*yours is viewer/);
  // A GET query with the cookie works too (GraphiQL's documents, a bookmarked query).
  const get = await fetch(
    `${srv.url}/graphql?query=${encodeURIComponent(LIST)}&variables=${
      encodeURIComponent(JSON.stringify({ id: p.productionId }))
    }`,
    { headers: { cookie: viewer.cookie, Accept: "application/json" } },
  );
  const body = await get.json();
  assert.equal(get.status, 200);
  assert.equal(body.data.environment.name, "production");
});

Deno.test("a session's mutation needs X-CSRF-Token and no other site's Origin; refused ones change nothing", async () => {
  const p = await createProject(srv.url);
  const editor = await member(p.hashid, "editor");
  const variables = { id: p.productionId, title: "By session" };
  const refusals: [string, Record<string, string>, RegExp][] = [
    ["no token", { cookie: editor.cookie }, /X-CSRF-Token/],
    ["a wrong token", { cookie: editor.cookie, "X-CSRF-Token": "x".repeat(43) }, /X-CSRF-Token/],
    ["another session's token", {
      cookie: editor.cookie,
      "X-CSRF-Token": (await signInOverHttp(srv.url)).csrf,
    }, /X-CSRF-Token/],
    ["another site's Origin", {
      cookie: editor.cookie,
      "X-CSRF-Token": editor.csrf,
      Origin: "https://evil.example",
    }, /another site/],
    ["a null Origin", {
      cookie: editor.cookie,
      "X-CSRF-Token": editor.csrf,
      Origin: "null",
    }, /another site/],
    ["cross-site Sec-Fetch-Site without Origin", {
      cookie: editor.cookie,
      "X-CSRF-Token": editor.csrf,
      "Sec-Fetch-Site": "cross-site",
    }, /another site/],
  ];
  for (const [what, headers, message] of refusals) {
    const before = await count();
    const r = await gql(srv.url, CREATE, { headers, variables });
    assert.equal(r.status, 200, what);
    assert.equal(r.data, null, `${what}: ${JSON.stringify(r.data)}`);
    assert.equal(r.errors?.[0].extensions.code, "FORBIDDEN", what);
    assert.equal(r.errors?.[0].extensions.reason, "forbidden", what);
    assert.match(r.errors![0].message, message, what);
    assert.equal(await count(), before, `${what}: a refused mutation changed something`);
  }
  // The token, from this site (or from outside a browser: no Origin at all): allowed, and
  // audited as the person.
  const fromHere: Record<string, string>[] = [
    { Origin: srv.url },
    {},
    { "Sec-Fetch-Site": "same-origin" },
  ];
  for (const headers of fromHere) {
    const r = await gql(srv.url, CREATE, {
      headers: { cookie: editor.cookie, "X-CSRF-Token": editor.csrf, ...headers },
      variables,
    });
    assert.equal(r.errors, undefined, JSON.stringify(r.errors));
    const [entry] = await srv.sql`
      select actor_type, actor_id, action, target_id from audit_log order by id desc limit 1`;
    assert.deepEqual(
      [entry!.actor_type, entry!.actor_id, entry!.action, entry!.target_id],
      ["account", editor.id, "link.create", r.data.createLink.path],
    );
  }
  // Queries need no token, whatever their Origin says (a browser lets no other site read them).
  const q = await gql(srv.url, LIST, {
    headers: { cookie: editor.cookie },
    variables: { id: p.productionId },
  });
  assert.equal(q.errors, undefined);
  assert.equal(q.data.environment.links.edges.length, 3);
});

Deno.test("a session ends after 12 hours without a request, by the clock; each GraphQL request restarts it", async () => {
  const p = await createProject(srv.url);
  const viewer = await member(p.hashid, "viewer");
  const ask = () =>
    gql(srv.url, LIST, { headers: { cookie: viewer.cookie }, variables: { id: p.productionId } });
  const HOUR = 60 * 60_000;
  srv.clock.advance(11 * HOUR);
  assert.equal((await ask()).errors, undefined);
  srv.clock.advance(11 * HOUR);
  assert.equal((await ask()).errors, undefined, "11 hours after the last request");
  srv.clock.advance(12 * HOUR + 1000);
  const ended = await ask();
  assert.equal(ended.data.environment, null);
  assert.equal(ended.errors?.[0].extensions.code, "UNAUTHENTICATED");
  assert.match(ended.errors![0].message, /session has ended/);
  // The dashboard agrees: the cookie sends the browser to sign in.
  const page = await getPage(srv.url, "/dashboard", { cookie: viewer.cookie });
  assert.equal(page.status, 303);
});

Deno.test("a removed member is refused, and a removed account unauthenticated, on the next request", async () => {
  const p = await createProject(srv.url);
  const admin = await member(p.hashid, "admin");
  const headers = { cookie: admin.cookie, "X-CSRF-Token": admin.csrf, Origin: srv.url };
  const token = `mutation($id: ID!) { createFeedToken(projectId: $id, input: { name: "t" }) {
    value } }`;
  const ok = await gql(srv.url, token, { headers, variables: { id: p.productionId } });
  assert.equal(ok.errors, undefined, JSON.stringify(ok.errors));

  const removed = await rest("DELETE", `/api/v1/admin/projects/${p.hashid}/members/${admin.id}`);
  assert.equal(removed.status, 204, removed.text);
  const before = await count();
  const refused = await gql(srv.url, token, { headers, variables: { id: p.productionId } });
  assert.equal(refused.errors?.[0].extensions.code, "FORBIDDEN");
  assert.match(refused.errors![0].message, /not a member/);
  assert.equal(await count(), before);
  const hidden = await gql(srv.url, LIST, { headers, variables: { id: p.productionId } });
  assert.deepEqual(hidden.data, { environment: null });

  await rest("PUT", `/api/v1/admin/projects/${p.hashid}/members/${admin.id}`, { role: "admin" });
  const back = await gql(srv.url, LIST, { headers, variables: { id: p.productionId } });
  assert.equal(back.data.environment.name, "production");
  const deleted = await rest("DELETE", `/api/v1/admin/accounts/${admin.id}`);
  assert.equal(deleted.status, 204, deleted.text);
  const gone = await gql(srv.url, LIST, { headers, variables: { id: p.productionId } });
  assert.equal(gone.errors?.[0].extensions.code, "UNAUTHENTICATED");
});

Deno.test("a bearer credential takes precedence over the cookie, and needs no CSRF token", async () => {
  const p = await createProject(srv.url);
  const viewer = await member(p.hashid, "viewer");
  const key = await rest("POST", `/api/v1/projects/${p.productionId}/api_keys`, {
    name: "ci",
    scopes: ["links:read", "links:write"],
  });
  const headers = {
    cookie: viewer.cookie,
    Authorization: `Bearer ${key.body.api_key.value}`,
    Origin: "https://elsewhere.example",
  };
  // The viewer could not create a link; the key can, with no token, and the entry is the key's.
  const r = await gql(srv.url, CREATE, {
    headers,
    variables: { id: p.productionId, title: "By key" },
  });
  assert.equal(r.errors, undefined, JSON.stringify(r.errors));
  const [entry] = await srv.sql`select actor_type from audit_log order by id desc limit 1`;
  assert.equal(entry!.actor_type, "api_key");
  // A wrong bearer is not rescued by a good cookie.
  const wrong = await gql(srv.url, LIST, {
    headers: { cookie: viewer.cookie, Authorization: "Bearer sk_" + "x".repeat(43) },
    variables: { id: p.productionId },
  });
  assert.equal(wrong.errors?.[0].extensions.code, "UNAUTHENTICATED");
  // The SDK's fields never look at the cookie: an ended session does not get in their way.
  const link = await gql(srv.url, `query($path: String!) { link(path: $path) { title } }`, {
    headers: { cookie: "dashboard_session=ended", "PROJECT-KEY": p.key, ENVIRONMENT: "production" },
    variables: { path: r.data.createLink.path },
  });
  assert.deepEqual(link, { status: 200, data: { link: { title: "By key" } }, errors: undefined });
});

Deno.test("GraphiQL opened with a session runs as it: no placeholder token, the session's CSRF token sent", async () => {
  const p = await createProject(srv.url);
  const admin = await member(p.hashid, "admin");
  const open = async (headers: Record<string, string>) => {
    const res = await fetch(`${srv.url}/graphql`, { headers: { Accept: "text/html", ...headers } });
    const html = await res.text();
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const json = /<script id="graphiql-config" type="application\/json">(.*?)<\/script>/s
      .exec(html)![1]!;
    return JSON.parse(json).options;
  };
  const signedIn = await open({ cookie: admin.cookie });
  assert.equal(signedIn.headers, "{}");
  assert.deepEqual(signedIn.additionalHeaders, { "X-CSRF-Token": admin.csrf });
  assert.match(signedIn.defaultQuery, /Signed in to the dashboard/);
  const anonymous: Record<string, string>[] = [{}, {
    cookie: "dashboard_session=" + "A".repeat(43),
  }];
  for (const headers of anonymous) {
    const options = await open(headers);
    assert.match(options.headers, /Bearer <admin token>/);
    assert.equal(options.additionalHeaders, undefined);
  }
  // What GraphiQL then sends (its Accept, the cookie, the token, its Origin) creates a link.
  const r = await call(srv.url, "POST", "/graphql", {
    headers: {
      cookie: admin.cookie,
      "X-CSRF-Token": signedIn.additionalHeaders["X-CSRF-Token"],
      Origin: srv.url,
      Accept: "application/graphql-response+json, application/json, multipart/mixed",
    },
    body: { query: CREATE, variables: { id: p.productionId, title: "From GraphiQL" } },
  });
  assert.equal(r.status, 200, r.text);
  assert.match(r.headers.get("content-type")!, /^application\/graphql-response\+json/);
  assert.equal(JSON.parse(r.text).data.createLink.title, "From GraphiQL");
});
