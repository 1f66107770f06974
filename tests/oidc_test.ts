// OpenID Connect sign-in over HTTP, against real oidc-provider instances on loopback: a verified
// email of an account signs in as it (on whichever instance receives the callback); a forged
// state, a wrong nonce, another issuer, another audience, an unverified or unknown email, a
// replayed or expired callback are each refused with no session made. Refusals count against the
// address's sign-in failures. Codes, tokens and state never reach the log.
import assert from "node:assert/strict";
import { ConfigError, resolveConfig } from "../config.ts";
import { PASSWORD_MAX_FAILURES, PASSWORD_WINDOW_MS } from "../services/access/password_limit.ts";
import { LOGIN_TTL_MS, MAX_PENDING_PER_ADDRESS } from "../services/access/oidc.ts";
import { createLogger } from "../infra/log.ts";
import { ManualClock } from "./helpers/clock.ts";
import {
  CLIENT_ID,
  CLIENT_SECRET,
  loginAtProvider,
  OTHER_CLIENT_ID,
  OTHER_CLIENT_SECRET,
  startProvider,
} from "./helpers/oidc_provider.ts";
import { listening, startService } from "./helpers/process.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  call,
  freePort,
  serveApp,
  startTestServer,
} from "./helpers/server.ts";

const people = {
  ada: { email: "ADA@example.test", email_verified: true, name: "Ada at the provider" },
  grace: { email: "grace@example.test", email_verified: false, name: "Grace" },
  stranger: { email: "stranger@example.test", email_verified: true, name: "Stranger" },
};

const port = freePort();
const redirectUrl = `http://127.0.0.1:${port}/dashboard/sign-in/oidc/callback`;
const providerA = await startProvider({ redirectUris: [redirectUrl], people });
// Another issuer, with the same clients and people: what a mix-up would bring.
const providerB = await startProvider({ redirectUris: [redirectUrl], people });

const logLines: string[] = [];
const logger = createLogger("debug", (line) => logLines.push(line));
const clock = new ManualClock("2026-06-01T08:00:00Z");
const oidcEnv = {
  OIDC_ISSUER: providerA.issuer,
  OIDC_CLIENT_ID: CLIENT_ID,
  OIDC_CLIENT_SECRET: CLIENT_SECRET,
  OIDC_NAME: "Example ID",
  OIDC_REDIRECT_URL: redirectUrl,
};
const srv = await startTestServer({ clock, logger, port, config: oidcEnv });
// A second instance over the same database: the callback may reach either.
const second = serveApp(srv.db, { clock, logger, config: oidcEnv });

Deno.test.afterAll(async () => {
  await second.close();
  await srv.close();
  await providerA.close();
  await providerB.close();
});

for (
  const [email, name] of [["Ada@Example.test", "Ada Lovelace"], ["grace@example.test", "Grace"]]
) {
  const res = await call(srv.url, "POST", "/api/v1/admin/accounts", {
    headers: adminHeaders,
    body: { email, name },
  });
  assert.equal(res.status, 201, res.text);
}

/** Every value a login sent through a URL: the test asserts none reaches the log. */
const seenSecrets = new Set<string>();
function remember(url: URL | string): void {
  for (const [k, v] of new URL(url).searchParams) {
    if (["code", "state", "nonce", "code_challenge"].includes(k)) seenSecrets.add(v);
  }
}

/** Moves past the sign-in failure window: each test starts with a clean slate. */
function freshWindow(): void {
  clock.advance(PASSWORD_WINDOW_MS + 1000);
}

