// The one limit on wrong admin tokens, over HTTP: the REST admin API and the dashboard's sign-in
// share it, per client address (IPv6 by /64; no ceiling for the whole instance), in PostgreSQL so
// every instance sees it, its window moved by the injectable clock.
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { ADMIN_TOKEN, assertError, call, serveApp, startTestServer } from "./helpers/server.ts";
import {
  ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS,
  ADMIN_TOKEN_WINDOW_MS,
} from "../services/access/admin_token_limit.ts";
import { MAX_SECRET_LENGTH } from "../infra/secrets.ts";

const clock = new ManualClock("2026-05-01T08:00:00Z");
// Behind a trusted proxy: the client address is X-Forwarded-For's last entry.
const srv = await startTestServer({ clock, config: { TRUST_PROXY: "true" } });
Deno.test.afterAll(() => srv.close());

const PROJECTS = "/api/v1/admin/projects";

/** The REST door: creates a project (a change to look for) with `token`, from `address`. */
function rest(token: string | null, address: string, base = srv.url) {
  return call(base, "POST", PROJECTS, {
    body: { name: "Limited" },
    headers: {
      "X-Forwarded-For": `198.51.100.99, ${address}`,
      ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
    },
  });
}

/** The dashboard door: a sign-in with `token`, from `address`. */
async function signIn(token: string, address: string) {
  const res = await fetch(`${srv.url}/dashboard/sign-in`, {
    method: "POST",
    body: new URLSearchParams({ token }),
    headers: { "X-Forwarded-For": address },
    redirect: "manual",
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function failures(address?: string): Promise<number> {
  const [row] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from admin_token_failures
    where ${address === undefined ? srv.sql`true` : srv.sql`address = ${address}`}
  `;
  return row!.n;
}

async function projects(): Promise<number> {
  const [row] = await srv.sql<{ n: number }[]>`select count(*)::int as n from projects`;
  return row!.n;
}

/** Each test starts with every earlier failure out of the window. */
function freshWindow() {
  clock.advance(ADMIN_TOKEN_WINDOW_MS + 1000);
}

Deno.test("REST admin API: ten wrong tokens from an address, then 503 rate_limited with Retry-After, the right token included", async () => {
  freshWindow();
  const attacker = "203.0.113.7";
  for (let i = 0; i < ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS; i++) {
    assertError(await rest(`wrong-token-${i}`, attacker), 401, "unauthorized");
  }
  const before = await projects();
  const limited = await rest(ADMIN_TOKEN, attacker);
  assertError(limited, 503, "rate_limited", /this address/);
  const retryAfter = Number(limited.headers.get("retry-after"));
  assert.ok(retryAfter > 0 && retryAfter <= ADMIN_TOKEN_WINDOW_MS / 1000, String(retryAfter));
  // A refused request changes nothing: no project, no further failure counted.
  assertError(await rest("another-wrong-token", attacker), 503, "rate_limited");
  assert.equal(await projects(), before);
  assert.equal(await failures(attacker), ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS);
  // Another address is not affected.
  assert.equal((await rest(ADMIN_TOKEN, "203.0.113.8")).status, 201);
  // Once the oldest failure leaves the window, as the Retry-After said, the address may try.
  clock.advance(retryAfter * 1000 - 2000);
  assertError(await rest(ADMIN_TOKEN, attacker), 503, "rate_limited");
  clock.advance(2000);
  assert.equal((await rest(ADMIN_TOKEN, attacker)).status, 201);
});

Deno.test("one limit whichever door: REST failures refuse dashboard sign-ins, and the other way", async () => {
  freshWindow();
  const attacker = "203.0.113.20";
  for (let i = 0; i < ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS / 2; i++) {
    assertError(await rest(`wrong-rest-${i}`, attacker), 401, "unauthorized");
    assert.equal((await signIn(`wrong-dashboard-${i}`, attacker)).status, 401);
  }
  assert.equal(await failures(attacker), ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS);
  const refused = await signIn(ADMIN_TOKEN, attacker);
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get("set-cookie"), null);
  assert.ok(Number(refused.headers.get("retry-after")) > 0);
  assert.match(refused.text, /Too many wrong tokens/);
  assertError(await rest(ADMIN_TOKEN, attacker), 503, "rate_limited");

  // Dashboard failures alone limit the REST door just the same.
  const other = "203.0.113.21";
  for (let i = 0; i < ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS; i++) {
    assert.equal((await signIn(`wrong-${i}`, other)).status, 401);
  }
  assertError(await rest(ADMIN_TOKEN, other), 503, "rate_limited");
});

Deno.test("the right token is never counted, nor a request without one or with an impossible one", async () => {
  freshWindow();
  const admin = "203.0.113.30";
  for (let i = 0; i < ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS - 1; i++) {
    assertError(await rest(`wrong-${i}`, admin), 401, "unauthorized");
  }
  // Nine failures: the admin still gets in, as often as they like, and nothing is counted.
  for (let i = 0; i < 15; i++) assert.equal((await rest(ADMIN_TOKEN, admin)).status, 201);
  assert.equal((await signIn(ADMIN_TOKEN, admin)).status, 303);
  // No token, or one that is not a bearer token, or an empty sign-in: 401 and not counted.
  for (let i = 0; i < 15; i++) assertError(await rest(null, admin), 401, "unauthorized");
  const basic = await call(srv.url, "GET", `${PROJECTS}/x`, {
    headers: { Authorization: "Basic abc", "X-Forwarded-For": admin },
  });
  assertError(basic, 401, "unauthorized");
  assert.equal((await signIn("", admin)).status, 401);
  // Nor one longer than any admin token can be (secrets.ts): refused before any work.
  for (let i = 0; i < 15; i++) {
    assertError(await rest(`${i}`.padEnd(MAX_SECRET_LENGTH + 1, "x"), admin), 401, "unauthorized");
  }
  assert.equal(await failures(admin), ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS - 1);
  assert.equal((await rest(ADMIN_TOKEN, admin)).status, 201);
});

Deno.test("parallel guesses from one address cannot slip under the limit", async () => {
  freshWindow();
  const attacker = "203.0.113.40";
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) => rest(`parallel-wrong-${i}`, attacker)),
  );
  const statuses = answers.map((a) => a.status);
  assert.equal(statuses.filter((s) => s === 401).length, ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS);
  assert.equal(statuses.filter((s) => s === 503).length, 30 - ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS);
  assert.equal(await failures(attacker), ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS);
});

Deno.test("an IPv6 address counts as its /64; an IPv4-mapped one as its IPv4", async () => {
  freshWindow();
  // Ten addresses of one /64 are one address.
  for (let i = 1; i <= ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS; i++) {
    assertError(await rest(`wrong-${i}`, `2001:db8:1:2::${i.toString(16)}`), 401, "unauthorized");
  }
  assertError(await rest(ADMIN_TOKEN, "2001:db8:1:2:ffff::1"), 503, "rate_limited");
  assert.equal(await failures("2001:db8:1:2::/64"), ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS);
  // The next /64 is another address.
  assert.equal((await rest(ADMIN_TOKEN, "2001:db8:1:3::1")).status, 201);

  for (let i = 0; i < ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS; i++) {
    assertError(await rest(`wrong-${i}`, "::ffff:192.0.2.50"), 401, "unauthorized");
  }
  assertError(await rest(ADMIN_TOKEN, "192.0.2.50"), 503, "rate_limited");
});

Deno.test("no instance-wide lockout: wrong tokens from many addresses leave the admin's own address open", async () => {
  freshWindow();
  // The reproduction of issue 32: 100 wrong tokens from 10 addresses, and then a /60's sixteen
  // /64s, each to its own limit.
  for (let a = 0; a < 10; a++) {
    for (let i = 0; i < ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS; i++) {
      assertError(await rest(`wrong-${a}-${i}`, `192.0.2.${a + 1}`), 401, "unauthorized");
    }
  }
  for (let net = 0; net < 16; net++) {
    for (let i = 0; i < ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS; i++) {
      const address = `2001:db8:5:${(0xa0 + net).toString(16)}::${i + 1}`;
      assertError(await rest(`wrong-v6-${net}-${i}`, address), 401, "unauthorized");
    }
  }
  assert.equal(await failures(), 26 * ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS);
  // Each of those addresses is limited; any other takes the right token, through either door.
  assertError(await rest(ADMIN_TOKEN, "192.0.2.1"), 503, "rate_limited", /this address/);
  assertError(await rest(ADMIN_TOKEN, "2001:db8:5:af::99"), 503, "rate_limited");
  assert.equal((await rest(ADMIN_TOKEN, "198.51.100.200")).status, 201);
  assert.equal((await signIn(ADMIN_TOKEN, "198.51.100.201")).status, 303);
  assert.equal((await rest(ADMIN_TOKEN, "2001:db8:5:b0::1")).status, 201);
});

Deno.test("the limit is kept in PostgreSQL: failures on one instance refuse on another", async () => {
  freshWindow();
  const other = serveApp(srv.db, { clock, config: { TRUST_PROXY: "true" } });
  try {
    const attacker = "203.0.113.60";
    for (let i = 0; i < ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS; i++) {
      const base = i % 2 === 0 ? srv.url : other.url;
      assertError(await rest(`wrong-${i}`, attacker, base), 401, "unauthorized");
    }
    assertError(await rest(ADMIN_TOKEN, attacker, srv.url), 503, "rate_limited");
    assertError(await rest(ADMIN_TOKEN, attacker, other.url), 503, "rate_limited");
  } finally {
    await other.close();
  }
});

Deno.test("without TRUST_PROXY, X-Forwarded-For is ignored: a client cannot pick its address", async () => {
  freshWindow();
  const direct = serveApp(srv.db, { clock });
  try {
    for (let i = 0; i < ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS; i++) {
      assertError(
        await rest(`wrong-${i}`, `203.0.113.${100 + i}`, direct.url),
        401,
        "unauthorized",
      );
    }
    assertError(await rest(ADMIN_TOKEN, "203.0.113.250", direct.url), 503, "rate_limited");
    assert.equal(await failures("127.0.0.1"), ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS);
  } finally {
    await direct.close();
  }
});

/** A project made with the right token from an address of its own (nothing counted). */
async function projectEnv(): Promise<number> {
  const res = await rest(ADMIN_TOKEN, "198.51.100.1");
  assert.equal(res.status, 201, res.text);
  return res.body.project.environments.production.project_id;
}

/** Any admin route, from `address`, with `token` as the bearer. */
function as(token: string, address: string, method: string, path: string) {
  return call(srv.url, method, path, {
    headers: { "X-Forwarded-For": address, Authorization: `Bearer ${token}` },
  });
}

Deno.test("every route behind the access guard is a door of the one limit: links, analytics, keys, audit", async () => {
  freshWindow();
  const env = await projectEnv();
  const attacker = "203.0.113.70";
  const doors: [string, string][] = [
    ["GET", `/api/v1/projects/${env}/links`],
    ["POST", `/api/v1/projects/${env}/links/import`],
    ["GET", `/api/v1/projects/${env}/links/export`],
    ["PATCH", `/api/v1/projects/${env}/links/somepath`],
    ["DELETE", `/api/v1/projects/${env}/links/somepath`],
    ["GET", `/api/v1/projects/${env}/analytics`],
    ["GET", `/api/v1/projects/${env}/events_per_day`],
    ["GET", `/api/v1/projects/${env}/api_keys`],
    ["GET", `/api/v1/projects/${env}/audit_log`],
    ["GET", "/api/v1/admin/audit_log"],
  ];
  assert.equal(doors.length, ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS);
  for (const [method, path] of doors) {
    assertError(await as(`wrong-${path}`, attacker, method, path), 401, "unauthorized");
  }
  assert.equal(await failures(attacker), ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS);
  // The address is limited at every door now, the right token included.
  assertError(
    await as(ADMIN_TOKEN, attacker, "GET", `/api/v1/projects/${env}/links`),
    503,
    "rate_limited",
  );
  assertError(await rest(ADMIN_TOKEN, attacker), 503, "rate_limited");
  assert.equal((await signIn(ADMIN_TOKEN, attacker)).status, 503);
});

Deno.test("API keys and the limit: an unknown sk_ value counts, a revoked or expired key does not, a valid key is never limited", async () => {
  freshWindow();
  const env = await projectEnv();
  const key = (kind: string, expires_at: string | null = null) =>
    call(srv.url, "POST", `/api/v1/projects/${env}/api_keys`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "X-Forwarded-For": "198.51.100.1" },
      body: { name: kind, scopes: ["links:read"], expires_at },
    }).then((r) => r.body.api_key as { id: number; value: string });
  const valid = await key("valid");
  const revoked = await key("revoked");
  await call(srv.url, "DELETE", `/api/v1/projects/${env}/api_keys/${revoked.id}`, {
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "X-Forwarded-For": "198.51.100.1" },
  });
  const expiring = await key("expiring", new Date(clock.now().getTime() + 60_000).toISOString());
  clock.advance(61_000);
  const links = `/api/v1/projects/${env}/links`;
  const address = "203.0.113.80";

  // A key we issued that no longer works is no guess: a plain 401, never counted (a forgotten
  // job still sending it cannot use up the allowance that keeps the admin token usable).
  for (let i = 0; i < 2 * ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS; i++) {
    assertError(await as(revoked.value, address, "GET", links), 401, "unauthorized");
    assertError(await as(expiring.value, address, "GET", links), 401, "unauthorized");
  }
  assert.equal(await failures(address), 0);
  assert.equal((await as(ADMIN_TOKEN, address, "GET", links)).status, 200);

  // An sk_ value no key ever had is a wrong bearer like any other: it counts.
  for (let i = 0; i < ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS; i++) {
    const guess = `sk_${crypto.randomUUID().replaceAll("-", "")}${"x".repeat(11)}`;
    assertError(await as(guess, address, "GET", links), 401, "unauthorized");
  }
  assert.equal(await failures(address), ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS);
  assertError(await as(ADMIN_TOKEN, address, "GET", links), 503, "rate_limited");
  // The limit is on guessing the admin token: a valid key works from the limited address.
  assert.equal((await as(valid.value, address, "GET", links)).status, 200);
  assert.equal(await failures(address), ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS);
});

Deno.test("wrong passwords have their own limit: they do not count towards the admin token's, nor it towards theirs", async () => {
  freshWindow();
  const email = "limit.person@example.test";
  const made = await call(srv.url, "POST", "/api/v1/admin/accounts", {
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "X-Forwarded-For": "198.51.100.1" },
    body: { email, name: "Limit Person" },
  });
  assert.equal(made.status, 201, made.text);
  const password = "limit person password 0123";
  const setup = await fetch(`${srv.url}/dashboard/setup`, {
    method: "POST",
    body: new URLSearchParams({
      token: new URL(made.body.setup_url).searchParams.get("token")!,
      password,
      confirm: password,
    }),
    headers: { Origin: srv.url },
    redirect: "manual",
  });
  await setup.body?.cancel();
  assert.equal(setup.status, 303);
  const withPassword = async (pw: string, address: string) => {
    const res = await fetch(`${srv.url}/dashboard/sign-in`, {
      method: "POST",
      body: new URLSearchParams({ email, password: pw }),
      headers: { "X-Forwarded-For": address },
      redirect: "manual",
    });
    return { status: res.status, text: await res.text() };
  };

  const guesser = "203.0.113.90";
  for (let i = 0; i < 10; i++) {
    assert.equal((await withPassword(`wrong ${i}`, guesser)).status, 401);
  }
  const limited = await withPassword(password, guesser);
  assert.equal(limited.status, 503);
  assert.match(limited.text, /Too many failed sign-ins/);
  assert.equal(await failures(guesser), 0, "no admin-token failure was counted");
  assert.equal((await signIn(ADMIN_TOKEN, guesser)).status, 303);
  assertError(await rest(`wrong-after-passwords`, guesser), 401, "unauthorized");

  // The password failures leave the window (the account's own count too); then wrong tokens.
  freshWindow();
  const tokenGuesser = "203.0.113.91";
  for (let i = 0; i < ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS; i++) {
    assert.equal((await signIn(`wrong-${i}`, tokenGuesser)).status, 401);
  }
  assert.equal((await signIn(ADMIN_TOKEN, tokenGuesser)).status, 503);
  assert.equal((await withPassword(password, tokenGuesser)).status, 303);
});
