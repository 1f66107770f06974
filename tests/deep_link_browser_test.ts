// The iOS open-app page in a real browser (Chromium with an iPhone user agent): the scheme
// attempt fails (no app handles it), so the page must go on to the fallback; and the App Store
// button copies the link for a deferred deep link before it leaves.
import assert from "node:assert/strict";
import { launchBrowser, screenshot, SKIP_BROWSER_TESTS, test } from "./helpers/browser.ts";
import { generateLink, linkMetrics } from "./helpers/sdk.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const IPHONE_UA =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";

const srv = await startTestServer();
// A real receiver for the fallback: the custom redirect of the link.
const landings: string[] = [];
const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
  landings.push(new URL(req.url).pathname);
  return new Response("<!doctype html><title>Landing</title><h1>Landing page</h1>", {
    headers: { "Content-Type": "text/html" },
  });
});
const browser = SKIP_BROWSER_TESTS ? undefined : await launchBrowser();
Deno.test.afterAll(async () => {
  await browser?.close();
  await receiver.shutdown();
  await srv.close();
});

const project = await createProject(srv.url, { name: "Browser" });
const patched = await call(srv.url, "PATCH", `/api/v1/admin/projects/${project.hashid}`, {
  headers: adminHeaders,
  body: {
    apps: {
      ios: {
        team_id: "ABCDE12345",
        bundle_id: "com.acme.app",
        app_store_id: "123456789",
        scheme: "acmetest",
      },
    },
  },
});
assert.equal(patched.status, 200, patched.text);

async function iphonePage() {
  const context = await browser!.newContext({
    userAgent: IPHONE_UA,
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
  });
  return { context, page: await context.newPage() };
}

test("iOS open-app page: after the scheme attempt fails, the browser goes to the fallback", async () => {
  const landing = `http://127.0.0.1:${receiver.addr.port}/landing`;
  const path = await generateLink(srv.url, project.key, "production", {
    title: "Spring sale",
    subtitle: "Opens in the app when it is installed",
    ios_custom_redirect: { url: landing, open_app_if_installed: true },
  });
  const { context, page } = await iphonePage();
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(err.message));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  try {
    const started = Date.now();
    await page.goto(`${srv.url}/${path}`);
    await page.waitForURL(landing, { timeout: 15_000 });
    assert.ok(Date.now() - started >= 1000, "the app was given its time to open");
    assert.equal(await page.textContent("h1"), "Landing page");
    assert.deepEqual(landings.filter((p) => p !== "/favicon.ico"), ["/landing"]);
    // The page's script ran under its CSP without a violation.
    assert.deepEqual(errors.filter((e) => /Content Security Policy/i.test(e)), []);
  } finally {
    await context.close();
  }
  await srv.views.flush();
  assert.equal((await linkMetrics(srv.url, project.key, path)).total_views, 1);
});

test("iOS open-app page, preview first: waits for a tap; the App Store button copies the link, then opens the store", async () => {
  const path = await generateLink(srv.url, project.key, "production", {
    title: "Summer <sale> & more",
    subtitle: "Tap to open the app, or get it from the App Store",
    show_preview_ios: true,
    ios_custom_redirect: { open_app_if_installed: true },
  });
  const { context, page } = await iphonePage();
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  // The App Store is outside this closed network: answer for it.
  await page.route(
    "https://apps.apple.com/**",
    (route) =>
      route.fulfill({ contentType: "text/html", body: "<title>App Store</title><h1>Acme</h1>" }),
  );
  try {
    await page.goto(`${srv.url}/${path}`);
    assert.equal(await page.textContent("h1"), "Summer <sale> & more");
    await page.waitForTimeout(2000);
    assert.equal(page.url(), `${srv.url}/${path}`, "preview first: no navigation before a tap");
    await screenshot(page, "deep_link_ios_open_app_page");
    await page.click("#store-button");
    await page.waitForURL("https://apps.apple.com/app/id123456789", { timeout: 10_000 });
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    // The link's URL with the view's click id (tests/link_host_click_ids_test.ts reads it back).
    assert.match(
      copied,
      new RegExp(`^https://lnk\\.example\\.test/${path}\\?click_id=[A-Za-z0-9_-]{42}$`),
    );
  } finally {
    await context.close();
  }
});
