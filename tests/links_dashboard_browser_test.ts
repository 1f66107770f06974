// Managing links in a real Chromium: create with a chosen path and expiry, the edit form, archive,
// the delete confirmation, the list with each link's state, the CSV import with its report of bad
// rows and the export download, and the link host's page for an expired link. The import and
// export run with JavaScript off: the dashboard's forms need none. Every page is shot at 390 and
// 1440 px, light and dark, into test-output/screenshots (30-… onwards).
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { Buffer } from "node:buffer";
import { parse } from "csv-parse/sync";
import {
  checkPage,
  launchBrowser,
  openLinkFormSections,
  screenshot,
  test,
} from "./helpers/browser.ts";
import { ManualClock } from "./helpers/clock.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  call,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

const NOW = "2026-06-15T12:00:00.000Z";
const DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/124 Safari/537.36";

async function signIn(page: Page, base: string, to: string): Promise<void> {
  await page.goto(to);
  await page.fill("#f-token", ADMIN_TOKEN);
  await page.click("#admin-token-sign-in button[type=submit]");
  await page.goto(to);
  assert.equal(new URL(page.url()).pathname, new URL(to).pathname, `signed in at ${base}`);
}

test({
  name: "links in Chromium: create, edit, archive, delete, states, import report, export",
  async fn() {
    const srv = await startTestServer({ clock: new ManualClock(NOW) });
    const browser = await launchBrowser();
    try {
      const p = await createProject(srv.url, { name: "Acme Mobile" });
      const env = `${srv.url}/dashboard/environments/${p.productionId}`;
      const host = async (path: string, userAgent = DESKTOP) => {
        const res = await fetch(`${srv.url}/${path}`, {
          headers: { "User-Agent": userAgent },
          redirect: "manual",
        });
        await res.body?.cancel();
        return { status: res.status, location: res.headers.get("location") };
      };

      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      page.on("console", (m) => {
        // Pages answered 4xx on purpose (a form's errors, the expired link's 410) log a load failure.
        if (
          m.type() === "error" &&
          !/^Failed to load resource: .* status of 4(00|04|10)/.test(m.text())
        ) {
          pageErrors.push(m.text());
        }
      });
      await signIn(page, srv.url, `${env}/links`);

      // Create with a chosen path and the expiry fields; a taken path is refused beside its field.
      await call(srv.url, "POST", `/api/v1/projects/${p.productionId}/links`, {
        headers: adminHeaders,
        body: { path: "summer-sale" },
      });
      await page.click("text=Make your first link");
      await page.fill("#f-path", "summer-sale");
      await page.fill("#f-title", "Spring poster");
      await page.fill("#f-desktop_url", "https://example.com/spring");
      // The expiry in the platform's picker, read in the zone chosen beside it: one second
      // before 1 a.m. in Berlin on New Year's Day is 23:59:59 UTC the day before.
      await openLinkFormSections(page);
      await page.fill("#f-expires_at", "2027-01-01T00:59:59");
      await page.selectOption("#f-expires_tz", "Europe/Berlin");
      await page.fill("#f-max_views", "500");
      await page.fill("#f-expired_url", "https://example.com/over");
      await page.click("button:has-text('Create link')");
      assert.match(await page.textContent("#f-path-error") ?? "", /is taken/);
      assert.equal(await page.inputValue("#f-max_views"), "500", "values are kept");
      await checkPage(page, "30-link-new-path-taken");
      await page.fill("#f-path", "spring-poster");
      await page.click("button:has-text('Create link')");
      assert.match(await page.textContent(".notice") ?? "", /Link created/);
      assert.equal(new URL(page.url()).pathname, `${new URL(env).pathname}/links/spring-poster`);
      assert.match(
        await page.textContent("#link-h ~ p.muted:has-text('Expires')") ?? "",
        /Expires 2026-12-31 23:59 UTC\. At most 500 views\. Then goes to https:\/\/example\.com\/over\./,
      );
      await checkPage(page, "31-link-with-expiry");
      assert.deepEqual(await host("spring-poster"), {
        status: 302,
        location: "https://example.com/spring",
      });

      // The edit form has every field, filled; a bad value comes back beside its field.
      await page.click("a:has-text('Edit')");
      assert.equal(await page.inputValue("#f-desktop_url"), "https://example.com/spring");
      // Shown again in UTC, as the link's page says it.
      assert.equal(await page.inputValue("#f-expires_at"), "2026-12-31T23:59:59");
      assert.equal(await page.inputValue("#f-expires_tz"), "UTC");
      assert.equal(await page.locator("#f-path").count(), 0, "a path never changes");
      await checkPage(page, "32-link-edit");
      await openLinkFormSections(page);
      await page.fill("#f-image", "javascript:alert(1)");
      await page.click("button:has-text('Save')");
      assert.match(await page.textContent("#f-image-error") ?? "", /http/);
      await checkPage(page, "33-link-edit-errors");
      await openLinkFormSections(page);
      await page.fill("#f-image", "");
      await page.fill("#f-title", "Spring poster, reprinted");
      await page.fill("#f-desktop_url", "https://example.com/spring-2");
      await page.fill("#f-ios_url", "https://apps.example.com/ios");
      await page.fill("#f-max_views", "");
      await page.click("button:has-text('Save')");
      assert.match(await page.textContent(".notice") ?? "", /Link saved/);
      assert.equal(await page.textContent("#link-h"), "Spring poster, reprintedActive");
      assert.deepEqual(await host("spring-poster"), {
        status: 302,
        location: "https://example.com/spring-2",
      });
      const iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15";
      assert.deepEqual(await host("spring-poster", iphone), {
        status: 302,
        location: "https://apps.example.com/ios",
      });

      // Archive: the host answers 404, the list leaves it out but its filter shows it.
      await page.click("button:has-text('Archive')");
      assert.match(await page.textContent(".notice") ?? "", /Link archived/);
      assert.equal(await page.textContent("#link-h .badge"), "Archived");
      await checkPage(page, "34-link-archived");
      assert.equal((await host("spring-poster")).status, 404);
      await page.goto(`${env}/links`);
      assert.equal(await page.locator("a[href$='/links/spring-poster']").count(), 0);
      await page.selectOption("select[name=state]", "archived");
      await page.click("button:has-text('Search')");
      assert.deepEqual(await page.locator(".list .title").allTextContents(), [
        "Spring poster, reprinted",
      ]);
      await checkPage(page, "35-links-archived-filter");
      await page.click("text=Spring poster, reprinted");
      await page.click("button:has-text('Unarchive')");
      assert.match(await page.textContent(".notice") ?? "", /brought back/);
      assert.equal((await host("spring-poster")).status, 302);

      // Delete asks first; then the link, its counters and its path are gone for good.
      await page.click("a:has-text('Delete')");
      assert.match(await page.textContent("h2") ?? "", /Delete Spring poster, reprinted\?/);
      await checkPage(page, "36-link-delete-confirm");
      assert.equal((await host("spring-poster")).status, 302, "nothing before the confirmation");
      await page.click("button:has-text('Delete for good')");
      assert.match(await page.textContent(".notice") ?? "", /Link deleted/);
      assert.equal((await host("spring-poster")).status, 404);
      const again = await call(srv.url, "POST", `/api/v1/projects/${p.productionId}/links`, {
        headers: adminHeaders,
        body: { path: "spring-poster" },
      });
      assert.equal(again.status, 400, "a deleted link's path is never given again");

      // The list with each state: active, inactive, expired by date and by views.
      const admin = (method: string, path: string, body?: unknown) =>
        call(srv.url, method, `/api/v1/projects/${p.productionId}/links${path}`, {
          headers: adminHeaders,
          body,
        });
      await admin("POST", "", {
        path: "welcome-back",
        title: "Welcome back",
        tags: ["email", "retention"],
        desktop_custom_redirect: { url: "https://example.com/welcome" },
      });
      await admin("POST", "", { path: "old-campaign", title: "Old campaign" });
      await admin("PATCH", "/old-campaign", { active: false });
      await admin("POST", "", {
        path: "flash-sale",
        title: "Flash sale (ended yesterday)",
        expires_at: "2026-06-14T12:00:00Z",
      });
      await admin("POST", "", {
        path: "first-ten",
        title: "First ten visitors",
        max_views: 1,
        desktop_custom_redirect: { url: "https://example.com/gift" },
      });
      assert.equal((await host("first-ten")).status, 302);
      await srv.views.flush();
      await page.goto(`${env}/links`);
      const badges = await page.locator(".list > li").evaluateAll((items) =>
        items.map((li) =>
          `${li.querySelector(".title")?.textContent}: ${li.querySelector(".badge")?.textContent}`
        )
      );
      assert.deepEqual(badges, [
        "First ten visitors: Expired",
        "Flash sale (ended yesterday): Expired",
        "Old campaign: Inactive",
        "Welcome back: Active",
        "summer-sale: Active",
      ]);
      await checkPage(page, "37-links-states");

      // The link host's answer to an expired link: the 410 page, in light and dark.
      const gone = await page.goto(`${srv.url}/flash-sale`);
      assert.equal(gone?.status(), 410);
      assert.match(await page.textContent("h1") ?? "", /This link has expired/);
      await checkPage(page, "38-host-link-expired");
      assert.deepEqual(pageErrors, [], "no script or CSP errors in the console");
    } finally {
      await browser.close();
      await srv.close();
    }
  },
});

