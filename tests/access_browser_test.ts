// Team access in a real Chromium: the instance admin creates an account (its setup link shown
// once, with a copy button) and makes it a project's owner; the person sets a password, sees only
// their project, creates an API key (shown once) that works, reads the audit log, changes the
// password and signs in with it; an editor sees only the tabs their role opens; the key list says
// who made each key, and the instance admin revokes all a person made. Every page is
// shot at 390×844 and 1440×900, light and dark, into test-output/screenshots.
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { hasHorizontalOverflow, launchBrowser, screenshot, test } from "./helpers/browser.ts";
import { ManualClock } from "./helpers/clock.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  call,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

async function checkPage(page: Page, name: string): Promise<void> {
  // A click that navigates returns once the navigation has started: the new page's load is
  // waited for here, or the checks below can run while its document is still being created
  // (seen once in CI: `document.documentElement` was null).
  await page.waitForLoadState("load");
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll("input:not([type=hidden]), textarea, select")]
      .filter((el) =>
        !(el as HTMLInputElement).labels?.length && !el.getAttribute("aria-label") &&
        !el.getAttribute("aria-labelledby")
      )
      .map((el) => (el as HTMLInputElement).name || el.id)
  );
  assert.deepEqual(unlabelled, [], `${name}: fields without a label`);
  await page.setViewportSize({ width: 390, height: 844 });
  assert.equal(await hasHorizontalOverflow(page), false, `${name}: overflows at 390 px`);
  await screenshot(page, `${name}-390`);
  await page.emulateMedia({ colorScheme: "dark" });
  assert.equal(await hasHorizontalOverflow(page), false, `${name}: overflows at 390 px, dark`);
  await screenshot(page, `${name}-390-dark`);
  await page.setViewportSize({ width: 1440, height: 900 });
  await screenshot(page, `${name}-1440-dark`);
  await page.emulateMedia({ colorScheme: "light" });
  await screenshot(page, `${name}-1440`);
}

const PASSWORD = "a long enough password";
const NEW_PASSWORD = "an even longer password";

