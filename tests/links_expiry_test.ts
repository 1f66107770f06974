// Expiry and visit limits on the link host, and edits served by a second instance over the same
// database (CONTRACT.md, "Managing links").
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { linkMetrics, sdkHeaders } from "./helpers/sdk.ts";
import { adminHeaders, call, createProject, serveApp, startTestServer } from "./helpers/server.ts";

const NOW = "2026-05-01T12:00:00.000Z";
const clock = new ManualClock(NOW);
const srv = await startTestServer({ clock });
// A second instance over the same database, with the same clock.
const other = serveApp(srv.db, { clock });
Deno.test.afterAll(async () => {
  await other.close();
  await srv.close();
});

const project = await createProject(srv.url);
const DESKTOP = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 Chrome/124.0";
const IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15";

async function create(body: Record<string, unknown>) {
  const res = await call(srv.url, "POST", `/api/v1/projects/${project.productionId}/links`, {
    headers: adminHeaders,
    body: { desktop_custom_redirect: { url: "https://dest.example/" }, ...body },
  });
  assert.equal(res.status, 201, res.text);
  return res.body.link;
}
function hit(base: string, path: string, userAgent = DESKTOP, method = "GET") {
  return call(base, method, `/${path}`, { headers: { "User-Agent": userAgent } });
}
async function totalViews(path: string): Promise<number> {
  await srv.views.flush();
  await other.views.flush();
  return (await linkMetrics(srv.url, project.key, path, "production")).total_views;
}

Deno.test("expires_at: from that instant 410 (or 302 to expired_url), no view; lookup still answers", async () => {
  const plain = await create({ expires_at: "2026-05-01T13:00:00Z" });
  const withUrl = await create({
    expires_at: "2026-05-01T13:00:00Z",
    expired_url: "https://expired.example/sorry",
  });
  assert.equal((await hit(srv.url, plain.path)).status, 302);
  clock.set("2026-05-01T12:59:59.999Z");
  assert.equal((await hit(srv.url, plain.path)).status, 302);
  assert.equal(await totalViews(plain.path), 2);

  clock.set("2026-05-01T13:00:00Z");
  const gone = await hit(srv.url, plain.path);
  assert.equal(gone.status, 410);
  assert.equal(gone.headers.get("content-type"), "text/html; charset=utf-8");
  assert.match(gone.text, /has expired/);
  assert.doesNotMatch(gone.text, /dest\.example/);
  const crawler = await hit(srv.url, plain.path, "Slackbot-LinkExpanding 1.0");
  assert.equal(crawler.status, 410);
  const redirected = await hit(other.url, withUrl.path, IPHONE);
  assert.equal(redirected.status, 302);
  assert.equal(redirected.headers.get("location"), "https://expired.example/sorry");
  assert.equal(await totalViews(plain.path), 2);
  assert.equal(await totalViews(withUrl.path), 0);

  const lookup = await call(srv.url, "GET", `/api/v1/sdk/link/${plain.path}`, {
    headers: sdkHeaders(project.key, "production"),
  });
  assert.equal(lookup.status, 200);
  const listed = await call(
    srv.url,
    "GET",
    `/api/v1/projects/${project.productionId}/links?state=expired`,
    { headers: adminHeaders },
  );
  assert.deepEqual(
    listed.body.links.map((l: { path: string }) => l.path).sort(),
    [
      plain.path,
      withUrl.path,
    ].sort(),
  );
  // Clearing the date serves the link again.
  await call(srv.url, "PATCH", `/api/v1/projects/${project.productionId}/links/${plain.path}`, {
    headers: adminHeaders,
    body: { expires_at: null },
  });
  assert.equal((await hit(other.url, plain.path)).status, 302);
  clock.set(NOW);
});

Deno.test("max_views 10: of 100 simultaneous hits over two instances, exactly 10 answered and counted", async () => {
  const link = await create({ max_views: 10 });
  // A HEAD and a crawler take no view.
  assert.equal((await hit(srv.url, link.path, DESKTOP, "HEAD")).status, 302);
  assert.equal((await hit(srv.url, link.path, "Twitterbot/1.0")).status, 200);
  const answers = await Promise.all(
    Array.from({ length: 100 }, (_, i) => hit(i % 2 ? other.url : srv.url, link.path)),
  );
  const statuses = answers.map((r) => r.status);
  assert.equal(statuses.filter((s) => s === 302).length, 10, JSON.stringify(statuses));
  assert.equal(statuses.filter((s) => s === 410).length, 90);
  assert.equal(await totalViews(link.path), 10);
  // Exhausted: a crawler and a HEAD see it expired too.
  assert.equal((await hit(srv.url, link.path, "Twitterbot/1.0")).status, 410);
  assert.equal((await hit(other.url, link.path, DESKTOP, "HEAD")).status, 410);
  const read = await call(
    srv.url,
    "GET",
    `/api/v1/projects/${project.productionId}/links?q=${link.path}`,
    { headers: adminHeaders },
  );
  assert.equal(read.body.links[0].state, "expired");
  // Raising the limit gives views back.
  await call(srv.url, "PATCH", `/api/v1/projects/${project.productionId}/links/${link.path}`, {
    headers: adminHeaders,
    body: { max_views: 11 },
  });
  assert.equal((await hit(other.url, link.path)).status, 302);
  assert.equal((await hit(other.url, link.path)).status, 410);
  assert.equal(await totalViews(link.path), 11);
});

Deno.test("an edit, an archive and a delete on one instance are served by the other within 1 s", async () => {
  const link = await create({});
  assert.equal((await hit(other.url, link.path)).headers.get("location"), "https://dest.example/");
  const base = `/api/v1/projects/${project.productionId}/links/${link.path}`;
  const waitFor = async (check: () => Promise<boolean>) => {
    const start = performance.now();
    while (!(await check())) {
      assert.ok(performance.now() - start < 1000, "not served within 1 s");
      await new Promise((r) => setTimeout(r, 20));
    }
    return performance.now() - start;
  };
  await call(srv.url, "PATCH", base, {
    headers: adminHeaders,
    body: { desktop_custom_redirect: { url: "https://new.example/" } },
  });
  await waitFor(async () =>
    (await hit(other.url, link.path)).headers.get("location") === "https://new.example/"
  );
  await call(srv.url, "PATCH", base, { headers: adminHeaders, body: { archived: true } });
  await waitFor(async () => (await hit(other.url, link.path)).status === 404);
  await call(srv.url, "PATCH", base, { headers: adminHeaders, body: { archived: false } });
  await waitFor(async () => (await hit(other.url, link.path)).status === 302);
  await call(srv.url, "DELETE", base, { headers: adminHeaders });
  await waitFor(async () => (await hit(other.url, link.path)).status === 404);
});
