// The project page's Attribution card in a real Chromium: labelled fields, no overflow on a
// phone, saved through the form, a wrong window shown beside its field.
import assert from "node:assert/strict";
import { checkPage, launchBrowser, screenshot, SCREENSHOT_DIR, test } from "./helpers/browser.ts";
import { signInOverHttp } from "./helpers/dashboard.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

test({
  name:
    "dashboard attribution settings in Chromium: saved through the card, errors beside the field",
  async fn() {
    const srv = await startTestServer();
    const browser = await launchBrowser();
    try {
      const p = await createProject(srv.url, { name: "Attribution" });
      const client = await signInOverHttp(srv.url);
      const [name, value] = client.cookie.split("=") as [string, string];
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      await context.addCookies([{ name, value, url: `${srv.url}/dashboard` }]);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
      await page.goto(`${srv.url}/dashboard/projects/${p.hashid}`);
      const card = page.locator('section[aria-labelledby="attribution-h"]');
      assert.equal(await card.getByLabel("Window in days").inputValue(), "30");
      assert.equal(await card.getByLabel("Model").inputValue(), "first_touch");
      await card.scrollIntoViewIfNeeded();
      await checkPage(page, "attribution-settings");
      // The card alone on a phone, where a long field would overflow first.
      await page.setViewportSize({ width: 390, height: 844 });
      await card.screenshot({ path: `${SCREENSHOT_DIR}/attribution-card-390.png` });
      await page.setViewportSize({ width: 1440, height: 900 });

      await card.getByLabel("Window in days").fill("14");
      await card.getByLabel("Model").selectOption("last_touch");
      await card.getByRole("button", { name: "Save attribution" }).click();
      await page.waitForURL(/saved=1/);
      const res = await call(srv.url, "GET", `/api/v1/admin/projects/${p.hashid}`, {
        headers: adminHeaders,
      });
      assert.equal(res.body.project.attribution_window_days, 14);
      assert.equal(res.body.project.attribution_model, "last_touch");
      assert.equal(
        await page.locator('section[aria-labelledby="attribution-h"]').getByLabel("Window in days")
          .inputValue(),
        "14",
      );

      await page.locator("#f-attribution_window_days").fill("120");
      await page.getByRole("button", { name: "Save attribution" }).click();
      await page.waitForSelector("#f-attribution_window_days-error");
      assert.equal(
        await page.locator("#f-attribution_window_days-error").textContent(),
        "Must be a whole number of days from 1 to 90.",
      );
      await page.locator('section[aria-labelledby="attribution-h"]').scrollIntoViewIfNeeded();
      await screenshot(page, "attribution-settings-error-1440");
      // The refused form answers 400, which Chromium reports; nothing else may go wrong.
      assert.deepEqual(errors.filter((e) => !/status of 400/.test(e)), []);
      await context.close();
    } finally {
      await browser.close();
      await srv.close();
    }
  },
});