async function sessionCount(): Promise<number> {
  const [row] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from dashboard_sessions
  `;
  return row!.n;
}

/** The dashboard's "Sign in with …" link: the provider's URL and the login's cookie. */
async function startLogin(base = srv.url): Promise<{ authorizationUrl: URL; cookie: string }> {
  const res = await fetch(`${base}/dashboard/sign-in/oidc`, { redirect: "manual" });
  await res.body?.cancel();
  assert.equal(res.status, 303);
  const setCookie = res.headers.getSetCookie().find((c) => c.startsWith("dashboard_oidc="));
  assert.ok(setCookie, "the login's cookie");
  const authorizationUrl = new URL(res.headers.get("location")!);
  remember(authorizationUrl);
  seenSecrets.add(setCookie.split(";")[0]!.slice("dashboard_oidc=".length));
  return { authorizationUrl, cookie: setCookie.split(";")[0]! };
}

/** The provider's answer, delivered to the app's callback (of `base`) with the login's cookie. */
async function callback(callbackUrl: URL, cookie: string | null, base = srv.url) {
  remember(callbackUrl);
  const res = await fetch(`${base}/dashboard/sign-in/oidc/callback${callbackUrl.search}`, {
    headers: cookie ? { cookie } : {},
    redirect: "manual",
  });
  const text = await res.text();
  const session = res.headers.getSetCookie().find((c) => c.startsWith("dashboard_session="));
  return { status: res.status, text, session: session?.split(";")[0] };
}

/** The reason (and failed check) the log gives for the last refused login. */
function lastRefusal(): { reason: string; check?: string } {
  const line = logLines.findLast((l) => l.includes('"oidc sign-in refused"'));
  assert.ok(line, "a refusal was logged");
  const { reason, check } = JSON.parse(line);
  return check === undefined ? { reason } : { reason, check };
}

async function assertRefused(
  result: { status: number; text: string; session: string | undefined },
  status: number,
  message: RegExp,
  sessionsBefore: number,
) {
  assert.equal(result.status, status, result.text);
  assert.match(result.text, message);
  assert.equal(result.session, undefined, "no session cookie");
  assert.equal(await sessionCount(), sessionsBefore, "no session row");
}

Deno.test("the sign-in page offers the provider between the password and the admin token", async () => {
  const res = await call(srv.url, "GET", "/dashboard/sign-in");
  assert.equal(res.status, 200);
  const password = res.text.indexOf('id="password-sign-in"');
  const sso = res.text.indexOf("Sign in with Example ID");
  const token = res.text.indexOf('id="admin-token-sign-in"');
  assert.ok(password > 0 && sso > password && token > sso, "email, then provider, then token");
  assert.match(res.text, /href="\/dashboard\/sign-in\/oidc"/);
});

Deno.test("GET /dashboard/sign-in/oidc: authorization code with PKCE, state and nonce; a Lax, HttpOnly, short-lived cookie", async () => {
  const res = await fetch(`${srv.url}/dashboard/sign-in/oidc`, { redirect: "manual" });
  await res.body?.cancel();
  assert.equal(res.status, 303);
  const url = new URL(res.headers.get("location")!);
  assert.equal(url.origin, providerA.issuer);
  const p = url.searchParams;
  assert.equal(p.get("response_type"), "code");
  assert.equal(p.get("client_id"), CLIENT_ID);
  assert.equal(p.get("redirect_uri"), redirectUrl);
  assert.equal(p.get("scope"), "openid email profile");
  assert.equal(p.get("code_challenge_method"), "S256");
  assert.match(p.get("code_challenge") ?? "", /^[A-Za-z0-9_-]{43}$/);
  assert.match(p.get("state") ?? "", /^[A-Za-z0-9_-]{43}$/);
  assert.match(p.get("nonce") ?? "", /^[A-Za-z0-9_-]{43}$/);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith("dashboard_oidc="))!;
  assert.match(cookie, /; HttpOnly/i);
  assert.match(cookie, /; SameSite=Lax/i);
  assert.match(cookie, /; Path=\/dashboard\/sign-in\/oidc/);
  assert.match(cookie, /; Max-Age=600/);
  // The row holds no state, nonce or verifier: only the hash of the cookie's value.
  const value = cookie.split(";")[0]!.slice("dashboard_oidc=".length);
  const rows = await srv.sql`select * from oidc_logins`;
  const text = JSON.stringify(rows);
  for (const secret of [value, p.get("state")!, p.get("nonce")!, p.get("code_challenge")!]) {
    assert.ok(!text.includes(secret));
  }
  remember(url);
});

Deno.test("a verified email of an account signs in as it (case-insensitively), on any instance", async () => {
  freshWindow();
  const before = await sessionCount();
  // Sent to the provider by one instance, back through the other.
  const { authorizationUrl, cookie } = await startLogin(srv.url);
  const back = await loginAtProvider(authorizationUrl.href, "ada", redirectUrl);
  assert.equal(back.searchParams.get("iss"), providerA.issuer);
  const done = await callback(back, cookie, second.url);
  assert.equal(done.status, 200, done.text);
  assert.ok(done.session, "a session cookie");
  assert.match(done.text, /http-equiv="refresh" content="0; url=\/dashboard"/);
  assert.equal(await sessionCount(), before + 1);
  const home = await fetch(`${srv.url}/dashboard/account`, { headers: { cookie: done.session } });
  const html = await home.text();
  assert.equal(home.status, 200);
  assert.match(html, /Ada Lovelace/);
  assert.match(html, /Ada@Example\.test/);

  // The same callback again: the login was used up.
  await assertRefused(await callback(back, cookie), 400, /already used/, before + 1);
  assert.deepEqual(lastRefusal(), { reason: "expired" });
});

Deno.test("a forged state, or a callback without the login's cookie, is refused", async () => {
  freshWindow();
  const before = await sessionCount();
  const { authorizationUrl, cookie } = await startLogin();
  const back = await loginAtProvider(authorizationUrl.href, "ada", redirectUrl);
  const forged = new URL(back);
  forged.searchParams.set("state", "x".repeat(43));
  await assertRefused(await callback(forged, cookie), 403, /failed a security check/, before);
  assert.deepEqual(lastRefusal(), { reason: "invalid", check: "state" });
  // That attempt used the login up: the genuine answer now finds nothing.
  await assertRefused(await callback(back, cookie), 400, /Start again/, before);

  // Someone else's callback, sent to a browser without the login's cookie (login CSRF).
  const other = await startLogin();
  const theirs = await loginAtProvider(other.authorizationUrl.href, "ada", redirectUrl);
  await assertRefused(await callback(theirs, null), 400, /Start again/, before);
  await assertRefused(
    await callback(theirs, "dashboard_oidc=" + "A".repeat(43)),
    400,
    /Start again/,
    before,
  );
});

Deno.test("an ID token with another nonce is refused", async () => {
  freshWindow();
  const before = await sessionCount();
  const { authorizationUrl, cookie } = await startLogin();
  authorizationUrl.searchParams.set("nonce", "n".repeat(43));
  const back = await loginAtProvider(authorizationUrl.href, "ada", redirectUrl);
  await assertRefused(await callback(back, cookie), 403, /failed a security check/, before);
  assert.deepEqual(lastRefusal(), { reason: "invalid", check: "nonce" });
});

Deno.test("another issuer's answer is refused: its iss parameter, or its ID token", async () => {
  freshWindow();
  const before = await sessionCount();
  // The browser is sent to provider B instead (a mix-up): B's answer names B.
  const first = await startLogin();
  const atB = new URL(
    first.authorizationUrl.pathname + first.authorizationUrl.search,
    providerB.issuer,
  );
  const fromB = await loginAtProvider(atB.href, "ada", redirectUrl);
  assert.equal(fromB.searchParams.get("iss"), providerB.issuer);
  await assertRefused(await callback(fromB, first.cookie), 403, /security check/, before);
  assert.deepEqual(lastRefusal(), { reason: "invalid", check: "iss" });

  // Worse: the answer claims A, and A's token endpoint hands out B's tokens. B's ID token
  // (iss: B, signed by B) is refused by its issuer.
  const second = await startLogin();
  const atB2 = new URL(
    second.authorizationUrl.pathname + second.authorizationUrl.search,
    providerB.issuer,
  );
  const claimsA = await loginAtProvider(atB2.href, "ada", redirectUrl);
  claimsA.searchParams.set("iss", providerA.issuer);
  let relayed = 0;
  providerA.intercept = (req, res) => {
    if (!req.url?.startsWith("/token")) return false;
    relayed++;
    providerB.handler(req, res);
    return true;
  };
  try {
    await assertRefused(await callback(claimsA, second.cookie), 403, /security check/, before);
    assert.deepEqual(lastRefusal(), { reason: "invalid", check: "iss" });
  } finally {
    providerA.intercept = null;
  }
  assert.equal(relayed, 1, "the token request reached provider B");
});

Deno.test("an ID token for another client (audience) is refused", async () => {
  freshWindow();
  const before = await sessionCount();
  const { authorizationUrl, cookie } = await startLogin();
  authorizationUrl.searchParams.set("client_id", OTHER_CLIENT_ID);
  const back = await loginAtProvider(authorizationUrl.href, "ada", redirectUrl);
  // The token endpoint answers as if the other client had asked: its ID token's aud is theirs.
  let swapped = 0;
  providerA.intercept = (req) => {
    if (req.url?.startsWith("/token")) {
      swapped++;
      req.headers.authorization = "Basic " +
        btoa(`${OTHER_CLIENT_ID}:${OTHER_CLIENT_SECRET}`);
    }
    return false;
  };
  try {
    await assertRefused(await callback(back, cookie), 403, /security check/, before);
    assert.deepEqual(lastRefusal(), { reason: "invalid", check: "aud" });
  } finally {
    providerA.intercept = null;
  }
  assert.equal(swapped, 1);
});

Deno.test("an email the provider does not vouch for is refused, even an account's", async () => {
  freshWindow();
  const before = await sessionCount();
  const { authorizationUrl, cookie } = await startLogin();
  const back = await loginAtProvider(authorizationUrl.href, "grace", redirectUrl);
  await assertRefused(await callback(back, cookie), 403, /does not confirm/, before);
  assert.deepEqual(lastRefusal(), { reason: "unverified" });
});

Deno.test("a person who cancels at the provider is told so, and it does not count as a failure", async () => {
  freshWindow();
  const before = await sessionCount();
  const { authorizationUrl, cookie } = await startLogin();
  const back = new URL(redirectUrl);
  back.searchParams.set("error", "access_denied");
  back.searchParams.set("state", authorizationUrl.searchParams.get("state")!);
  back.searchParams.set("iss", providerA.issuer);
  await assertRefused(await callback(back, cookie), 403, /not signed in at Example ID/, before);
  assert.deepEqual(lastRefusal(), { reason: "cancelled" });
  const [row] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from password_signin_failures where at = ${clock.now()}
  `;
  assert.equal(row!.n, 0);
});

