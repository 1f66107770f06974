// The dashboard's security rules over HTTP: headers on every response, cross-site requests,
// sessions (hashed, 12 h idle through the clock, sign-out), escaping, and the sign-in limit.
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { addPerson, getPage, postForm, signInOverHttp } from "./helpers/dashboard.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  call,
  createProject,
  serveApp,
  startTestServer,
} from "./helpers/server.ts";
import { hashSecret } from "../infra/secrets.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { listening, startService } from "./helpers/process.ts";
import { CONTENT_SECURITY_POLICY } from "../dashboard/security.ts";

const clock = new ManualClock("2026-05-01T08:00:00Z");
const srv = await startTestServer({ clock, config: { TRUST_PROXY: "true" } });
Deno.test.afterAll(() => srv.close());

const project = await createProject(srv.url, { name: "Sec" });
const xssTitle = "<script>alert(1)</script>";
const created = await call(srv.url, "POST", `/api/v1/projects/${project.productionId}/links`, {
  headers: adminHeaders,
  body: { title: xssTitle, tags: ["<b>tag</b>"], data: { html: "</code><img src=x>" } },
});
const xssPath: string = created.body.link.path;

async function projectCount(): Promise<number> {
  const [row] = await srv.sql<{ n: number }[]>`select count(*)::int as n from projects`;
  return row!.n;
}

function assertSecurityHeaders(headers: Headers, what: string) {
  assert.equal(headers.get("content-security-policy"), CONTENT_SECURITY_POLICY, what);
  assert.equal(headers.get("x-frame-options"), "DENY", what);
  assert.equal(headers.get("x-content-type-options"), "nosniff", what);
}

Deno.test("dashboard: every page, redirect, error and asset carries the CSP and frame headers", async () => {
  const client = await signInOverHttp(srv.url);
  const env = `/dashboard/environments/${project.productionId}`;
  const paths = [
    "/dashboard",
    "/dashboard?q=Sec",
    `/dashboard/projects/${project.hashid}`,
    `/dashboard/projects/${project.hashid}/regenerate-key`,
    `${env}/links`,
    `${env}/links/new`,
    `${env}/links/${xssPath}`,
    `${env}/links/${xssPath}/qr.svg`,
    `${env}/metrics`,
    `${env}/metrics/analytics.csv`,
    `${env}/links/${xssPath}/analytics.csv`,
    `${env}/tokens`,
    `${env}/destinations`,
    `${env}/export`,
    `${env}/export.ndjson?from=2026-04-01&to=2026-04-02`,
    `${env}/export.ndjson?from=bad&to=2026-04-02`,
    "/dashboard/projects/nope",
    "/dashboard/no/such/page",
    "/dashboard/environments/999999/links",
  ];
  for (const path of paths) {
    const res = await getPage(srv.url, path, client);
    assert.ok(res.status < 500, `${path}: ${res.status}`);
    assertSecurityHeaders(res.headers, path);
    if (res.headers.get("content-type")?.startsWith("text/html")) {
      assert.match(res.text, /^<!doctype html>/, path);
      // No inline script or style anywhere: the CSP would block them.
      assert.doesNotMatch(res.text, /<script(?![^>]*\ssrc=)[^>]*>/, path);
      assert.doesNotMatch(res.text, /\sstyle=/, path);
      assert.doesNotMatch(res.text, /\son[a-z]+=/, path);
    }
  }
  assert.equal((await getPage(srv.url, "/dashboard/projects/nope", client)).status, 404);
  for (const path of ["/dashboard/sign-in", "/dashboard", "/dashboard/assets/app.css"]) {
    assertSecurityHeaders((await getPage(srv.url, path)).headers, `${path} signed out`);
  }
});

Deno.test("dashboard: a link title with markup renders as text", async () => {
  const client = await signInOverHttp(srv.url);
  const env = `/dashboard/environments/${project.productionId}`;
  for (const path of [`${env}/links`, `${env}/links/${xssPath}`]) {
    const res = await getPage(srv.url, path, client);
    assert.equal(res.status, 200);
    assert.ok(!res.text.includes(xssTitle), path);
    assert.ok(res.text.includes("&lt;script&gt;alert(1)&lt;/script&gt;"), path);
    assert.ok(!res.text.includes("<b>tag</b>"), path);
  }
  const detail = await getPage(srv.url, `${env}/links/${xssPath}`, client);
  assert.ok(!detail.text.includes("<img src=x>"));
});

