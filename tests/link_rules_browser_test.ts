// The rules editor, split results and QR designer in a real Chromium (dashboard/pages/
// link_rules.tsx): rules and conditions added, reordered and removed with JavaScript (in place)
// and without (each button posts the form), a split with its errors shown beside the fields, a
// password, the results with their chart, and the QR designer's preview and refusals. Every page
// is shot at 390 and 1440 px, light and dark (test-output/screenshots, 60-… onwards).
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { checkPage, launchBrowser, test } from "./helpers/browser.ts";
import { ManualClock } from "./helpers/clock.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  call,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

const NOW = "2026-06-15T12:00:00.000Z";
const PHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148";

async function signIn(page: Page, to: string): Promise<void> {
  await page.goto(to);
  await page.fill("#f-token", ADMIN_TOKEN);
  await page.click("#admin-token-sign-in button[type=submit]");
  await page.goto(to);
  assert.equal(new URL(page.url()).pathname, new URL(to).pathname);
}

test({
  name: "the rules editor, split results and QR designer in Chromium, with and without JavaScript",
  async fn() {
    const srv = await startTestServer({ clock: new ManualClock(NOW) });
    const browser = await launchBrowser();
    try {
      const p = await createProject(srv.url, { name: "Acme Mobile" });
      const api = `/api/v1/projects/${p.productionId}/links`;
      const made = await call(srv.url, "POST", api, {
        headers: adminHeaders,
        body: {
          path: "spring",
          title: "Spring sale",
          desktop_custom_redirect: { url: "https://shop.example/spring" },
        },
      });
      assert.equal(made.status, 201, made.text);
      const stored = async () =>
        (await call(srv.url, "GET", `${api}?q=spring`, { headers: adminHeaders })).body.links[0];
      const base = `${srv.url}/dashboard/environments/${p.productionId}/links/spring`;

      // With JavaScript: buttons change the form in place.
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      await signIn(page, `${base}/rules`);
      await checkPage(page, "60-rules-empty");
      await page.click('button[value="add-rule"]');
      await page.waitForSelector("#r0_name");
      await page.fill("#r0_name", "german");
      await page.selectOption("#r0_c0_type", "language");
      await page.fill("#r0_c0_value", "de");
      await page.fill("#r0_url", "https://shop.example/de");
      // A second rule, its condition a query parameter and a second condition, then moved up.
      await page.click('button[value="add-rule"]');
      await page.waitForSelector("#r1_name");
      await page.fill("#r1_name", "newsletter");
      await page.selectOption("#r1_c0_type", "query");
      await page.fill("#r1_c0_value", "utm_source=newsletter");
      await page.click('button[value="add-cond:1"]');
      await page.waitForSelector("#r1_c1_value");
      await page.selectOption("#r1_c1_type", "platform");
      await page.fill("#r1_c1_value", "ios, android");
      await page.check('input[name="r1_mode"][value="split"]');
      await page.fill("#r1_v0_url", "https://shop.example/a");
      await page.fill("#r1_v1_url", "https://shop.example/b");
      await page.fill("#r1_v1_weight", "3");
      // The URL field of a split rule is hidden (CSS :has), its variants shown.
      assert.equal(await page.isVisible("#r1_url"), false);
      assert.equal(await page.isVisible("#r1_v0_url"), true);
      const url = page.url();
      await page.click('button[value="up-rule:1"]');
      await page.waitForFunction(() =>
        (document.querySelector("#r0_name") as HTMLInputElement)?.value === "newsletter"
      );
      // In place: no navigation happened.
      assert.equal(page.url(), url);
      // A condition added and removed again.
      await page.click('button[value="add-cond:1"]');
      await page.waitForSelector("#r1_c1_value");
      await page.click('button[value="remove-cond:1:1"]');
      await page.waitForSelector("#r1_c1_value", { state: "detached" });
      await checkPage(page, "61-rules-editing");
      await page.click('.save-actions button[value="save"]');
      await page.waitForURL(/saved=1/);
      assert.match((await page.textContent(".notice")) ?? "", /Rules saved/);
      const link = await stored();
      assert.deepEqual(link.rules, [
        {
          name: "newsletter",
          when: { platform: ["ios", "android"], query: { utm_source: "newsletter" } },
          split: [{ url: "https://shop.example/a", weight: 1 }, {
            url: "https://shop.example/b",
            weight: 3,
          }],
        },
        { name: "german", when: { language: ["de"] }, url: "https://shop.example/de" },
      ]);

      // A top-level split with a URL the link host would not follow: the error beside the
      // field, nothing saved (what the browser itself checks, such as a weight over 1000, never
      // leaves it).
      await page.click('button[value="add-variant:top"]');
      await page.waitForSelector("#sv1_url");
      await page.fill("#sv0_url", "https://shop.example/spring?v=1");
      await page.fill("#sv1_url", "ftp://files.example/spring");
      await page.fill("#sv1_weight", "2");
      await page.click('.save-actions button[value="save"]');
      await page.waitForSelector("#sv1_url-error");
      assert.match((await page.textContent("#sv1_url-error")) ?? "", /http/);
      assert.equal((await stored()).split, null);
      await checkPage(page, "62-rules-error");
      await page.fill("#sv1_url", "https://shop.example/spring?v=2");
      await page.check("#f-forward_query");
      await page.fill("#password", "back stage");
      await page.click('.save-actions button[value="save"]');
      await page.waitForURL(/saved=1/);
      const saved = await stored();
      assert.deepEqual(saved.split, [
        { url: "https://shop.example/spring?v=1", weight: 1 },
        { url: "https://shop.example/spring?v=2", weight: 2 },
      ]);
      assert.equal(saved.forward_query, true);
      assert.equal(saved.password_protected, true);

      // Results: views per variant with a chart (the password removed again first, without JS).
      await call(srv.url, "PATCH", `${api}/spring`, {
        headers: adminHeaders,
        body: { password: null },
      });
      for (let i = 0; i < 12; i++) {
        const res = await fetch(`${srv.url}/spring`, {
          headers: { "User-Agent": PHONE },
          redirect: "manual",
        });
        await res.body?.cancel();
      }
      await srv.views.flush();
      await page.goto(`${base}/rules`);
      assert.equal(await page.locator(".split-results svg.chart").count(), 2);
      const views = await page.$$eval(
        ".split-results:first-of-type tbody tr td:nth-child(3)",
        (cells) => cells.map((c) => Number(c.textContent!.replace(/,/g, ""))),
      );
      assert.equal(views.reduce((a, b) => a + b, 0), 12);
      await checkPage(page, "63-rules-results");

      // The link page leads to both pages.
      await page.goto(base);
      assert.match((await page.textContent("body")) ?? "", /1 rule|2 rules/);
      assert.equal(await page.locator(`a[href$="/links/spring/rules"]`).count(), 1);
      assert.equal(await page.locator(`a[href$="/links/spring/qr"]`).count(), 1);

      // The QR designer: a preview that loads; colours too close are refused as they change.
      await page.goto(`${base}/qr`);
      await page.waitForFunction(() =>
        (document.querySelector("[data-qr-preview]") as HTMLImageElement)?.naturalWidth > 0
      );
      await checkPage(page, "64-qr-designer");
      await page.fill("#qr-size", "300");
      await page.locator("#qr-fg").evaluate((el: HTMLInputElement) => {
        el.value = "#cccccc";
        el.dispatchEvent(new Event("input", { bubbles: true }));
      });
      await page.waitForFunction(() =>
        /contrast/.test(document.querySelector("[data-qr-error]")?.textContent ?? "")
      );
      const png = await page.getAttribute('[data-qr-download="png"]', "href");
      assert.match(png!, /format=png/);
      assert.deepEqual(pageErrors, []);
      await context.close();

      // Without JavaScript: each button posts the form and the page comes back changed.
      const plain = await browser.newContext({
        viewport: { width: 390, height: 844 },
        javaScriptEnabled: false,
      });
      const noJs = await plain.newPage();
      await signIn(noJs, `${base}/rules`);
      await noJs.click('button[value="add-rule"]');
      await noJs.waitForSelector("#r2_name");
      await noJs.fill("#r2_name", "office");
      await noJs.selectOption("#r2_c0_type", "ip");
      await noJs.fill("#r2_c0_value", "10.0.0.0/8");
      await noJs.fill("#r2_url", "https://intranet.example/");
      await noJs.click('button[value="up-rule:2"]');
      await noJs.waitForFunction(() =>
        (document.querySelector("#r1_name") as HTMLInputElement)?.value === "office"
      );
      await noJs.click('button[value="remove-rule:0"]');
      await noJs.waitForFunction(() =>
        (document.querySelector("#r0_name") as HTMLInputElement)?.value === "office"
      );
      await checkPage(noJs, "65-rules-no-js");
      await noJs.click('.save-actions button[value="save"]');
      await noJs.waitForURL(/saved=1/);
      assert.deepEqual((await stored()).rules.map((r: { name: string }) => r.name), [
        "office",
        "german",
      ]);
      // The QR designer's Preview button, with colours it refuses.
      await noJs.goto(`${base}/qr?fg=%23777777&bg=%23888888&size=512&margin=4&ecc=M`);
      assert.match((await noJs.textContent("[data-qr-error]")) ?? "", /contrast/);
      await checkPage(noJs, "66-qr-refused-no-js");
      await plain.close();
    } finally {
      await browser.close();
      await srv.close();
    }
  },
});