Deno.test("a verified email that no account has is refused", async () => {
  freshWindow();
  const before = await sessionCount();
  const { authorizationUrl, cookie } = await startLogin();
  const back = await loginAtProvider(authorizationUrl.href, "stranger", redirectUrl);
  await assertRefused(await callback(back, cookie), 403, /No account here/, before);
  assert.deepEqual(lastRefusal(), { reason: "unknown" });
});

Deno.test("a login left for more than 10 minutes has expired", async () => {
  freshWindow();
  const before = await sessionCount();
  const { authorizationUrl, cookie } = await startLogin();
  const back = await loginAtProvider(authorizationUrl.href, "ada", redirectUrl);
  clock.advance(LOGIN_TTL_MS + 1000);
  await assertRefused(await callback(back, cookie), 400, /took too long/, before);
  assert.deepEqual(lastRefusal(), { reason: "expired" });

  // Just inside the ten minutes still works.
  const fresh = await startLogin();
  const ok = await loginAtProvider(fresh.authorizationUrl.href, "ada", redirectUrl);
  clock.advance(LOGIN_TTL_MS - 1000);
  assert.equal((await callback(ok, fresh.cookie)).status, 200);

  // Logins never finished are removed as others start.
  clock.advance(LOGIN_TTL_MS + 1000);
  await startLogin();
  const [row] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from oidc_logins where expires_at <= ${clock.now()}
  `;
  assert.equal(row!.n, 0);
});

Deno.test("logins under way are capped per address: starting is unauthenticated and writes a row", async () => {
  freshWindow();
  clock.advance(LOGIN_TTL_MS + 1000);
  const pending = async () => {
    const [row] = await srv.sql<{ n: number }[]>`
      select count(*)::int as n from oidc_logins where expires_at > ${clock.now()}
    `;
    return row!.n;
  };
  assert.equal(await pending(), 0);
  for (let i = 0; i < MAX_PENDING_PER_ADDRESS; i++) await startLogin();
  assert.equal(await pending(), MAX_PENDING_PER_ADDRESS);
  const res = await fetch(`${srv.url}/dashboard/sign-in/oidc`, { redirect: "manual" });
  assert.equal(res.status, 503);
  assert.ok(Number(res.headers.get("retry-after")) > 0);
  assert.match(await res.text(), /Too many sign-ins with Example ID are under way/);
  assert.equal(res.headers.getSetCookie().length, 0, "no login cookie");
  assert.equal(await pending(), MAX_PENDING_PER_ADDRESS, "nothing written");
  // Password sign-in is not affected, and the logins free their places as they expire.
  const password = await fetch(`${srv.url}/dashboard/sign-in`, {
    method: "POST",
    body: new URLSearchParams({ email: "ada@example.test", password: "wrong password, long" }),
    redirect: "manual",
  });
  await password.body?.cancel();
  assert.equal(password.status, 401);
  clock.advance(LOGIN_TTL_MS + 1000);
  await startLogin();
  assert.equal(await pending(), 1);
});

Deno.test("refused logins count against the address's sign-in failures", async () => {
  freshWindow();
  const before = await sessionCount();
  const { authorizationUrl, cookie } = await startLogin();
  const good = await loginAtProvider(authorizationUrl.href, "ada", redirectUrl);
  for (let i = 0; i < PASSWORD_MAX_FAILURES; i++) {
    const r = await callback(good, null);
    assert.equal(r.status, 400);
  }
  // Now even a good answer is refused, as a password would be.
  const limited = await callback(good, cookie);
  await assertRefused(limited, 503, /Too many failed sign-ins/, before);
  assert.deepEqual(lastRefusal(), { reason: "rate_limited" });
  const res = await fetch(`${srv.url}/dashboard/sign-in`, {
    method: "POST",
    body: new URLSearchParams({ email: "ada@example.test", password: "whatever-it-is-123" }),
    redirect: "manual",
  });
  await res.body?.cancel();
  assert.equal(res.status, 503, "the password sign-in shares the limit");
});

Deno.test("no code, state, nonce or cookie value of a login is ever logged", () => {
  assert.ok(seenSecrets.size >= 20, `only ${seenSecrets.size} values seen`);
  assert.ok(logLines.some((l) => l.includes('"oidc sign-in refused"')));
  assert.ok(logLines.some((l) => l.includes('"oidc sign-in"')));
  for (const line of logLines) {
    for (const secret of seenSecrets) {
      assert.ok(!line.includes(secret), `a login's value in the log: ${line}`);
    }
  }
});

