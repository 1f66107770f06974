// Password links (CONTRACT.md, "Link rules, splits and passwords"): hashed as account passwords
// are, a page that shows nothing of the link (crawlers included), the view counted only after
// the right password, and 10 wrong ones per link and address in 15 minutes, counted in
// PostgreSQL through the injectable clock (never by sleeping), on two instances.
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { adminHeaders, call, createProject, serveApp, startTestServer } from "./helpers/server.ts";

const clock = new ManualClock("2026-05-01T12:00:00Z");
const config = { TRUST_PROXY: "true" };
const srv = await startTestServer({ clock, config });
const other = serveApp(srv.db, { clock, config });
Deno.test.afterAll(async () => {
  await other.close();
  await srv.close();
});
const project = await createProject(srv.url);
const base = `/api/v1/projects/${project.productionId}/links`;
const SECRET = "correct horse";
const DESTINATION = "https://secret.example/launch-plan";
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";

async function protectedLink() {
  const res = await call(srv.url, "POST", base, {
    headers: adminHeaders,
    body: {
      title: "Launch plan Q3",
      subtitle: "Confidential roadmap",
      image: "https://secret.example/cover.png",
      desktop_custom_redirect: { url: DESTINATION },
      password: SECRET,
    },
  });
  assert.equal(res.status, 201, res.text);
  return res.body.link;
}

function post(path: string, password: string, address = "203.0.113.5", on = srv.url) {
  return call(on, "POST", `/${path}`, {
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      "User-Agent": IPHONE,
      "X-Forwarded-For": address,
    },
    raw: new URLSearchParams({ password }).toString(),
  });
}

async function totalViews(path: string): Promise<number> {
  await srv.views.flush();
  await other.views.flush();
  const res = await call(srv.url, "GET", `${base}?q=${path}`, { headers: adminHeaders });
  return res.body.links[0].total_views;
}

Deno.test("a password link shows a page with nothing of the link, to people and crawlers, and counts nothing", async () => {
  const link = await protectedLink();
  assert.equal(link.password_protected, true);
  assert.equal("password" in link, false);
  assert.equal("password_hash" in link, false);
  const [row] = await srv.sql<{ password_hash: string }[]>`
    select password_hash from links where path = ${link.path}`;
  assert.match(row!.password_hash, /^scrypt\$15\$8\$3\$/);
  assert.ok(!row!.password_hash.includes(SECRET));
  for (const ua of [IPHONE, "Twitterbot/1.0", "Slackbot-LinkExpanding 1.0"]) {
    const res = await call(srv.url, "GET", `/${link.path}`, { headers: { "User-Agent": ua } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-security-policy")!, /form-action 'self'/);
    assert.match(res.text, /<meta name="robots" content="noindex">/);
    assert.match(res.text, /Password required/);
    for (const secret of ["Launch plan", "Confidential", "secret.example", link.path]) {
      assert.ok(!res.text.includes(secret), `${ua}: the page shows ${secret}`);
    }
  }
  assert.equal(await totalViews(link.path), 0);
});

Deno.test("the right password gets the usual answer and one view; a wrong one 401 and the page", async () => {
  const link = await protectedLink();
  const wrong = await post(link.path, "incorrect");
  assert.equal(wrong.status, 401);
  assert.match(wrong.text, /not right/);
  assert.ok(!wrong.text.includes(DESTINATION));
  const right = await post(link.path, SECRET, "203.0.113.5", other.url);
  assert.equal(right.status, 302);
  assert.equal(right.headers.get("location"), DESTINATION);
  assert.equal(await totalViews(link.path), 1);
  // Removing the password opens the link to everyone.
  const patched = await call(srv.url, "PATCH", `${base}/${link.path}`, {
    headers: adminHeaders,
    body: { password: null },
  });
  assert.equal(patched.body.link.password_protected, false);
  const open = await call(other.url, "GET", `/${link.path}`, { headers: { "User-Agent": IPHONE } });
  assert.equal(open.status, 302);
  assert.equal(open.headers.get("location"), DESTINATION);
});

Deno.test("after 10 wrong passwords for one link from one address in 15 minutes: 503 with Retry-After, then free again", async () => {
  const link = await protectedLink();
  const address = "198.51.100.77";
  // Spread over both instances: the count is in PostgreSQL.
  for (let i = 0; i < 10; i++) {
    clock.advance(30_000);
    const res = await post(link.path, `guess ${i}`, address, i % 2 ? other.url : srv.url);
    assert.equal(res.status, 401, `guess ${i}`);
  }
  // The eleventh is refused before any comparison, even with the right password.
  const limited = await post(link.path, SECRET, address);
  assert.equal(limited.status, 503);
  assert.match(limited.text, /Too many wrong passwords/);
  const retryAfter = Number(limited.headers.get("retry-after"));
  // The first failure was 9 × 30 s ago: it leaves the 15-minute window in 15 min − 270 s.
  assert.equal(retryAfter, 15 * 60 - 9 * 30);
  // Another address, and the same address on another link, are not limited.
  assert.equal((await post(link.path, SECRET, "198.51.100.78")).status, 302);
  const second = await protectedLink();
  assert.equal((await post(second.path, SECRET, address)).status, 302);
  // An IPv6 /64 is one address.
  for (let i = 0; i < 10; i++) await post(second.path, "nope", `2001:db8:1:2::${i + 1}`);
  assert.equal((await post(second.path, SECRET, "2001:db8:1:2::ff")).status, 503);
  assert.equal((await post(second.path, SECRET, "2001:db8:1:3::1")).status, 302);
  // Once the oldest failure leaves the window, one more attempt is allowed.
  clock.advance(retryAfter * 1000);
  assert.equal((await post(link.path, SECRET, address)).status, 302);
  assert.equal(await totalViews(link.path), 2);
});

Deno.test("a password form body over 4 KiB is refused as a wrong password, unread", async () => {
  const link = await protectedLink();
  const res = await post(link.path, "x".repeat(10_000), "192.0.2.50");
  assert.equal(res.status, 401);
  const none = await call(srv.url, "POST", `/${link.path}`, {
    headers: { "X-Forwarded-For": "192.0.2.51" },
  });
  assert.equal(none.status, 401);
});

Deno.test("a link without a password takes no POST", async () => {
  const res = await call(srv.url, "POST", base, {
    headers: adminHeaders,
    body: { desktop_custom_redirect: { url: DESTINATION } },
  });
  const answer = await post(res.body.link.path, "anything");
  assert.equal(answer.status, 405);
  assert.equal(answer.headers.get("allow"), "GET, HEAD");
});
