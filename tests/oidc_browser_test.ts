// OpenID Connect sign-in in a real Chromium, against a real provider (oidc-provider) on another
// site (localhost, where the app is 127.0.0.1): the sign-in page puts email and password first,
// then "Sign in with …", then the admin token; the person clicks the provider's button, signs in
// at the provider and lands in the dashboard signed in as their account. A person the dashboard
// does not know is sent back to a clear refusal, signed out. Pages are shot at 390 and 1440 px,
// light and dark, into test-output/screenshots.
import assert from "node:assert/strict";
import { checkPage, launchBrowser, test } from "./helpers/browser.ts";
import { ManualClock } from "./helpers/clock.ts";
import { CLIENT_ID, CLIENT_SECRET, startProvider } from "./helpers/oidc_provider.ts";
import { adminHeaders, call, freePort, startTestServer } from "./helpers/server.ts";

test({
  name: "OpenID Connect in Chromium: Sign in with the provider, land in the dashboard",
  async fn() {
    const port = freePort();
    const redirectUrl = `http://127.0.0.1:${port}/dashboard/sign-in/oidc/callback`;
    const provider = await startProvider({
      host: "localhost",
      redirectUris: [redirectUrl],
      // The email only in the userinfo answer: the service asks for it there.
      emailInIdToken: false,
      people: {
        ada: { email: "ada@example.test", email_verified: true, name: "Ada L." },
        stranger: { email: "stranger@example.test", email_verified: true, name: "Stranger" },
      },
    });
    const srv = await startTestServer({
      clock: new ManualClock("2026-06-15T12:00:00.000Z"),
      port,
      config: {
        OIDC_ISSUER: provider.issuer,
        OIDC_CLIENT_ID: CLIENT_ID,
        OIDC_CLIENT_SECRET: CLIENT_SECRET,
        OIDC_NAME: "Example ID",
        OIDC_REDIRECT_URL: redirectUrl,
      },
    });
    const browser = await launchBrowser();
    try {
      const created = await call(srv.url, "POST", "/api/v1/admin/accounts", {
        headers: adminHeaders,
        body: { email: "Ada@Example.test", name: "Ada Lovelace" },
      });
      assert.equal(created.status, 201);
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      // The provider's development pages load a web font from the internet: refused at once
      // here, rather than left to time out on this closed network.
      await context.route(
        (url) => !["127.0.0.1", "localhost"].includes(url.hostname),
        (route) => route.abort(),
      );
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      page.on("console", (m) => {
        if (m.type() === "error" && page.url().startsWith(srv.url)) {
          if (!/status of 4(00|03)/.test(m.text())) pageErrors.push(m.text());
        }
      });

      await page.goto(`${srv.url}/dashboard/sign-in`);
      const order = await page.$$eval(
        "#password-sign-in, a[href='/dashboard/sign-in/oidc'], #admin-token-sign-in",
        (els) => els.map((e) => e.id || e.textContent?.trim()),
      );
      assert.deepEqual(order, [
        "password-sign-in",
        "Sign in with Example ID",
        "admin-token-sign-in",
      ]);
      await checkPage(page, "oidc-01-sign-in");

      // To the provider (another site), sign in there, and back.
      await page.click("text=Sign in with Example ID");
      await page.waitForURL((u) => u.origin === provider.issuer);
      await page.fill("input[name=login]", "ada");
      await page.fill("input[name=password]", "any password will do");
      await page.click("button[type=submit]");
      await page.waitForURL((u) => u.origin === provider.issuer && u.pathname !== "/");
      await page.click("button:has-text('Continue')");
      await page.waitForURL(`${srv.url}/dashboard`);
      const nav = await page.textContent("nav.top-nav") ?? "";
      assert.match(nav, /Ada Lovelace/);
      await checkPage(page, "oidc-02-signed-in");
      // The session is the dashboard's own: a reload keeps it.
      await page.reload();
      assert.equal(new URL(page.url()).pathname, "/dashboard");

      // Signed out, the provider still knows Ada; a stranger is refused and stays signed out.
      await page.click("text=Sign out");
      await context.clearCookies({ domain: "localhost" });
      await page.click("text=Sign in with Example ID");
      await page.waitForURL((u) => u.origin === provider.issuer);
      await page.fill("input[name=login]", "stranger");
      await page.fill("input[name=password]", "any password will do");
      await page.click("button[type=submit]");
      await page.waitForURL((u) => u.origin === provider.issuer && u.pathname !== "/");
      await page.click("button:has-text('Continue')");
      await page.waitForURL((u) => u.pathname === "/dashboard/sign-in/oidc/callback");
      assert.match(await page.textContent(".notice.error") ?? "", /No account here/);
      const cookies = await context.cookies(srv.url);
      assert.equal(cookies.find((c) => c.name === "dashboard_session"), undefined);
      await checkPage(page, "oidc-03-refused");
      const again = await page.goto(`${srv.url}/dashboard`);
      assert.equal(new URL(again!.url()).pathname, "/dashboard/sign-in");

      assert.deepEqual(pageErrors, []);
    } finally {
      await browser.close();
      await srv.close();
      await provider.close();
    }
  },
});