Deno.test("without OIDC configured: no provider on the page, and its routes are not there", async () => {
  const plain = serveApp(srv.db, { clock });
  try {
    const page = await call(plain.url, "GET", "/dashboard/sign-in");
    assert.doesNotMatch(page.text, /sign-in\/oidc/);
    for (const path of ["/dashboard/sign-in/oidc", "/dashboard/sign-in/oidc/callback?code=x"]) {
      const res = await call(plain.url, "GET", path);
      assert.equal(res.status, 404);
    }
  } finally {
    await plain.close();
  }
});

Deno.test("OIDC configuration: all three or none, https issuers (http on loopback only)", () => {
  const base = { DATABASE_URL: "postgres://x", ADMIN_TOKEN: "a".repeat(20) };
  const fails = (env: Record<string, string>, message: RegExp) =>
    assert.throws(() => resolveConfig({ ...base, ...env }), (e) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, message);
      assert.doesNotMatch(e.message, /\n/);
      return true;
    });
  fails({ OIDC_ISSUER: "https://id.example.test" }, /^OIDC_CLIENT_ID: required when OIDC_ISSUER/);
  fails(
    { OIDC_ISSUER: "https://id.example.test", OIDC_CLIENT_ID: "x" },
    /^OIDC_CLIENT_SECRET: required when OIDC_ISSUER and OIDC_CLIENT_ID are set/,
  );
  fails({ OIDC_CLIENT_SECRET: "s" }, /^OIDC_ISSUER: required/);
  const all = {
    OIDC_ISSUER: "https://id.example.test",
    OIDC_CLIENT_ID: "c",
    OIDC_CLIENT_SECRET: "s",
  };
  fails({ ...all, OIDC_ISSUER: "http://id.example.test" }, /^OIDC_ISSUER: must be an https URL/);
  fails({ ...all, OIDC_ISSUER: "not a url" }, /^OIDC_ISSUER: must be an http\(s\) URL/);
  fails({ ...all, OIDC_REDIRECT_URL: "https://x.test/elsewhere" }, /^OIDC_REDIRECT_URL: /);
  fails({ ...all, OIDC_NAME: "n".repeat(61) }, /^OIDC_NAME: /);
  const on = resolveConfig({ ...base, ...all, LINK_BASE_URL: "https://dash.example.test/" });
  assert.deepEqual(on.oidc, {
    issuer: "https://id.example.test",
    clientId: "c",
    clientSecret: "s",
    displayName: "single sign-on",
    redirectUrl: "https://dash.example.test/dashboard/sign-in/oidc/callback",
  });
  assert.equal(
    resolveConfig({ ...base, ...all, OIDC_ISSUER: "http://127.0.0.1:9/" }).oidc?.issuer,
    "http://127.0.0.1:9/",
  );
  assert.equal(resolveConfig(base).oidc, null);
});

Deno.test("main.ts with the start task's permissions: a bad OIDC value stops start-up in one line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const p = startService({
      DATA_DIR: dir,
      OIDC_ISSUER: "http://id.example.test",
      OIDC_CLIENT_ID: "feeds",
      OIDC_CLIENT_SECRET: "secret",
    });
    assert.equal((await p.status).code, 1);
    assert.equal(
      p.stderr().trim(),
      "configuration error: OIDC_ISSUER: must be an https URL (http only on a loopback address, for tests)",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main.ts with the start task's permissions: openid-client discovers the provider and sends the browser there", async () => {
  const dir = await Deno.makeTempDir();
  const p = startService({
    ...(srv.db.embedded ? { DATA_DIR: dir } : { DATABASE_URL: srv.db.url, ADMIN_TOKEN }),
    ...oidcEnv,
  });
  try {
    const url = await listening(p);
    const res = await fetch(`${url}/dashboard/sign-in/oidc`, { redirect: "manual" });
    await res.body?.cancel();
    assert.equal(res.status, 303, p.stdout());
    assert.equal(new URL(res.headers.get("location")!).origin, providerA.issuer);
  } finally {
    await p.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