test({
  name: "links in Chromium without JavaScript: the CSV import with its report, and the export",
  async fn() {
    const srv = await startTestServer({ clock: new ManualClock(NOW) });
    const browser = await launchBrowser();
    try {
      const p = await createProject(srv.url, { name: "Acme Mobile" });
      const env = `${srv.url}/dashboard/environments/${p.productionId}`;
      const context = await browser.newContext({
        viewport: { width: 1440, height: 900 },
        javaScriptEnabled: false,
        acceptDownloads: true,
      });
      const page = await context.newPage();
      await signIn(page, srv.url, `${env}/links`);
      await checkPage(page, "39-links-empty-import");

      // A file with bad rows: nothing stored, every bad row named.
      const bad = [
        "path,title,desktop_url,max_views,tags",
        "fdl-spring,Spring,https://example.com/spring,,",
        "fdl-summer,Summer,ftp://example.com/summer,,",
        "api,Reserved path,https://example.com/,,",
        "fdl-autumn,Autumn,https://example.com/autumn,lots,",
        'fdl-winter,Winter,https://example.com/winter,,"not, json"',
        "fdl-spring,Spring again,https://example.com/spring,,",
      ].join("\n") + "\n";
      await page.setInputFiles("#f-file", {
        name: "fdl-export.csv",
        mimeType: "text/csv",
        buffer: Buffer.from(bad),
      });
      await page.click("button:has-text('Import')");
      assert.match(await page.textContent(".notice.error") ?? "", /5 bad rows; nothing was/);
      const report = await page.locator(".import-report tbody tr").evaluateAll((rows) =>
        rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent).slice(0, 2))
      );
      assert.deepEqual(report, [
        ["2", "desktop_url"],
        ["3", "path"],
        ["4", "max_views"],
        ["5", "tags"],
        ["6", "path"],
      ]);
      const [count] = await srv.sql<{ n: number }[]>`select count(*)::int as n from links`;
      assert.equal(count!.n, 0);
      await checkPage(page, "40-links-import-report");

      // The file fixed: imported, the count shown, the links listed.
      const good = [
        "path,title,desktop_url,max_views,tags",
        'fdl-spring,Spring,https://example.com/spring,,"[""season""]"',
        "fdl-summer,Summer,https://example.com/summer,,",
        "fdl-autumn,Autumn,https://example.com/autumn,100,",
      ].join("\n") + "\n";
      await page.setInputFiles("#f-file", {
        name: "fdl-export.csv",
        mimeType: "text/csv",
        buffer: Buffer.from(good),
      });
      await page.click("button:has-text('Import')");
      assert.match(await page.textContent(".notice") ?? "", /3 links imported/);
      assert.equal(await page.locator(".list > li").count(), 3);
      await checkPage(page, "41-links-imported");

      // The export downloads them as CSV, with their state and counters.
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        page.click("text=Export all links (CSV)"),
      ]);
      assert.equal(download.suggestedFilename(), `links-${p.productionId}.csv`);
      const rows = parse(await Deno.readTextFile((await download.path())!), {
        columns: true,
      }) as Record<string, string>[];
      assert.deepEqual(
        rows.map((r) => [r.path, r.desktop_url, r.max_views, r.state, r.total_views]),
        [
          ["fdl-spring", "https://example.com/spring", "", "active", "0"],
          ["fdl-summer", "https://example.com/summer", "", "active", "0"],
          ["fdl-autumn", "https://example.com/autumn", "100", "active", "0"],
        ],
      );
      await screenshot(page, "41-links-imported-export");
    } finally {
      await browser.close();
      await srv.close();
    }
  },
});
