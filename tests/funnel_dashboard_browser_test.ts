// "Top links by revenue" in a real Chromium: reached from the metrics page, it shows the
// environment's funnel (bars and figures) and the top links by revenue with their funnels, the
// same figures as the REST route for the same range; titles with markup stay text; a refused
// range is said beside the form (400). Shot at 390 and 1440 px, light and dark, into
// test-output/screenshots.
import assert from "node:assert/strict";
import { checkPage, launchBrowser, test } from "./helpers/browser.ts";
import { ManualClock } from "./helpers/clock.ts";
import { generateLink, type Json } from "./helpers/sdk.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  call,
  createProject,
  startTestServer,
} from "./helpers/server.ts";
import { insertInstall } from "./helpers/installs.ts";

const NOW = "2026-06-15T12:00:00.000Z";
const IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15";
const MARKUP = `<img src=x onerror="alert(1)">`;

test({
  name: "Top links by revenue in Chromium: the funnel's bars and figures, the links' table",
  async fn() {
    const clock = new ManualClock(NOW);
    const srv = await startTestServer({ clock });
    const browser = await launchBrowser();
    try {
      const project = await createProject(srv.url, { name: "Acme Funnel" });
      const envId = project.productionId;
      const made: [string, string][] = [
        ["spring", "Spring poster"],
        ["autumn", MARKUP],
        ["winter", "Winter newsletter with a rather long title that has to wrap"],
      ];
      for (const [path, title] of made) {
        const res = await call(srv.url, "POST", `/api/v1/projects/${envId}/links`, {
          headers: adminHeaders,
          body: { path, title },
        });
        assert.equal(res.status, 201, res.text);
      }
      // A link an app made: listed, without a dashboard page to link to.
      const sdkPath = await generateLink(srv.url, project.key, "production", { title: "From app" });
      const ids = new Map((await srv.sql<{ id: number; path: string }[]>`
        select id, path from links where environment_id = ${envId}`).map((r) => [r.path, r.id]));

      // Views over the last ten days, then installs and purchases as ingestion attributes them.
      const plan: [string, number, number, number[]][] = [
        // path, views, installs, purchases (converted amounts)
        ["spring", 40, 12, [4_999, 4_999, 1_999]],
        ["autumn", 25, 6, [9_900]],
        ["winter", 30, 4, []],
        [sdkPath, 10, 3, [1_500, 2_500]],
      ];
      let n = 0;
      for (const [path, views, installs, purchases] of plan) {
        for (let i = 0; i < views; i++) {
          clock.set(new Date(Date.parse(NOW) - (i % 10) * 86_400_000 - 3_600_000));
          const res = await call(srv.url, "GET", `/${path}`, { headers: { "User-Agent": IPHONE } });
          assert.ok(res.status === 200 || res.status === 302, res.text);
          await srv.views.flush();
        }
        for (let i = 0; i < installs; i++) {
          const at = new Date(Date.parse(NOW) - (i % 9) * 86_400_000 - 1_800_000);
          await insertInstall(
            srv.sql,
            envId,
            at,
            ids.get(path)!,
            i % 3 === 0 ? null : 60 * (i + 1),
          );
        }
        for (const [i, amount] of purchases.entries()) {
          const hour = new Date(Date.parse("2026-06-14T09:00:00Z") - i * 86_400_000);
          await srv.sql`insert into purchase_versions (environment_id, transaction_id, name,
              version, amount, link_id, hour, currency, converted, user_id)
            values (${envId}, ${`t${++n}`}, 'purchase', 1, ${amount}, ${ids.get(path)!},
              ${hour}, 'USD', ${amount}, ${`user-${path}-${i % 2}`})`;
        }
      }
      clock.set(NOW);

      const rest = async (params: Record<string, string>) => {
        const res = await call(
          srv.url,
          "GET",
          `/api/v1/projects/${envId}/analytics/funnel?${new URLSearchParams(params)}`,
          { headers: adminHeaders },
        );
        assert.equal(res.status, 200, res.text);
        return res.body;
      };
      const expected = await rest({
        from: "2026-05-17",
        to: "2026-06-16",
        group_by: "link",
        limit: "10",
      });
      assert.equal(expected.groups.length, 4);

      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      page.on("console", (m) => {
        if (
          m.type() === "error" && !/^Failed to load resource: .* status of 400/.test(m.text())
        ) {
          pageErrors.push(m.text());
        }
      });
      page.on("dialog", (d) => {
        pageErrors.push(`a dialog opened: ${d.message()}`);
        void d.dismiss();
      });
      await page.goto(`${srv.url}/dashboard/sign-in`);
      await page.fill("#f-token", ADMIN_TOKEN);
      await page.click("#admin-token-sign-in button[type=submit]");
      await page.goto(`${srv.url}/dashboard/environments/${envId}/metrics`);
      await Promise.all([page.waitForNavigation(), page.click("text=Top links by revenue")]);
      assert.match(page.url(), new RegExp(`/dashboard/environments/${envId}/funnel$`));

      // The funnel's steps: the REST figures of the last 30 days.
      const number = (text: string | null) => Number((text ?? "").replace(/[^0-9-]/g, ""));
      const steps = (await page.locator(".funnel-steps .num").allTextContents()).map(number);
      const t = expected.totals;
      assert.deepEqual(steps, [t.views, t.installs, t.purchasers, t.purchases]);
      assert.equal(t.revenue, 25_897);
      assert.equal(await page.locator(".funnel-figures dd").first().textContent(), "$258.97");
      assert.match(
        await page.locator(".funnel-steps li").nth(1).textContent() ?? "",
        new RegExp(`${(Math.round(t.installs_per_view * 1000) / 10).toFixed(1)}% of views`),
      );
      // The links, by revenue, each with its own figures; the app's link has no page.
      const rows = await page.locator(".funnel-links tbody tr").evaluateAll((trs) =>
        trs.map((tr) => [...tr.children].map((c) => c.textContent?.trim() ?? ""))
      );
      assert.equal(rows.length, 4);
      const money = (minor: number) => `$${(minor / 100).toFixed(2)}`;
      expected.groups.forEach((g: Json, i: number) => {
        const row = rows[i]!;
        assert.ok(row[0]!.endsWith(`/${g.key}`), `${row[0]} is ${g.key}`);
        assert.deepEqual(
          [row[1], row[3], row[4], row[5], row[6]].map((c, k) => k === 0 ? c : number(c!)),
          [
            money(g.totals.revenue),
            g.totals.purchases,
            g.totals.purchasers,
            g.totals.installs,
            g
              .totals.views,
          ],
        );
      });
      assert.equal(rows[0]![0], "Spring poster/spring");
      // The markup is a title like any other, shown as text.
      assert.equal(rows[1]![0], `${MARKUP}/autumn`);
      assert.equal(await page.locator(".funnel-links img").count(), 0);
      assert.equal(
        await page.locator(".funnel-links tbody tr").nth(0).locator("a").getAttribute("href"),
        `/dashboard/environments/${envId}/links/spring`,
      );
      assert.equal(
        await page.locator(".funnel-links tbody tr").nth(2).locator("th a").count(),
        0,
        "the app's link has no dashboard page",
      );
      await checkPage(page, "funnel-01-top-links");

      // Another range and zone through the form; a shorter list.
      await page.fill("#fn-from", "2026-06-10");
      await page.fill("#fn-to", "2026-06-14");
      await page.selectOption("#fn-tz", "Europe/Berlin");
      await page.selectOption("#fn-limit", "25");
      await Promise.all([page.waitForNavigation(), page.click(".ac-form button[type=submit]")]);
      const narrow = await rest({
        from: "2026-06-10",
        to: "2026-06-15",
        tz: "Europe/Berlin",
        group_by: "link",
        limit: "25",
      });
      assert.deepEqual(
        (await page.locator(".funnel-steps .num").allTextContents()).map(number),
        [
          narrow.totals.views,
          narrow.totals.installs,
          narrow.totals.purchasers,
          narrow.totals
            .purchases,
        ],
      );

      // A range the service refuses: said beside the form, with a 400.
      const refused = await page.goto(
        `${srv.url}/dashboard/environments/${envId}/funnel?from=2026-06-10&to=2026-06-01`,
      );
      assert.equal(refused?.status(), 400);
      assert.match(
        await page.locator(".notice.error").textContent() ?? "",
        /To must not be before From/,
      );

      // An environment with nothing attributed: one empty state.
      await page.goto(`${srv.url}/dashboard/environments/${project.testId}/funnel`);
      assert.match(await page.locator(".empty-title").textContent() ?? "", /Nothing attributed/);
      await checkPage(page, "funnel-02-empty");
      assert.deepEqual(pageErrors, []);
    } finally {
      await browser.close();
      await srv.close();
    }
  },
});
