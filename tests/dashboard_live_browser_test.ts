// The Live events page in a real Chromium: an event ingested after the page opened appears at
// the top of the list, saying what happened; Pause holds the next ones and Resume shows them.
import assert from "node:assert/strict";
import { hasHorizontalOverflow, launchBrowser, screenshot, test } from "./helpers/browser.ts";
import { ingestMany } from "./helpers/client.ts";
import { signInOverHttp } from "./helpers/dashboard.ts";
import { createFeedToken, createProject, startTestServer } from "./helpers/server.ts";

test({
  name: "dashboard live in Chromium: ingested events appear newest first; pause holds them",
  async fn() {
    const srv = await startTestServer();
    const browser = await launchBrowser();
    try {
      const p = await createProject(srv.url);
      await createFeedToken(srv.url, p.productionId);
      const client = await signInOverHttp(srv.url);
      const [name, value] = client.cookie.split("=") as [string, string];
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      await context.addCookies([{ name, value, url: `${srv.url}/dashboard` }]);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
      await page.goto(`${srv.url}/dashboard/environments/${p.productionId}/live`);
      assert.equal(
        await page.locator('.tabs [aria-current="page"]').textContent(),
        "Live events",
      );
      await page.waitForFunction(() =>
        document.querySelector("[data-live-status]")?.textContent?.startsWith("Live")
      );

      await ingestMany(srv.url, p.key, 2, { prefix: "first" });
      await page.waitForFunction(() =>
        document.querySelectorAll("[data-live-rows] > li").length === 2
      );

      await page.click("[data-live-toggle]");
      await ingestMany(srv.url, p.key, 3, { prefix: "held", type: "custom" });
      await page.waitForFunction(() =>
        document.querySelector("[data-live-status]")?.textContent === "Paused: 3 new events held."
      );
      assert.equal(await page.locator("[data-live-rows] > li").count(), 2);
      await screenshot(page, "live-paused-1440");
      await page.click("[data-live-toggle]");
      assert.equal(await page.locator("[data-live-rows] > li").count(), 5);
      // Newest first: the held custom events are on top.
      assert.equal(
        await page.locator("[data-live-rows] > li:first-child .ev-type").textContent(),
        "Custom event",
      );
      // The event itself, not only its type: a custom event by its name.
      assert.match(
        await page.locator("[data-live-rows] > li:first-child .ev-what").textContent() ?? "",
        /^held-\d$/,
      );
      assert.equal(
        await page.locator("[data-live-rows] > li:last-child .ev-type").textContent(),
        "Install",
      );
      await page.setViewportSize({ width: 390, height: 844 });
      assert.equal(await hasHorizontalOverflow(page), false, "overflows at 390 px");
      await screenshot(page, "live-390");
      await page.setViewportSize({ width: 1440, height: 900 });
      await screenshot(page, "live-1440");
      assert.deepEqual(errors, []);
      await context.close();
    } finally {
      await browser.close();
      await srv.close();
    }
  },
});