Deno.test("dashboard: analytics values with markup render as text, and URLs carry them encoded", async () => {
  const client = await signInOverHttp(srv.url);
  const env = `/dashboard/environments/${project.productionId}`;
  const evil = `"><script>alert(2)</script>`;
  const query = new URLSearchParams({ "filter[campaign]": evil, tz: "Europe/Berlin" });
  for (const path of [`${env}/metrics?${query}`, `${env}/links/${xssPath}?${query}`]) {
    const res = await getPage(srv.url, path, client);
    assert.equal(res.status, 200, path);
    assert.ok(!res.text.includes("<script>alert(2)"), path);
    // The filter's chip and its hidden field, escaped; the presets' links, percent-encoded.
    assert.ok(res.text.includes("&lt;script&gt;alert(2)&lt;/script&gt;"), path);
    assert.ok(res.text.includes("filter%5Bcampaign%5D=%22%3E%3Cscript%3Ealert%282%29"), path);
    assert.ok(res.text.includes(`value="&quot;&gt;&lt;script&gt;`), path);
  }
});

Deno.test("dashboard: a cross-site POST is refused with 403 and changes nothing", async () => {
  const client = await signInOverHttp(srv.url);
  const before = await projectCount();
  const fields = { name: "Evil", enterprise: "on" };
  // Another site's form: the right cookie is sent, but neither Origin nor token is ours.
  const noToken = await postForm(srv.url, "/dashboard/projects", client, fields, {
    Origin: "https://evil.example",
  });
  assert.equal(noToken.status, 403);
  // Even with the token (which another site cannot read), another Origin is refused.
  const wrongOrigin = await postForm(srv.url, "/dashboard/projects", client, {
    ...fields,
    _csrf: client.csrf,
  }, { Origin: "https://evil.example" });
  assert.equal(wrongOrigin.status, 403);
  const crossFetch = await postForm(srv.url, "/dashboard/projects", client, {
    ...fields,
    _csrf: client.csrf,
  }, { Origin: "", "Sec-Fetch-Site": "cross-site" });
  assert.equal(crossFetch.status, 403);
  // Same origin without the token, or with another session's token: refused too.
  const sameOrigin = await postForm(srv.url, "/dashboard/projects", client, fields);
  assert.equal(sameOrigin.status, 403);
  const other = await signInOverHttp(srv.url);
  const otherToken = await postForm(srv.url, "/dashboard/projects", client, {
    ...fields,
    _csrf: other.csrf,
  });
  assert.equal(otherToken.status, 403);
  // A JSON body is not a dashboard form.
  const json = await fetch(`${srv.url}/dashboard/projects`, {
    method: "POST",
    headers: { cookie: client.cookie, "Content-Type": "application/json", Origin: srv.url },
    body: JSON.stringify({ ...fields, _csrf: client.csrf }),
  });
  await json.body?.cancel();
  assert.equal(json.status, 403);
  // Revoking a token or signing someone out cross-site is refused the same way.
  const signOut = await postForm(srv.url, "/dashboard/sign-out", client, {}, {
    Origin: "https://evil.example",
  });
  assert.equal(signOut.status, 403);
  assert.equal(await projectCount(), before);
  assert.equal((await getPage(srv.url, "/dashboard", client)).status, 200);

  const ok = await postForm(srv.url, "/dashboard/projects", client, {
    ...fields,
    _csrf: client.csrf,
  });
  assert.equal(ok.status, 200);
  assert.equal(await projectCount(), before + 1);
});

Deno.test("dashboard: the session cookie is HttpOnly, SameSite=Strict, Secure behind https", async () => {
  const plain = await fetch(`${srv.url}/dashboard/sign-in`, {
    method: "POST",
    body: new URLSearchParams({ token: ADMIN_TOKEN }),
    redirect: "manual",
  });
  await plain.body?.cancel();
  const cookie = plain.headers.get("set-cookie")!;
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Strict/);
  assert.match(cookie, /Path=\/dashboard/);
  assert.doesNotMatch(cookie, /Secure/);
  const proxied = await fetch(`${srv.url}/dashboard/sign-in`, {
    method: "POST",
    body: new URLSearchParams({ token: ADMIN_TOKEN }),
    headers: { "X-Forwarded-Proto": "https" },
    redirect: "manual",
  });
  await proxied.body?.cancel();
  assert.match(proxied.headers.get("set-cookie")!, /; Secure/);
  // Only the digest is stored.
  const value = cookie.split(";")[0]!.split("=")[1]!;
  const rows = await srv.sql`select token_hash from dashboard_sessions`;
  assert.ok(rows.some((r) => r.token_hash === hashSecret(value)));
  assert.ok(rows.every((r) => r.token_hash !== value));
});

