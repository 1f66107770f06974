// The dashboard end to end in a real Chromium: sign in, a project and its key, a feed token
// copied, read with and revoked, links with QR codes and deactivation, metrics, an export
// download, sign out. Every page is shot at 390×844 and 1440×900 (light and dark) into
// test-output/screenshots, and fails on horizontal overflow at 390 px or an unlabelled field.
import assert from "node:assert/strict";
import { checkPage, launchBrowser, openLinkFormSections, test } from "./helpers/browser.ts";
import { ManualClock } from "./helpers/clock.ts";
import { Webhook } from "standardwebhooks";
import { callOnHost } from "./helpers/host.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { ingest } from "./helpers/sdk.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  call,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

const NOW = "2026-06-15T12:00:00.000Z";

test({
  name: "dashboard in Chromium: every page works end to end, on a phone and a desktop",
  async fn() {
    const srv = await startTestServer({ clock: new ManualClock(NOW) });
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext({
        viewport: { width: 1440, height: 900 },
        acceptDownloads: true,
      });
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: srv.url });
      const page = await context.newPage();
      const dialogs: string[] = [];
      page.on("dialog", async (d) => {
        dialogs.push(d.message());
        await d.accept();
      });
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      page.on("console", (m) => {
        // Pages answered 4xx on purpose (a wrong token, a form error, a missing page) log a load
        // failure.
        if (
          m.type() === "error" &&
          !/^Failed to load resource: .* status of 4(00|01|04)/.test(m.text())
        ) {
          pageErrors.push(m.text());
        }
      });

      // Signed out, the dashboard sends the browser to sign in.
      await page.goto(`${srv.url}/dashboard`);
      assert.equal(new URL(page.url()).pathname, "/dashboard/sign-in");
      await checkPage(page, "01-sign-in");
      // The keyboard reaches the first field, the email (people first; the admin token is
      // below), and its focus ring shows (past the skip link and the home link).
      for (let i = 0; i < 3; i++) await page.keyboard.press("Tab");
      const focused = await page.evaluate(() => {
        const el = document.activeElement as HTMLElement;
        return { name: el.getAttribute("name"), outline: getComputedStyle(el).outlineStyle };
      });
      assert.equal(focused.name, "email");
      assert.notEqual(focused.outline, "none");
      await page.fill("#f-token", "not-the-token-at-all");
      await page.click("#admin-token-sign-in button[type=submit]");
      assert.match(await page.textContent(".notice.error") ?? "", /not this instance/);
      await page.fill("#f-token", ADMIN_TOKEN);
      await page.click("#admin-token-sign-in button[type=submit]");
      assert.equal(new URL(page.url()).pathname, "/dashboard");
      assert.match(await page.textContent(".empty") ?? "", /No projects yet/);
      await checkPage(page, "02-projects-empty");

      // A project: its key is shown once, and works for the SDK.
      await page.fill("#f-name", "Acme Mobile");
      await page.click("form[action='/dashboard/projects'] button[type=submit]");
      const projectKey = await page.inputValue("#project-key");
      assert.match(projectKey, /^pk_/);
      assert.match(await page.textContent(".secret") ?? "", /you will not see this again/);
      await checkPage(page, "03-project-created");
      const hashid = new URL(page.url()).pathname === "/dashboard/projects"
        ? await page.evaluate(() =>
          document.querySelector("form[action^='/dashboard/projects/']")!.getAttribute("action")!
            .split("/")[3]!
        )
        : "";
      assert.ok(hashid);
      const sdk = await call(srv.url, "GET", "/api/v1/sdk/metrics_for_project", {
        headers: { "PROJECT-KEY": projectKey, ENVIRONMENT: "production" },
      });
      assert.equal(sdk.status, 200, sdk.text);
      await page.goto(`${srv.url}/dashboard/projects/${hashid}`);
      assert.equal(await page.locator("#project-key").count(), 0, "the key is shown only once");
      assert.ok((await page.content()).indexOf(projectKey) === -1);
      await checkPage(page, "04-project");
      const project = (await call(srv.url, "GET", `/api/v1/admin/projects/${hashid}`, {
        headers: adminHeaders,
      })).body.project;
      const envId: number = project.environments.production.project_id;
      const env = `${srv.url}/dashboard/environments/${envId}`;

      // The project list finds it.
      await page.goto(`${srv.url}/dashboard?q=acme`);
      assert.equal(await page.locator(".list li").count(), 1);
      await checkPage(page, "05-projects");

      // A feed token: shown once, copied, read with, revoked after a confirmation.
      await page.click("text=Acme Mobile");
      await page.click("#env-production ~ ul >> text=Feed tokens");
      assert.match(await page.textContent(".empty") ?? "", /No feed tokens yet/);
      await checkPage(page, "06-tokens-empty");
      await page.fill("#f-name", "warehouse");
      await page.click("form[action$='/tokens'] button[type=submit]");
      const tokenValue = await page.inputValue("#token-value");
      assert.match(tokenValue, /^est_[A-Za-z0-9_-]{32,}$/);
      await page.click("button[data-copy='token-value']");
      await page.waitForSelector("[data-copy-status='token-value']:has-text('Copied')");
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      assert.equal(copied, tokenValue);
      await checkPage(page, "07-token-created");
      const feed = () =>
        call(srv.url, "GET", `/api/v1/projects/${envId}/event_stream`, {
          headers: { Authorization: `Bearer ${copied}` },
        });
      assert.equal((await feed()).status, 200);
      await page.goto(`${env}/tokens`);
      assert.equal(await page.locator("#token-value").count(), 0);
      await page.click("text=Revoke…");
      await checkPage(page, "08-token-revoke-confirm");
      assert.equal((await feed()).status, 200, "nothing is revoked before the confirmation");
      await page.click("button:has-text('Revoke the token')");
      assert.match(await page.textContent(".notice") ?? "", /revoked/);
      assert.equal((await feed()).status, 401);

      // Destinations: add one, see it listed, remove it after a confirmation.
      await page.click("nav.tabs >> text=Destinations");
      assert.match(await page.textContent(".empty") ?? "", /No destinations yet/);
      await checkPage(page, "09-destinations-empty");
      await page.fill("#f-url", "ftp://nope.example");
      await page.click("button:has-text('Add destination')");
      assert.match(await page.textContent("#f-url-error") ?? "", /http\(s\) URL/);
      await page.fill("#f-url", "https://hooks.example.com/events");
      await page.click("button:has-text('Add destination')");
      assert.match(await page.textContent(".notice") ?? "", /Destination added/);
      assert.deepEqual(await page.locator(".list .title").allTextContents(), [
        "https://hooks.example.com/events",
      ]);
      await checkPage(page, "09-destinations");
      await page.click("text=Remove…");
      await page.click("button:has-text('Remove the destination')");
      assert.match(await page.textContent(".notice") ?? "", /removed/);
      assert.equal(await page.locator(".list li").count(), 0);

      // Links: the empty state, then one made with the form's fields.
      await page.goto(`${env}/links`);
      assert.match(await page.textContent(".empty") ?? "", /No links yet/);
      await checkPage(page, "09-links-empty");
      await page.click("text=Make your first link");
      await checkPage(page, "10-link-new");
      // The destination comes first; the other groups open on demand.
      assert.equal(
        await page.getAttribute("form.link-form input:not([type=hidden])", "name"),
        "desktop_url",
      );
      assert.equal(await page.isVisible("#f-data"), false, "the app data's group starts closed");
      await page.fill("#f-title", "Spring poster");
      await openLinkFormSections(page);
      await page.fill("#f-data", "not json");
      await page.click("button:has-text('Create link')");
      assert.match(await page.textContent("#f-data-error") ?? "", /JSON object/);
      assert.equal(await page.inputValue("#f-title"), "Spring poster", "values are kept");
      await checkPage(page, "11-link-new-errors");
      assert.equal(await page.isVisible("#f-data"), true, "a group with an error is open");
      await openLinkFormSections(page);
      await page.fill("#f-data", '{"promo": "spring"}');
      await page.fill("#f-subtitle", "Twenty percent off");
      await page.fill("#f-tags", "print, spring");
      await page.fill("#f-ios_url", "https://apps.example.com/ios");
      await page.check("#f-ios_open_app");
      await page.fill("#f-desktop_url", "https://example.com/spring");
      await page.check("#f-show_preview_android");
      await page.fill("#f-tracking_campaign", "spring");
      await page.click("button:has-text('Create link')");
      assert.match(await page.textContent(".notice") ?? "", /Link created/);
      const linkUrl = await page.inputValue("#link-url");
      const path = new URL(linkUrl).pathname.slice(1);
      const made = (await call(srv.url, "GET", `/api/v1/sdk/link/${path}`, {
        headers: { "PROJECT-KEY": projectKey, ENVIRONMENT: "production" },
      })).body.link;
      assert.equal(made.generated_from_platform, "Dashboard");
      assert.equal(made.sdk_generated, false);
      assert.deepEqual(made.data, { promo: "spring" });
      assert.deepEqual(made.tags, ["print", "spring"]);
      assert.deepEqual(made.ios_custom_redirect, {
        url: "https://apps.example.com/ios",
        open_app_if_installed: true,
      });
      assert.equal(made.desktop_custom_redirect.url, "https://example.com/spring");
      assert.equal(made.show_preview, true);
      assert.equal(made.tracking_campaign, "spring");

      // Its QR code is an SVG image on the page and a download.
      const qrWidth = await page.$eval("img.qr", (img) => (img as HTMLImageElement).naturalWidth);
      assert.ok(qrWidth > 0, "the QR code image loads");
      const [qrDownload] = await Promise.all([
        page.waitForEvent("download"),
        page.click("text=Download SVG"),
      ]);
      const qrSvg = await Deno.readTextFile((await qrDownload.path())!);
      assert.match(qrSvg, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
      assert.equal(qrDownload.suggestedFilename(), `qr-${path}.svg`);

      // The link host serves it, counts views, and answers 404 once it is deactivated.
      const host = (ua: string) =>
        fetch(`${srv.url}/${path}`, { headers: { "User-Agent": ua }, redirect: "manual" })
          .then(async (r) => {
            await r.body?.cancel();
            return r.status;
          });
      const desktopUa = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/124 Safari/537";
      assert.equal(await host(desktopUa), 302);
      assert.equal(await host(desktopUa), 302);
      await srv.views.flush();
      await page.reload();
      assert.match(await page.textContent(".stats") ?? "", /Views\s*2/);
      await checkPage(page, "12-link");
      await page.click("button:has-text('Deactivate')");
      assert.match(await page.textContent(".notice") ?? "", /Link deactivated/);
      assert.equal(await host(desktopUa), 404);
      await page.click("button:has-text('Activate')");
      assert.equal(await host(desktopUa), 302);

      // A title with markup is text, and runs nothing.
      await page.goto(`${env}/links/new`);
      await page.fill("#f-title", "<script>alert(1)</script>");
      await page.click("button:has-text('Create link')");
      assert.equal(await page.textContent("#link-h"), "<script>alert(1)</script>Active");
      await page.goto(`${env}/links`);
      assert.ok(
        (await page.locator(".list .title").allTextContents()).includes(
          "<script>alert(1)</script>",
        ),
      );
      assert.deepEqual(dialogs, []);

      // Search and pages, with more links made through the admin API.
      for (let i = 0; i < 21; i++) {
        await call(srv.url, "POST", `/api/v1/projects/${envId}/links`, {
          headers: adminHeaders,
          body: { title: `Batch ${i}`, tags: [i === 7 ? "lucky" : "batch"] },
        });
      }
      await page.goto(`${env}/links`);
      assert.equal(await page.locator(".list > li").count(), 20);
      assert.match(await page.textContent(".pager") ?? "", /Page 1 of 2 · 23 links/);
      await checkPage(page, "13-links");
      await page.click("text=Older →");
      assert.equal(await page.locator(".list > li").count(), 3);
      await page.fill("input[name=q]", "lucky");
      await page.press("input[name=q]", "Enter");
      assert.deepEqual(await page.locator(".list .title").allTextContents(), ["Batch 7"]);
      await page.fill("input[name=q]", "nothing-like-this");
      await page.press("input[name=q]", "Enter");
      assert.match(await page.textContent(".empty") ?? "", /No link matches/);

      // Metrics: links by views, and the analytics panel (tests/analytics_dashboard_browser_test.ts
      // has the rest of it).
      await ingest(srv.url, projectKey, "production", [
        { type: "install", occurred_at: "2026-06-14T09:00:00Z" },
        { type: "install", occurred_at: "2026-06-14T10:00:00Z" },
        { type: "open", occurred_at: "2026-06-10T10:00:00Z" },
        { type: "custom", name: "signup", occurred_at: "2026-06-01T10:00:00Z" },
      ]);
      await page.goto(`${env}/metrics`);
      const bars = await page.locator(".bars li .name").allTextContents();
      assert.equal(bars[0], "Spring poster", "the most viewed link comes first");
      // Three views (today) and two installs in the last 30 days, a chart each.
      assert.deepEqual(
        await page.locator(".ac-figure figcaption").allTextContents(),
        ["Views 3", "Installs 2"],
      );
      assert.ok(await page.locator(".ac-figure.m-installs svg rect.ac-bar").count() === 30);
      await checkPage(page, "14-metrics");

      // Export: a range and a type, downloaded as NDJSON.
      await page.goto(`${env}/export`);
      await checkPage(page, "15-export");
      await page.fill("#f-from", "2026-06-01");
      await page.fill("#f-to", "2026-06-14");
      await page.check("#type-install");
      await page.check("#type-custom");
      const [exportDownload] = await Promise.all([
        page.waitForEvent("download"),
        page.click("button:has-text('Download NDJSON')"),
      ]);
      const ndjson = await Deno.readTextFile((await exportDownload.path())!);
      const lines = ndjson.trim().split("\n").map((l) => JSON.parse(l));
      assert.deepEqual(lines.map((e) => e.type).sort(), ["custom", "install", "install"]);
      assert.ok(lines.every((e) => e.project.id === hashid && e.project.test === false));
      assert.match(exportDownload.suggestedFilename(), /\.ndjson$/);
      await page.goto(`${env}/export`);
      await page.fill("#f-from", "2026-01-01");
      await page.fill("#f-to", "2026-06-14");
      await page.click("button:has-text('Download NDJSON')");
      assert.match(await page.textContent(".notice.error") ?? "", /at most 31 days/);
      await checkPage(page, "16-export-error");

      // Replacing the key asks first; the new key is shown once and the old one stops at once.
      await page.goto(`${srv.url}/dashboard/projects/${hashid}`);
      await page.click("text=Replace the key…");
      await checkPage(page, "19-regenerate-key-confirm");
      await page.click("button:has-text('Replace the key')");
      const newKey = await page.inputValue("#project-key");
      assert.notEqual(newKey, projectKey);
      const withKey = (key: string) =>
        call(srv.url, "GET", "/api/v1/sdk/metrics_for_project", {
          headers: { "PROJECT-KEY": key, ENVIRONMENT: "production" },
        }).then((r) => r.status);
      assert.equal(await withKey(projectKey), 401);
      assert.equal(await withKey(newKey), 200);

      // Settings: Enterprise off, and feed tokens say what to do.
      await page.goto(`${srv.url}/dashboard/projects/${hashid}`);
      await page.uncheck("#f-enterprise");
      await page.click("button:has-text('Save')");
      assert.match(await page.textContent(".notice") ?? "", /Settings saved/);
      await page.goto(`${env}/tokens`);
      assert.match(await page.textContent("#new-token-h + p") ?? "", /need Enterprise access/);

      // The test environment has its own (empty) pages; an unknown page is an HTML 404.
      await page.goto(
        `${srv.url}/dashboard/environments/${project.environments.test.project_id}/metrics`,
      );
      assert.equal(await page.textContent(".badge.env-test"), "Test");
      assert.match(await page.textContent(".empty") ?? "", /No events in this range/);
      await checkPage(page, "17-metrics-test-env-empty");
      const missing = await page.goto(`${srv.url}/dashboard/environments/${envId}/links/nope`);
      assert.equal(missing?.status(), 404);
      await checkPage(page, "18-not-found");

      // Sign out: the dashboard asks to sign in again.
      await page.click("button:has-text('Sign out')");
      assert.equal(new URL(page.url()).pathname, "/dashboard/sign-in");
      await page.goto(`${srv.url}/dashboard`);
      assert.equal(new URL(page.url()).pathname, "/dashboard/sign-in");
      assert.deepEqual(pageErrors, [], "no script or CSP errors in the console");
    } finally {
      await browser.close();
      await srv.close();
    }
  },
});