test({
  name: "team access in Chromium: accounts, members, API keys, audit log, password",
  async fn() {
    const srv = await startTestServer({ clock: new ManualClock("2026-06-15T12:00:00.000Z") });
    const browser = await launchBrowser();
    try {
      const project = await createProject(srv.url, { name: "Acme Mobile" });
      const pageErrors: string[] = [];
      const open = async () => {
        const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
        await context.grantPermissions(["clipboard-read", "clipboard-write"], {
          origin: srv.url,
        });
        const page = await context.newPage();
        page.on("pageerror", (e) => pageErrors.push(e.message));
        page.on("console", (m) => {
          if (
            m.type() === "error" &&
            !/^Failed to load resource: .* status of 4(00|01|03|04|09)/.test(m.text())
          ) {
            pageErrors.push(m.text());
          }
        });
        return page;
      };

      // The instance admin: an account, its setup link shown once with a copy button.
      const admin = await open();
      await admin.goto(`${srv.url}/dashboard/sign-in`);
      await admin.fill("#f-token", ADMIN_TOKEN);
      await admin.click("#admin-token-sign-in button[type=submit]");
      await admin.click("nav.top-nav a[href='/dashboard/accounts']");
      await checkPage(admin, "access-01-accounts-empty");
      await admin.fill("#f-name", "Ada Lovelace");
      await admin.fill("#f-email", "ada@example.test");
      await admin.click("form[action='/dashboard/accounts'] button[type=submit]");
      const setupUrl = await admin.inputValue("#setup-url");
      assert.match(setupUrl, /\/dashboard\/setup\?token=[A-Za-z0-9_-]{43}$/);
      assert.match(await admin.textContent(".secret") ?? "", /you will not see this again/);
      await admin.click("button[data-copy='setup-url']");
      assert.equal(await admin.evaluate(() => navigator.clipboard.readText()), setupUrl);
      await checkPage(admin, "access-02-account-created");

      // Members: Ada is the project's owner, Eddie (created over the API) its editor.
      const eddie = await call(srv.url, "POST", "/api/v1/admin/accounts", {
        headers: adminHeaders,
        body: { email: "eddie@example.test", name: "Eddie" },
      });
      await admin.goto(`${srv.url}/dashboard/projects/${project.hashid}`);
      await admin.click("a[href$='/members']");
      await checkPage(admin, "access-03-members-empty");
      // The first member is the project's owner: the form says so and offers no other role.
      await admin.fill("#f-email", "ada@example.test");
      assert.equal(await admin.locator("#f-role").count(), 0);
      assert.match(await admin.textContent("#f-role-first") ?? "", /Role: owner\./);
      await admin.click("form[action$='/members'] button[type=submit] >> text=Add member");
      // A refused addition comes back with the role that was chosen.
      await admin.fill("#f-email", "nobody@example.test");
      await admin.selectOption("#f-role", "admin");
      await admin.click("text=Add member");
      assert.match(await admin.textContent(".notice.error") ?? "", /no account with this email/);
      assert.equal(await admin.inputValue("#f-role"), "admin");
      await admin.fill("#f-email", "eddie@example.test");
      await admin.selectOption("#f-role", "editor");
      await admin.click("text=Add member");
      assert.match(await admin.textContent(".list") ?? "", /Ada Lovelace[\s\S]*Eddie/);
      await checkPage(admin, "access-04-members");

      // Ada follows her link: a password, then her projects (this one only).
      const ada = await open();
      await ada.goto(setupUrl);
      await checkPage(ada, "access-05-setup");
      await ada.fill("#f-password", PASSWORD);
      await ada.fill("#f-confirm", PASSWORD);
      await ada.click("button[type=submit]");
      assert.equal(new URL(ada.url()).pathname, "/dashboard");
      assert.match(await ada.textContent("main") ?? "", /Acme Mobile/);
      assert.doesNotMatch(await ada.textContent("main") ?? "", /Create a project/);
      await checkPage(ada, "access-06-member-projects");

      // An API key for production, shown once, that works on the admin API.
      await ada.goto(`${srv.url}/dashboard/environments/${project.productionId}/api-keys`);
      await ada.fill("#f-name", "ci");
      await ada.check("#scope-links\\:read");
      await ada.click("form[action$='/api-keys'] button[type=submit]");
      const key = await ada.inputValue("#api-key-value");
      assert.match(key, /^sk_[A-Za-z0-9_-]{43}$/);
      await checkPage(ada, "access-07-api-key-created");
      const listed = await call(srv.url, "GET", `/api/v1/projects/${project.productionId}/links`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      assert.equal(listed.status, 200);

      // The audit log names who did what.
      await ada.goto(`${srv.url}/dashboard/projects/${project.hashid}`);
      await ada.click("a[href$='/audit']");
      const audit = await ada.textContent("table") ?? "";
      assert.match(audit, /api_key\.create/);
      assert.match(audit, /Ada Lovelace/);
      assert.match(audit, /member\.update/);
      await checkPage(ada, "access-08-audit");

      // Her account: a new password; then sign out and in with it.
      await ada.click("nav.top-nav a[href='/dashboard/account']");
      await ada.fill("#f-current", PASSWORD);
      await ada.fill("#f-password", NEW_PASSWORD);
      await ada.fill("#f-confirm", NEW_PASSWORD);
      await ada.click("form[action='/dashboard/account'] button[type=submit]");
      assert.match(await ada.textContent(".notice") ?? "", /password was changed/);
      await checkPage(ada, "access-09-account");
      await ada.click("text=Sign out");
      await ada.fill("#f-email", "ada@example.test");
      await ada.fill("#f-password", PASSWORD);
      await ada.click("text=Sign in with email");
      assert.match(await ada.textContent(".notice.error") ?? "", /do not match/);
      await checkPage(ada, "access-10-sign-in-failed");
      await ada.fill("#f-password", NEW_PASSWORD);
      await ada.click("text=Sign in with email");
      assert.equal(new URL(ada.url()).pathname, "/dashboard");

      // Eddie (editor) sees the tabs his role opens, not the admin ones.
      const setupEddie = eddie.body.setup_url as string;
      const ed = await open();
      await ed.goto(setupEddie);
      await ed.fill("#f-password", PASSWORD);
      await ed.fill("#f-confirm", PASSWORD);
      await ed.click("button[type=submit]");
      await ed.goto(`${srv.url}/dashboard/environments/${project.productionId}/links`);
      const tabs = await ed.$$eval("nav.tabs a", (as) => as.map((a) => a.textContent));
      assert.deepEqual(tabs, ["Links", "Metrics"]);
      await checkPage(ed, "access-11-editor-links");
      const refused = await ed.goto(
        `${srv.url}/dashboard/environments/${project.productionId}/api-keys`,
      );
      assert.equal(refused?.status(), 403);
      await checkPage(ed, "access-12-editor-refused");

      // Ada's key says who made it; the instance admin revokes all she made, in two clicks.
      await admin.goto(`${srv.url}/dashboard/environments/${project.productionId}/api-keys`);
      assert.match(await admin.textContent(".list") ?? "", /made by Ada Lovelace/);
      await checkPage(admin, "access-13-api-keys-made-by");
      await admin.goto(`${srv.url}/dashboard/accounts`);
      await admin.click("a[href$='/revoke-made'] >> nth=0");
      assert.match(await admin.textContent("h1") ?? "", /Revoke all Ada Lovelace made\?/);
      await checkPage(admin, "access-14-revoke-made-ask");
      await admin.click("form[action$='/revoke-made'] button[type=submit]");
      assert.match(
        await admin.textContent(".notice") ?? "",
        /1 API key and 0 feed tokens revoked, 0 destinations paused/,
      );
      await checkPage(admin, "access-15-revoke-made-done");
      const revoked = await call(srv.url, "GET", `/api/v1/projects/${project.productionId}/links`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      assert.equal(revoked.status, 401);

      assert.deepEqual(pageErrors, []);
    } finally {
      await browser.close();
      await srv.close();
    }
  },
});