Deno.test("dashboard: forged, expired and signed-out sessions go to sign-in", async () => {
  const forged = await getPage(srv.url, "/dashboard", {
    cookie: `dashboard_session=${"A".repeat(43)}`,
  });
  assert.equal(forged.status, 303);
  assert.equal(forged.headers.get("location"), "/dashboard/sign-in?expired=1");
  const garbage = await getPage(srv.url, "/dashboard", { cookie: "dashboard_session=%00'" });
  assert.equal(garbage.status, 303);
  const none = await getPage(srv.url, `/dashboard/projects/${project.hashid}`);
  assert.equal(none.status, 303);
  assert.equal(none.headers.get("location"), "/dashboard/sign-in");

  // Idle expiry: each request restarts the 12 h; 12 h without one ends the session.
  const client = await signInOverHttp(srv.url);
  clock.advance(11 * 3600_000);
  assert.equal((await getPage(srv.url, "/dashboard", client)).status, 200);
  clock.advance(11 * 3600_000);
  assert.equal((await getPage(srv.url, "/dashboard", client)).status, 200);
  clock.advance(12 * 3600_000);
  const expired = await getPage(srv.url, "/dashboard", client);
  assert.equal(expired.status, 303);
  assert.equal(expired.headers.get("location"), "/dashboard/sign-in?expired=1");
  // A POST from an expired session changes nothing either.
  const before = await projectCount();
  const post = await postForm(srv.url, "/dashboard/projects", client, {
    name: "Late",
    _csrf: client.csrf,
  });
  assert.equal(post.status, 303);
  assert.equal(await projectCount(), before);

  const again = await signInOverHttp(srv.url);
  const out = await postForm(srv.url, "/dashboard/sign-out", again, { _csrf: again.csrf });
  assert.equal(out.status, 303);
  assert.equal(out.headers.get("location"), "/dashboard/sign-in");
  assert.equal((await getPage(srv.url, "/dashboard", again)).status, 303);
});

Deno.test("dashboard: every session ends at its absolute lifetime, 7 days by default, however busy", async () => {
  const admin = await signInOverHttp(srv.url);
  const person = await addPerson(srv.url, { email: "busy@example.test", name: "Busy" });
  const signedIn = await postForm(srv.url, "/dashboard/sign-in", { cookie: "" }, {
    email: person.email,
    password: person.password,
  });
  assert.equal(signedIn.status, 303, signedIn.text);
  const personal = { cookie: signedIn.headers.get("set-cookie")!.split(";")[0]! };
  // A request every 11 hours keeps both from idling, up to one minute before 7 days.
  for (let hours = 0; hours + 11 < 7 * 24; hours += 11) {
    clock.advance(11 * 3600_000);
    assert.equal((await getPage(srv.url, "/dashboard", admin)).status, 200);
    assert.equal((await getPage(srv.url, "/dashboard", personal)).status, 200);
  }
  clock.advance(7 * 24 * 3600_000 - 15 * 11 * 3600_000 - 60_000);
  assert.equal((await getPage(srv.url, "/dashboard", admin)).status, 200);
  assert.equal((await getPage(srv.url, "/dashboard", personal)).status, 200);
  // At 7 days both end, on every instance: pages, forms and GraphQL alike.
  clock.advance(60_000);
  const other = serveApp(srv.db, { clock });
  try {
    for (const base of [srv.url, other.url]) {
      for (const client of [admin, personal]) {
        const ended = await getPage(base, "/dashboard", client);
        assert.equal(ended.status, 303);
        assert.equal(ended.headers.get("location"), "/dashboard/sign-in?expired=1");
      }
    }
    const before = await projectCount();
    const post = await postForm(srv.url, "/dashboard/projects", admin, {
      name: "Too late",
      _csrf: admin.csrf,
    });
    assert.equal(post.status, 303);
    assert.equal(await projectCount(), before);
    const gql = await call(srv.url, "POST", "/graphql", {
      headers: { cookie: admin.cookie },
      body: {
        query: "query($id: ID!) { environment(projectId: $id) { name } }",
        variables: { id: String(project.productionId) },
      },
    });
    assert.match(JSON.stringify(gql.body), /session has ended/);
  } finally {
    await other.close();
  }
});