test({
  name: "dashboard in Chromium: destinations against a real receiver, link domain and apps",
  async fn() {
    // The clock reads the real time here: Standard Webhooks' verify() refuses a signature whose
    // timestamp is more than five minutes from now.
    const srv = await startTestServer({
      clock: new ManualClock(new Date()),
      config: { DESTINATIONS_ALLOW_PRIVATE: "true" },
    });
    const receiver = startReceiver();
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: srv.url });
      const page = await context.newPage();
      const dialogs: string[] = [];
      page.on("dialog", async (d) => {
        dialogs.push(d.message());
        await d.accept();
      });
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      page.on("console", (m) => {
        if (m.type() === "error" && !/status of 400/.test(m.text())) pageErrors.push(m.text());
      });
      const p = await createProject(srv.url, { name: "Hooks & Apps" });
      const env = `${srv.url}/dashboard/environments/${p.productionId}`;
      await page.goto(`${env}/destinations`);
      await page.fill("#f-token", ADMIN_TOKEN);
      await page.click("#admin-token-sign-in button[type=submit]");
      await page.goto(`${env}/destinations`);

      // Create: URL and two types; the secret is shown once, with its warning and a copy button.
      const hookUrl = `${receiver.url}/hooks?src=dashboard`;
      await page.fill("#f-url", hookUrl);
      await page.check("#type-install");
      await page.check("#type-purchase");
      await page.click("button:has-text('Add destination')");
      assert.match(await page.textContent(".notice") ?? "", /Destination added/);
      const secret = await page.inputValue("#webhook-secret");
      assert.match(secret, /^whsec_[A-Za-z0-9+/=]{20,}$/);
      assert.match(await page.textContent(".secret") ?? "", /you will not see this again/);
      await page.click("button[data-copy='webhook-secret']");
      await page.waitForSelector("[data-copy-status='webhook-secret']:has-text('Copied')");
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
      await checkPage(page, "20-destination-created");
      await page.goto(`${env}/destinations`);
      assert.equal(await page.locator("#webhook-secret").count(), 0, "the secret is shown once");
      assert.equal((await page.content()).indexOf(secret), -1);
      const item = page.locator(".list > li").first();
      assert.equal(await item.locator(".badge").textContent(), "Active");
      assert.match(await item.textContent() ?? "", /install, purchase/);
      assert.match(
        await item.locator(".dest-stats").textContent() ?? "",
        /Pending\s*0\s*Dropped\s*0/,
      );

      // A test delivery: the page shows the receiver's answer, which got a signed request.
      await page.click("button:has-text('Send a test')");
      assert.match(await page.textContent(".test-result") ?? "", /answered 204 in \d+ ms/);
      assert.equal(receiver.received.length, 1);
      const got = receiver.received[0]!;
      new Webhook(secret).verify(got.body, got.headers);
      assert.deepEqual(JSON.parse(got.body), { schema_version: 1, events: [], test: true });
      await checkPage(page, "21-destination-tested");

      // Pause, then resume: the badge and the API agree.
      await page.click("button:has-text('Pause')");
      assert.match(await page.textContent(".notice") ?? "", /Destination paused/);
      assert.equal(await page.locator(".list > li .badge").textContent(), "Paused");
      const listed = await call(srv.url, "GET", `/api/v1/projects/${p.productionId}/destinations`, {
        headers: adminHeaders,
      });
      assert.equal(listed.body.destinations[0].state, "paused");
      assert.deepEqual(listed.body.destinations[0].event_types, ["install", "purchase"]);
      await checkPage(page, "22-destination-paused");
      await page.click("button:has-text('Resume')");
      assert.equal(await page.locator(".list > li .badge").textContent(), "Active");

      // Rotate after a confirmation: a new secret, shown once; both secrets sign for 24 h.
      await page.click("text=New secret…");
      await checkPage(page, "23-destination-rotate-confirm");
      assert.equal(receiver.received.length, 1);
      await page.click("button:has-text('Replace the secret')");
      const rotated = await page.inputValue("#webhook-secret");
      assert.match(rotated, /^whsec_/);
      assert.notEqual(rotated, secret);
      await page.click("button:has-text('Send a test')");
      assert.match(await page.textContent(".test-result") ?? "", /answered 204/);
      const second = receiver.received[1]!;
      new Webhook(rotated).verify(second.body, second.headers);
      new Webhook(secret).verify(second.body, second.headers);

      // A receiver that fails: the page says so.
      receiver.answer = () => new Response("nope", { status: 500 });
      await page.click("button:has-text('Send a test')");
      assert.match(await page.textContent(".notice.error") ?? "", /answered 500/);

      // Link domain and an iOS app, with field errors first (values kept).
      const projectPage = `${srv.url}/dashboard/projects/${p.hashid}`;
      await page.goto(projectPage);
      await page.fill("#f-link_domain", "go.hooks.test");
      await page.fill("#f-ios_team_id", "abc");
      await page.fill("#f-ios_bundle_id", "com.hooks.app");
      await page.fill("#f-android_fingerprints", "not a fingerprint");
      await page.click("button:has-text('Save domain and apps')");
      assert.match(await page.textContent("#f-ios_team_id-error") ?? "", /10 upper-case/);
      assert.match(await page.textContent("#f-android_package-error") ?? "", /package name/);
      assert.match(await page.textContent("#f-android_fingerprints-error") ?? "", /^Line 1: /);
      assert.equal(await page.inputValue("#f-link_domain"), "go.hooks.test", "values are kept");
      assert.equal(await page.inputValue("#f-ios_bundle_id"), "com.hooks.app");
      await checkPage(page, "24-project-apps-errors");
      const aasa = () =>
        callOnHost(srv.url, "go.hooks.test", "/.well-known/apple-app-site-association");
      assert.equal((await aasa()).status, 404, "nothing was saved");

      await page.fill("#f-ios_team_id", "ABCDE12345");
      await page.fill("#f-ios_scheme", "hooks");
      await page.fill("#f-android_fingerprints", "");
      await page.click("button:has-text('Save domain and apps')");
      assert.match(await page.textContent(".notice") ?? "", /Settings saved/);
      assert.equal(await page.inputValue("#f-ios_scheme"), "hooks");
      await checkPage(page, "25-project-apps");
      const file = await aasa();
      assert.equal(file.status, 200);
      assert.deepEqual(JSON.parse(file.text).applinks.details[0].appIDs, [
        "ABCDE12345.com.hooks.app",
      ]);
      const project = await call(srv.url, "GET", `/api/v1/admin/projects/${p.hashid}`, {
        headers: adminHeaders,
      });
      assert.equal(project.body.project.link_domain, "go.hooks.test");
      assert.deepEqual(project.body.project.apps, {
        ios: { team_id: "ABCDE12345", bundle_id: "com.hooks.app", scheme: "hooks" },
      });

      // Remove the app (the script asks first): the association file goes with it.
      await page.click("button:has-text('Remove the iOS app')");
      assert.match(dialogs.at(-1) ?? "", /Remove the iOS app\?/);
      assert.match(await page.textContent(".notice") ?? "", /Settings saved/);
      assert.equal(await page.inputValue("#f-ios_team_id"), "");
      assert.equal((await aasa()).status, 404);
      assert.deepEqual(pageErrors, [], "no script or CSP errors in the console");
    } finally {
      await browser.close();
      await receiver.close();
      await srv.close();
    }
  },
});
