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
const ANDROID = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0 Mobile";
const CRAWLER = "Twitterbot/1.0";

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

Deno.test("an expired link answers the same on every platform: no preview, no app page, nothing of the link", async () => {
  // The project's iOS app has a scheme, so a live hit from an iPhone would get the open-app page.
  const apps = await call(srv.url, "PATCH", `/api/v1/admin/projects/${project.hashid}`, {
    headers: adminHeaders,
    body: { apps: { ios: { team_id: "ABCDE12345", bundle_id: "com.acme.app", scheme: "acme" } } },
  });
  assert.equal(apps.status, 200, apps.text);
  const fields = {
    title: "Secret <sale>",
    image: "https://img.example/sale.png",
    ios_custom_redirect: { url: "https://ios.example/", open_app_if_installed: true },
    android_custom_redirect: { url: "https://android.example/" },
    show_preview_android: true,
    expires_at: "2026-05-01T13:00:00Z",
  };
  const plain = await create(fields);
  const withUrl = await create({ ...fields, expired_url: "https://expired.example/sorry" });
  // Live: the app page on iOS, the preview on Android and for the crawler, a redirect on desktop.
  const live = await hit(srv.url, plain.path, IPHONE);
  assert.equal(live.status, 200);
  assert.match(live.text, /acme:\/\//);
  assert.match((await hit(srv.url, plain.path, ANDROID)).text, /Secret &lt;sale&gt;/);
  clock.set("2026-05-01T13:00:00Z");
  try {
    for (const ua of [IPHONE, ANDROID, DESKTOP, CRAWLER]) {
      for (const base of [srv.url, other.url]) {
        const gone = await hit(base, plain.path, ua);
        assert.equal(gone.status, 410, ua);
        assert.equal(gone.headers.get("content-type"), "text/html; charset=utf-8");
        assert.equal(gone.headers.get("cache-control"), "no-store");
        assert.match(gone.text, /<h1>This link has expired<\/h1>/);
        assert.doesNotMatch(gone.text, /Secret|sale\.png|ios\.example|android\.example|acme:/);
        const moved = await hit(base, withUrl.path, ua);
        assert.equal(moved.status, 302, ua);
        assert.equal(moved.headers.get("location"), "https://expired.example/sorry");
      }
    }
    const head = await hit(srv.url, plain.path, IPHONE, "HEAD");
    assert.equal(head.status, 410);
    assert.equal(head.text, "");
    assert.equal(await totalViews(plain.path), 2, "the two live hits, none since");
  } finally {
    clock.set(NOW);
    await call(srv.url, "PATCH", `/api/v1/admin/projects/${project.hashid}`, {
      headers: adminHeaders,
      body: { apps: null },
    });
  }
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
  const edited = await call(srv.url, "PATCH", base, {
    headers: adminHeaders,
    body: { desktop_custom_redirect: { url: "https://new.example/" } },
  });
  assert.equal(edited.status, 200, edited.text);
  await waitFor(async () =>
    (await hit(other.url, link.path)).headers.get("location") === "https://new.example/"
  );
  // Every platform's target, the preview page and lookup, in one edit.
  const again = await call(srv.url, "PATCH", base, {
    headers: adminHeaders,
    body: {
      title: "Edited on the first",
      ios_custom_redirect: { url: "https://ios.example/v2" },
      android_custom_redirect: { url: "https://android.example/v2" },
      desktop_custom_redirect: { url: "https://desktop.example/v2" },
    },
  });
  assert.equal(again.status, 200, again.text);
  const elapsed = await waitFor(async () => {
    const [ios, android, desktop, preview, lookup] = await Promise.all([
      hit(other.url, link.path, IPHONE),
      hit(other.url, link.path, ANDROID),
      hit(other.url, link.path, DESKTOP),
      hit(other.url, link.path, CRAWLER),
      call(other.url, "GET", `/api/v1/sdk/link/${link.path}`, {
        headers: sdkHeaders(project.key, "production"),
      }),
    ]);
    return ios.headers.get("location") === "https://ios.example/v2" &&
      android.headers.get("location") === "https://android.example/v2" &&
      desktop.headers.get("location") === "https://desktop.example/v2" &&
      /<h1>Edited on the first<\/h1>/.test(preview.text) &&
      /href="https:\/\/desktop\.example\/v2"/.test(preview.text) &&
      lookup.body.link.title === "Edited on the first";
  });
  assert.ok(elapsed < 1000);
  const archived = await call(srv.url, "PATCH", base, {
    headers: adminHeaders,
    body: { archived: true },
  });
  assert.equal(archived.status, 200, archived.text);
  await waitFor(async () => (await hit(other.url, link.path)).status === 404);
  const restored = await call(srv.url, "PATCH", base, {
    headers: adminHeaders,
    body: { archived: false },
  });
  assert.equal(restored.status, 200, restored.text);
  await waitFor(async () => (await hit(other.url, link.path)).status === 302);
  const deleted = await call(srv.url, "DELETE", base, { headers: adminHeaders });
  assert.equal(deleted.status, 204, deleted.text);
  await waitFor(async () => (await hit(other.url, link.path)).status === 404);
});