Deno.test("dashboard: DASHBOARD_SESSION_MAX_DAYS sets the lifetime", async () => {
  const short = serveApp(srv.db, { clock, config: { DASHBOARD_SESSION_MAX_DAYS: "1" } });
  try {
    assert.equal(short.config.dashboardSessionMaxDays, 1);
    const client = await signInOverHttp(short.url);
    for (let i = 0; i < 2; i++) {
      clock.advance(11 * 3600_000);
      assert.equal((await getPage(short.url, "/dashboard", client)).status, 200);
    }
    clock.advance(2 * 3600_000 - 1);
    assert.equal((await getPage(short.url, "/dashboard", client)).status, 200);
    clock.advance(1);
    assert.equal((await getPage(short.url, "/dashboard", client)).status, 303);
  } finally {
    await short.close();
  }
});

Deno.test("dashboard: a session made with the admin token ends when ADMIN_TOKEN changes (a restart under a new token)", async () => {
  const db = Deno.env.get("DATABASE_URL") ? await createTestDatabase() : null;
  const dataDir = await Deno.makeTempDir();
  const env = (token: string): Record<string, string> =>
    db ? { DATABASE_URL: db.url, ADMIN_TOKEN: token } : { DATA_DIR: dataDir, ADMIN_TOKEN: token };
  const rotated = "rotated-admin-token-0123456789abcdef";
  const accounts = async (base: string, token: string) => {
    const res = await call(base, "GET", "/api/v1/admin/accounts", {
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.equal(res.status, 200, res.text);
    return res.body.accounts.length as number;
  };
  try {
    const first = startService(env(ADMIN_TOKEN));
    let admin, personal;
    try {
      const url = await listening(first, 180_000);
      admin = await signInOverHttp(url);
      const person = await addPerson(url, { email: "stays@example.test", name: "Stays" });
      const signedIn = await postForm(url, "/dashboard/sign-in", { cookie: "" }, {
        email: person.email,
        password: person.password,
      });
      assert.equal(signedIn.status, 303);
      personal = { cookie: signedIn.headers.get("set-cookie")!.split(";")[0]! };
      assert.equal((await getPage(url, "/dashboard/accounts", admin)).status, 200);
    } finally {
      await first.stop();
    }

    for (const token of [rotated, ADMIN_TOKEN]) {
      const next = startService(env(token));
      try {
        const url = await listening(next, 180_000);
        // The old token's session is refused: the accounts page and its form alike.
        const page = await getPage(url, "/dashboard/accounts", admin);
        assert.equal(page.status, 303);
        assert.equal(page.headers.get("location"), "/dashboard/sign-in?expired=1");
        const before = await accounts(url, token);
        const made = await postForm(url, "/dashboard/accounts", admin, {
          email: "intruder@example.test",
          name: "Intruder",
          _csrf: admin.csrf,
        }, { Origin: url });
        assert.equal(made.status, 303);
        assert.equal(await accounts(url, token), before);
        // A person's session does not hang on the admin token.
        assert.equal((await getPage(url, "/dashboard", personal)).status, 200);
        // The new token signs in.
        const fresh = await fetch(`${url}/dashboard/sign-in`, {
          method: "POST",
          body: new URLSearchParams({ token }),
          redirect: "manual",
        });
        await fresh.body?.cancel();
        assert.equal(fresh.status, 303);
      } finally {
        await next.stop();
      }
      // Back on the first token (the second round), the ended session stays ended.
    }
  } finally {
    await db?.close();
  }
});

Deno.test("dashboard: wrong tokens are rate limited per client address, in PostgreSQL", async () => {
  const attempt = (token: string, address: string) =>
    fetch(`${srv.url}/dashboard/sign-in`, {
      method: "POST",
      body: new URLSearchParams({ token }),
      headers: { "X-Forwarded-For": `198.51.100.1, ${address}` },
      redirect: "manual",
    }).then(async (r) => ({ status: r.status, headers: r.headers, text: await r.text() }));
  const attacker = "203.0.113.7";
  for (let i = 0; i < 10; i++) {
    const wrong = await attempt(`wrong-token-${i}`, attacker);
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /not this instance&#39;s admin token|not this instance's admin token/);
    assert.equal(wrong.headers.get("set-cookie"), null);
  }
  // The eleventh is refused whatever it carries, the right token included.
  const limited = await attempt(ADMIN_TOKEN, attacker);
  assert.equal(limited.status, 503);
  assert.equal(limited.headers.get("set-cookie"), null);
  assert.ok(Number(limited.headers.get("retry-after")) > 0);
  assert.match(limited.text, /Too many wrong tokens/);
  assertSecurityHeaders(limited.headers, "rate-limited sign-in");
  // Another address is not affected.
  assert.equal((await attempt(ADMIN_TOKEN, "203.0.113.8")).status, 303);
  // Once the oldest failure leaves the 15-minute window, the address may try again.
  clock.advance(15 * 60_000 + 1000);
  assert.equal((await attempt(ADMIN_TOKEN, attacker)).status, 303);
  const [row] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from admin_token_failures where address = ${attacker}
  `;
  assert.equal(row!.n, 10);
});

Deno.test("dashboard: a session made on one instance works on another, and ends on both", async () => {
  const other = serveApp(srv.db, { clock });
  try {
    const client = await signInOverHttp(srv.url);
    assert.equal((await getPage(other.url, "/dashboard", client)).status, 200);
    const made = await postForm(other.url, "/dashboard/projects", client, {
      name: "From B",
      _csrf: client.csrf,
    }, { Origin: other.url });
    assert.equal(made.status, 200);
    const out = await postForm(other.url, "/dashboard/sign-out", client, {
      _csrf: client.csrf,
    }, { Origin: other.url });
    assert.equal(out.status, 303);
    assert.equal((await getPage(srv.url, "/dashboard", client)).status, 303);
  } finally {
    await other.close();
  }
});

Deno.test("dashboard: malformed requests get a 4xx page, never a 500, and change nothing", async () => {
  const client = await signInOverHttp(srv.url);
  const env = `/dashboard/environments/${project.productionId}`;
  const before = await projectCount();
  const gets = [
    "/dashboard?q=" + "x".repeat(300),
    `${env}/links?page=0`,
    `${env}/links?page=abc`,
    `${env}/metrics?tz=Mars/Olympus`,
    `${env}/metrics?from=2020-01-01`,
    `${env}/metrics?interval=minute`,
    `${env}/metrics/analytics.csv?to=someday`,
    `${env}/links/${xssPath}/analytics.csv?filter[city]=Paris`,
    `${env}/links/nope/analytics.csv`,
    "/dashboard/environments/abc/links",
    "/dashboard/environments/99999999999/tokens",
    `${env}/links/%00/qr.svg`,
    `${env}/links/${"a".repeat(300)}`,
    `${env}/tokens/abc/revoke`,
    `${env}/destinations/abc/delete`,
    "/dashboard/projects/%E0%A4%A",
    "/dashboard/assets/nothing.css",
    `${env}/export.ndjson?from=2026-04-02&to=2026-04-01`,
    `${env}/export.ndjson?from=2026-04-01&to=2026-04-02&types=nope`,
    `${env}/export.ndjson`,
  ];
  for (const path of gets) {
    const res = await getPage(srv.url, path, client);
    assert.ok(res.status >= 400 && res.status < 500, `${path}: ${res.status}`);
    assertSecurityHeaders(res.headers, path);
  }
  // LIKE's wildcards and escape character are searched for literally.
  const wild = await getPage(srv.url, `${env}/links?q=%25%5C_`, client);
  assert.equal(wild.status, 200);
  assert.match(wild.text, /No link matches/);
  const posts: [string, Record<string, string>][] = [
    ["/dashboard/projects", { name: "\u0000" }],
    ["/dashboard/projects", { name: "   " }],
    ["/dashboard/projects", { name: "x".repeat(201) }],
    [`/dashboard/projects/${project.hashid}`, { name: "" }],
    ["/dashboard/projects/nope", { name: "x" }],
    ["/dashboard/projects/nope/regenerate-key", {}],
    [`${env}/tokens`, { name: "" }],
    [`${env}/tokens/999999/revoke`, {}],
    [`${env}/tokens/abc/revoke`, {}],
    [`${env}/destinations`, { url: "javascript:alert(1)" }],
    [`${env}/destinations/999/delete`, {}],
    [`${env}/links`, { data: '{"a": "\\u0000"}' }],
    [`${env}/links`, { data: "[1]" }],
    [`${env}/links`, { image: "javascript:alert(1)" }],
    [`${env}/links`, { ios_url: "ftp://x" }],
    [`${env}/links`, { title: "x".repeat(1001) }],
    [`${env}/links/${xssPath}/active`, { active: "maybe" }],
    [`${env}/links/nope/active`, { active: "false" }],
    ["/dashboard/environments/abc/links", {}],
  ];
  for (const [path, fields] of posts) {
    const res = await postForm(srv.url, path, client, { ...fields, _csrf: client.csrf });
    assert.ok(res.status >= 400 && res.status < 500, `POST ${path}: ${res.status} ${res.text}`);
    assertSecurityHeaders(res.headers, `POST ${path}`);
  }
  assert.equal(await projectCount(), before);
  const [links] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from links where not sdk_generated
  `;
  assert.equal(links!.n, 1);
  // The form shows each error beside its field.
  const bad = await postForm(srv.url, `${env}/links`, client, {
    _csrf: client.csrf,
    title: "Kept",
    image: "javascript:alert(1)",
  });
  assert.match(bad.text, /id="f-image-error"[^>]*>must be an http\(s\) URL/);
  assert.match(bad.text, /value="Kept"/);
});

Deno.test("dashboard: sign-ins prune expired sessions and failures, whoever made them", async () => {
  const now = clock.now();
  const old = new Date(now.getTime() - 13 * 3600_000);
  await srv.sql`
    insert into dashboard_sessions (token_hash, created_at, last_seen_at)
    select 'dead' || g, ${old}, ${old} from generate_series(1, 5) g
  `;
  await srv.sql`
    insert into admin_token_failures (address, at)
    select '192.0.2.' || g, ${old} from generate_series(1, 5) g
  `;
  const wrong = await fetch(`${srv.url}/dashboard/sign-in`, {
    method: "POST",
    body: new URLSearchParams({ token: "wrong-token-for-pruning" }),
    headers: { "X-Forwarded-For": "192.0.2.200" },
  });
  await wrong.body?.cancel();
  assert.equal(wrong.status, 401);
  const [failures] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from admin_token_failures where address like '192.0.2.%'
  `;
  assert.equal(failures!.n, 1, "only the new failure is left");
  await signInOverHttp(srv.url);
  const [dead] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from dashboard_sessions where token_hash like 'dead%'
  `;
  assert.equal(dead!.n, 0);
});

Deno.test("dashboard: destination and app forms refuse cross-site posts, bad input, private addresses", async () => {
  const client = await signInOverHttp(srv.url);
  const p = await createProject(srv.url, { name: "Forms" });
  const env = `/dashboard/environments/${p.productionId}`;
  // A name that does not resolve is accepted at creation (DNS may come later).
  const made = await call(srv.url, "POST", `/api/v1/projects/${p.productionId}/destinations`, {
    headers: adminHeaders,
    body: { url: "https://hooks.invalid/x" },
  });
  assert.equal(made.status, 201, made.text);
  const id: number = made.body.destination.id;
  const state = async () => {
    const [d] = await srv.sql`
      select url, paused, secret_sealed, event_types from destinations where id = ${id}
    `;
    const [proj] = await srv.sql`select link_domain, apps from projects where hashid = ${p.hashid}`;
    const [n] = await srv.sql<{ n: number }[]>`select count(*)::int as n from destinations`;
    return JSON.stringify({ d, proj, n: n!.n });
  };
  const before = await state();
  const forms: [string, Record<string, string>][] = [
    [`${env}/destinations`, { url: "https://evil.example/hook" }],
    [`${env}/destinations/${id}/paused`, { paused: "true" }],
    [`${env}/destinations/${id}/rotate`, {}],
    [`${env}/destinations/${id}/test`, {}],
    [`${env}/destinations/${id}/delete`, {}],
    [`/dashboard/projects/${p.hashid}/apps`, {
      link_domain: "evil.example",
      ios_team_id: "ABCDE12345",
      ios_bundle_id: "com.evil.app",
    }],
    [`/dashboard/projects/${p.hashid}/apps/remove`, { platform: "ios" }],
  ];
  for (const [path, fields] of forms) {
    const crossSite = await postForm(srv.url, path, client, { ...fields, _csrf: client.csrf }, {
      Origin: "https://evil.example",
    });
    assert.equal(crossSite.status, 403, `cross-site ${path}`);
    const noToken = await postForm(srv.url, path, client, fields);
    assert.equal(noToken.status, 403, `no token ${path}`);
    assertSecurityHeaders(noToken.headers, path);
  }
  assert.equal(await state(), before, "nothing changed");

  // Malformed values: a 4xx page, never a 500, and nothing changes.
  const bad: [string, Record<string, string>][] = [
    [`${env}/destinations`, { url: "javascript:alert(1)" }],
    [`${env}/destinations`, { url: "https://hooks.invalid/y", event_types: "nope" }],
    [`${env}/destinations`, { url: "https://user:pw@hooks.invalid/y" }],
    [`${env}/destinations/${id}/paused`, { paused: "maybe" }],
    [`${env}/destinations/abc/paused`, { paused: "true" }],
    [`${env}/destinations/99999/rotate`, {}],
    [`${env}/destinations/99999/test`, {}],
    [`${env}/destinations/${"9".repeat(30)}/delete`, {}],
    [`/dashboard/projects/${p.hashid}/apps`, { link_domain: "https://go.example.com/x" }],
    [`/dashboard/projects/${p.hashid}/apps`, { link_domain: "lnk.example.test" }],
    [`/dashboard/projects/${p.hashid}/apps`, { ios_team_id: "\u0000", ios_bundle_id: "x" }],
    [`/dashboard/projects/${p.hashid}/apps`, { android_scheme: "javascript" }],
    [`/dashboard/projects/${p.hashid}/apps`, {
      android_package: "com.a.b",
      android_fingerprints: Array(11).fill("AB:".repeat(31) + "AB").join("\n"),
    }],
    [`/dashboard/projects/${p.hashid}/apps/remove`, { platform: "windows" }],
    ["/dashboard/projects/nope/apps", { link_domain: "go.example.com" }],
  ];
  for (const [path, fields] of bad) {
    const res = await postForm(srv.url, path, client, { ...fields, _csrf: client.csrf });
    assert.ok(res.status >= 400 && res.status < 500, `POST ${path}: ${res.status} ${res.text}`);
    assertSecurityHeaders(res.headers, `POST ${path}`);
  }
  assert.equal(await state(), before, "nothing changed");

  // A private address is refused beside the URL field, the typed values kept and escaped.
  const typed = 'http://127.0.0.1:9/"><b>x';
  const refused = await postForm(srv.url, `${env}/destinations`, client, {
    _csrf: client.csrf,
    url: typed,
    event_types: "install",
  });
  assert.equal(refused.status, 400);
  assert.match(
    refused.text,
    /id="f-url-error"[^>]*>Refused: 127\.0\.0\.1 resolves to 127\.0\.0\.1/,
  );
  assert.match(refused.text, /DESTINATIONS_ALLOW_PRIVATE/);
  assert.ok(!refused.text.includes('"><b>x'), "the typed URL is escaped");
  assert.match(refused.text, /id="type-install"[^>]*checked/);
  // A domain another project has, and the instance's own host: beside the domain field.
  const other = await createProject(srv.url, { name: "Other" });
  await call(srv.url, "PATCH", `/api/v1/admin/projects/${other.hashid}`, {
    headers: adminHeaders,
    body: { link_domain: "taken.example.com" },
  });
  const taken = await postForm(srv.url, `/dashboard/projects/${p.hashid}/apps`, client, {
    _csrf: client.csrf,
    link_domain: "Taken.Example.com",
  });
  assert.equal(taken.status, 400);
  assert.match(taken.text, /id="f-link_domain-error"[^>]*>This domain is already used/);
  assert.match(taken.text, /value="Taken.Example.com"/);
  assert.equal(await state(), before, "nothing changed");

  // The pages of one destination carry the headers too; a secret never appears in a page.
  for (const path of [`${env}/destinations/${id}/rotate`, `${env}/destinations/${id}/delete`]) {
    const res = await getPage(srv.url, path, client);
    assert.equal(res.status, 200, path);
    assertSecurityHeaders(res.headers, path);
    assert.ok(!res.text.includes("whsec_"), path);
  }
});
