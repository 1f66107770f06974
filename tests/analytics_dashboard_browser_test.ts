// The analytics panel of the dashboard in a real Chromium: the environment's metrics page and a
// link's page show a chart per chosen metric over the chosen range, interval and zone, the same
// figures as a table, breakdowns with shares whose rows filter when clicked, and a CSV of what
// is shown; every figure equals the REST route's for the same query. Readable without
// JavaScript; values with markup stay text. Shot at 390 and 1440 px, light and dark, into
// test-output/screenshots.
import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import type { Locator, Page } from "playwright-core";
import { hasHorizontalOverflow, launchBrowser, screenshot, test } from "./helpers/browser.ts";
import { ManualClock } from "./helpers/clock.ts";
import { writeCountryDatabase } from "./helpers/mmdb.ts";
import { ingest, type Json } from "./helpers/sdk.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  call,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

const NOW = "2026-06-15T12:00:00.000Z";
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
const ANDROID =
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36";
const FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:126.0) Gecko/20100101 Firefox/126.0";
/** A campaign name with markup, and one a spreadsheet would run as a formula. */
const MARKUP_CAMPAIGN = `<img src=x onerror="alert(1)">`;
const FORMULA_CAMPAIGN = '=HYPERLINK("http://evil.example")';

async function checkPage(page: Page, name: string): Promise<void> {
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
  await screenshot(page, `analytics-${name}-390`);
  await page.emulateMedia({ colorScheme: "dark" });
  await screenshot(page, `analytics-${name}-390-dark`);
  await page.setViewportSize({ width: 1440, height: 900 });
  await screenshot(page, `analytics-${name}-1440-dark`);
  await page.emulateMedia({ colorScheme: "light" });
  await screenshot(page, `analytics-${name}-1440`);
}

/** A mouse click in the middle of `target`, whatever is drawn on top (a row's link is). */
async function clickAt(page: Page, target: Locator): Promise<void> {
  await target.scrollIntoViewIfNeeded();
  const box = await target.boundingBox();
  assert.ok(box, "the cell is on the page");
  await Promise.all([
    page.waitForNavigation(),
    page.mouse.click(box.x + box.width / 2, box.y + box.height / 2),
  ]);
}

test({
  name: "analytics panel in Chromium: charts, table, zone, breakdowns that filter, CSV",
  async fn() {
    const geoip = await writeCountryDatabase({
      "203.0.113.0/24": "DE",
      "198.51.100.0/24": "FR",
      "192.0.2.0/24": "JP",
    });
    const clock = new ManualClock(NOW);
    const srv = await startTestServer({
      clock,
      config: { GEOIP_DATABASE: geoip, TRUST_PROXY: "true" },
    });
    const browser = await launchBrowser();
    try {
      const project = await createProject(srv.url, { name: "Acme Analytics" });
      const envId = project.productionId;
      const makeLink = async (path: string, title: string, campaign: string) => {
        const res = await call(srv.url, "POST", `/api/v1/projects/${envId}/links`, {
          headers: adminHeaders,
          body: { path, title, tracking_campaign: campaign },
        });
        assert.equal(res.status, 201, res.text);
      };
      await makeLink("spring", "Spring poster", "spring-sale");
      await makeLink("autumn", "Autumn mailing", MARKUP_CAMPAIGN);
      await makeLink("formula", "Formula", FORMULA_CAMPAIGN);

      // Views over the last two weeks, from three countries and three kinds of device.
      const visitors: [string, string, string | null][] = [
        [IPHONE, "203.0.113.5", "https://news.example.org/a"],
        [IPHONE, "203.0.113.6", null],
        [ANDROID, "198.51.100.7", "https://social.example.com/p/1"],
        [FIREFOX, "192.0.2.8", "https://news.example.org/b"],
      ];
      for (let day = 13; day >= 0; day--) {
        clock.set(new Date(Date.parse(NOW) - day * 86_400_000 - (day % 5) * 3_600_000));
        for (let i = 0; i <= day % 4; i++) {
          const [ua, address, referer] = visitors[(day + i) % visitors.length]!;
          const path = ["spring", "spring", "autumn", "formula"][(day * 3 + i) % 4]!;
          const headers: Record<string, string> = { "User-Agent": ua, "X-Forwarded-For": address };
          if (referer) headers.Referer = referer;
          const res = await call(srv.url, "GET", `/${path}`, { headers });
          assert.equal(res.status, 200, res.text);
        }
        await srv.views.flush();
      }
      clock.set(NOW);
      await ingest(srv.url, project.key, "production", [
        ...Array.from({ length: 9 }, (_, i) => ({
          type: "install",
          occurred_at: new Date(Date.parse(NOW) - i * 2 * 86_400_000).toISOString(),
          link_path: i % 3 === 0 ? "autumn" : "spring",
          geo: { country: ["DE", "FR", "US"][i % 3] },
          device: { platform: i % 2 ? "android" : "ios", os: i % 2 ? "Android" : "iOS" },
        })),
        // Outside the default range: not shown until the range reaches it.
        { type: "install", occurred_at: "2026-03-01T10:00:00Z", geo: { country: "BR" } },
      ]);

      /** The REST route's answer for the same query: what the page must show. */
      const rest = async (params: Record<string, string>) => {
        const res = await call(
          srv.url,
          "GET",
          `/api/v1/projects/${envId}/analytics?${new URLSearchParams(params)}`,
          { headers: adminHeaders },
        );
        assert.equal(res.status, 200, res.text);
        return res.body;
      };
      const number = (text: string | null) => Number((text ?? "").replace(/[^0-9-]/g, ""));

      const context = await browser.newContext({
        viewport: { width: 1440, height: 900 },
        acceptDownloads: true,
      });
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
      const metricsUrl = `${srv.url}/dashboard/environments/${envId}/metrics`;

      // The default: the last 30 days (today included) by day in UTC, views and installs.
      await page.goto(metricsUrl);
      const expected = await rest({
        from: "2026-05-17",
        to: "2026-06-16",
        interval: "day",
        metrics: "views,installs",
      });
      assert.equal(expected.series.length, 30);
      assert.deepEqual(
        await page.locator(".ac-figure figcaption span").allTextContents(),
        ["Views", "Installs"],
      );
      const shownTotals = (await page.locator(".ac-figure figcaption strong").allTextContents())
        .map(number);
      assert.deepEqual(shownTotals, [expected.totals.views, expected.totals.installs]);
      assert.ok(expected.totals.views > 20 && expected.totals.installs === 9);
      // Each chart is an image with a title and a description, and one bar per day.
      const views = page.locator(".ac-figure.m-views svg");
      assert.equal(await views.getAttribute("role"), "img");
      assert.match(
        await views.locator("title").first().textContent() ?? "",
        /^Views per day, 2026-05-17 to 2026-06-15 \(UTC\)$/,
      );
      assert.match(
        await views.locator("desc").textContent() ?? "",
        new RegExp(`^Total ${expected.totals.views}\\. Highest \\d+, 2026-\\d\\d-\\d\\d\\.`),
      );
      assert.equal(await views.locator("rect.ac-bar").count(), 30);
      // The table says the same, day by day.
      const rows = await page.locator(".ac-table tbody tr").evaluateAll((trs) =>
        trs.map((tr) => [...tr.children].map((c) => c.textContent))
      );
      assert.deepEqual(
        rows,
        expected.series.map((
          p: Json,
        ) => [p.start.slice(0, 10), String(p.views), String(p.installs)]),
      );
      // Breakdowns: countries with their shares of the views.
      const countries = await rest({
        from: "2026-05-17",
        to: "2026-06-16",
        metrics: "views,installs",
        group_by: "country",
      });
      const countryRows = await page.locator("#bd-country ~ .table-scroll tbody tr").evaluateAll(
        (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent?.trim())),
      );
      assert.deepEqual(
        countryRows,
        countries.groups.map((g: Json) => [
          g.key === null ? "Unknown" : `${g.key} · ${
            new Intl.DisplayNames(["en"], {
              type: "region",
            }).of(g.key)
          }`,
          String(g.totals.views),
          `${(Math.round((g.totals.views / countries.totals.views) * 1000) / 10).toFixed(1)}%`,
          String(g.totals.installs),
        ]),
      );
      assert.deepEqual(
        await page.locator(".breakdown h2").allTextContents(),
        ["Countries", "Platforms", "Operating systems", "Browsers", "Referrers", "Campaigns"],
      );
      // A campaign with markup is text, not an element.
      const campaigns = await page.locator("#bd-campaign ~ .table-scroll tbody th")
        .allTextContents();
      assert.ok(campaigns.includes(MARKUP_CAMPAIGN), campaigns.join(" | "));
      assert.equal(await page.locator(".breakdown img").count(), 0);
      await checkPage(page, "01-metrics");

      // Clicking a row (anywhere in it: here its share) filters by its value.
      const de = page.locator("#bd-country ~ .table-scroll tbody tr", { hasText: "DE ·" });
      await clickAt(page, de.locator("td.share"));
      const filtered = new URL(page.url());
      assert.equal(filtered.searchParams.get("filter[country]"), "DE");
      const onlyDe = await rest({
        from: "2026-05-17",
        to: "2026-06-16",
        interval: "day",
        metrics: "views,installs",
        "filter[country]": "DE",
      });
      assert.deepEqual(
        (await page.locator(".ac-figure figcaption strong").allTextContents()).map(number),
        [onlyDe.totals.views, onlyDe.totals.installs],
      );
      assert.ok(onlyDe.totals.views < expected.totals.views);
      assert.match(await page.textContent(".filters") ?? "", /Country: DE · Germany/);
      // Another breakdown's row adds its filter to the first.
      await page.locator("#bd-platform ~ .table-scroll tbody tr", { hasText: "ios" }).locator(
        "a",
      ).click();
      assert.deepEqual(
        [...new URL(page.url()).searchParams].filter(([k]) => k.startsWith("filter[")),
        [["filter[country]", "DE"], ["filter[platform]", "ios"]],
      );
      await checkPage(page, "02-metrics-filtered");
      await page.click(".filters a[aria-label^='Remove the filter Country']");
      assert.deepEqual(
        [...new URL(page.url()).searchParams].filter(([k]) => k.startsWith("filter[")),
        [["filter[platform]", "ios"]],
      );
      await page.goto(metricsUrl);

      // Another zone, hourly, over two days, with revenue added: the form keeps the choices.
      await page.fill("#ac-from", "2026-06-14");
      await page.fill("#ac-to", "2026-06-15");
      await page.selectOption("#ac-interval", "hour");
      await page.selectOption("#ac-tz", "America/New_York");
      await page.check("#ac-m-views");
      await page.check("#ac-m-installs");
      await page.check("#ac-m-revenue");
      await page.click(".ac-form button[type=submit]");
      const hourly = await rest({
        from: "2026-06-14",
        to: "2026-06-16",
        interval: "hour",
        tz: "America/New_York",
        metrics: "views,installs,revenue",
      });
      assert.equal(hourly.series.length, 48);
      assert.equal(hourly.series[0].start, "2026-06-14T00:00:00-04:00");
      assert.equal(await page.locator(".ac-figure").count(), 3);
      assert.equal(await page.inputValue("#ac-tz"), "America/New_York");
      assert.equal(await page.locator(".ac-table tbody tr").count(), 48);
      assert.equal(
        await page.locator(".ac-table tbody tr th").first().textContent(),
        "2026-06-14 00:00",
      );
      assert.match(await page.textContent(".ac-table thead th") ?? "", /America\/New_York/);
      assert.deepEqual(
        (await page.locator(".ac-figure figcaption strong").allTextContents()).map(number),
        [hourly.totals.views, hourly.totals.installs, 0],
      );
      await checkPage(page, "03-metrics-hourly-new-york");

      // The CSV holds what is shown: each hour, the total and every breakdown's rows.
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        page.click("text=Download CSV"),
      ]);
      assert.match(download.suggestedFilename(), /^analytics-\d+-2026-06-14-to-2026-06-15\.csv$/);
      const csv: string[][] = parse(await Deno.readTextFile((await download.path())!));
      assert.deepEqual(csv[0], ["table", "key", "start", "views", "installs", "revenue", "share"]);
      const series = csv.filter((r) => r[0] === "series");
      assert.deepEqual(
        series.map((r) => [r[2], Number(r[3]), Number(r[4]), Number(r[5])]),
        hourly.series.map((p: Json) => [p.start, p.views, p.installs, p.revenue]),
      );
      const total = csv.find((r) => r[0] === "total")!;
      assert.deepEqual(total.slice(3, 6).map(Number), [
        hourly.totals.views,
        hourly.totals.installs,
        hourly.totals.revenue,
      ]);
      const csvCountries = csv.filter((r) => r[0] === "country").map((r) => r[1]);
      assert.ok(csvCountries.length > 0);
      assert.deepEqual(
        csvCountries,
        await page.locator("#bd-country ~ .table-scroll tbody th").evaluateAll((ths) =>
          ths.map((th) => (th.textContent ?? "").split(" · ")[0]!.replace("Unknown", ""))
        ),
      );

      // A range long enough for the March install, and the campaigns' CSV cells.
      await page.goto(
        `${metricsUrl}?from=2026-02-01&to=2026-06-15&interval=week&tz=UTC&metrics=installs&metrics=views`,
      );
      assert.equal(
        number(await page.textContent(".ac-figure.m-installs figcaption strong")),
        10,
      );
      const [longDownload] = await Promise.all([
        page.waitForEvent("download"),
        page.click("text=Download CSV"),
      ]);
      const longCsv: string[][] = parse(await Deno.readTextFile((await longDownload.path())!));
      const campaignCells = longCsv.filter((r) => r[0] === "campaign").map((r) => r[1]);
      assert.ok(campaignCells.includes(MARKUP_CAMPAIGN), campaignCells.join(" | "));
      assert.ok(campaignCells.includes(`'${FORMULA_CAMPAIGN}`), "a formula is quoted as text");

      // A bad value: the form again, saying what is wrong, and a 400.
      const refused = await page.goto(`${metricsUrl}?from=2026-06-10&to=2026-06-01`);
      assert.equal(refused?.status(), 400);
      assert.equal(await page.textContent(".notice.error"), "To must not be before From.");
      assert.equal(await page.inputValue("#ac-from"), "2026-06-10");
      assert.equal(await page.locator(".ac-figure").count(), 0);
      const tooLong = await page.goto(`${metricsUrl}?from=2025-01-01&to=2026-06-01`);
      assert.equal(tooLong?.status(), 400);
      assert.match(await page.textContent(".notice.error") ?? "", /^To: must be at most 400 days/);
      await checkPage(page, "04-metrics-refused");

      // A link's page: the same panel over that link's events only.
      await page.goto(`${srv.url}/dashboard/environments/${envId}/links/spring`);
      const spring = await rest({
        from: "2026-05-17",
        to: "2026-06-16",
        interval: "day",
        metrics: "views,installs",
        link: "spring",
      });
      assert.deepEqual(
        (await page.locator(".ac-figure figcaption strong").allTextContents()).map(number),
        [spring.totals.views, spring.totals.installs],
      );
      assert.ok(spring.totals.views > 0 && spring.totals.views < expected.totals.views);
      assert.deepEqual(
        await page.locator("#bd-campaign ~ .table-scroll tbody th").allTextContents(),
        ["spring-sale"],
      );
      await clickAt(
        page,
        page.locator("#bd-browser ~ .table-scroll tbody tr", { hasText: "Mobile Safari" })
          .locator("td.num").first(),
      );
      assert.equal(new URL(page.url()).pathname, `/dashboard/environments/${envId}/links/spring`);
      assert.equal(new URL(page.url()).searchParams.get("filter[browser]"), "Mobile Safari");
      await checkPage(page, "05-link");
      const [linkDownload] = await Promise.all([
        page.waitForEvent("download"),
        page.click("text=Download CSV"),
      ]);
      assert.match(linkDownload.suggestedFilename(), /^analytics-\d+-spring-/);

      // The test environment has no events: the panel says so.
      await page.goto(`${srv.url}/dashboard/environments/${project.testId}/metrics`);
      assert.match(await page.textContent(".empty") ?? "", /No events in this range/);
      await checkPage(page, "06-metrics-empty");
      assert.deepEqual(pageErrors, [], "no script or CSP errors in the console");

      // Without JavaScript the charts, the table and the filters are all there.
      const noScript = await browser.newContext({ javaScriptEnabled: false });
      const bare = await noScript.newPage();
      await bare.goto(`${srv.url}/dashboard/sign-in`);
      await bare.fill("#f-token", ADMIN_TOKEN);
      await bare.click("#admin-token-sign-in button[type=submit]");
      await bare.goto(metricsUrl);
      assert.equal(await bare.locator(".ac-figure svg rect.ac-bar").count(), 60);
      await bare.locator("#bd-country ~ .table-scroll tbody tr a").first().click();
      assert.ok(new URL(bare.url()).searchParams.has("filter[country]"));
      await bare.selectOption("#ac-tz", "Europe/Berlin");
      await bare.click(".ac-form button[type=submit]");
      assert.equal(new URL(bare.url()).searchParams.get("tz"), "Europe/Berlin");
      assert.ok(new URL(bare.url()).searchParams.has("filter[country]"), "filters are kept");
      await noScript.close();
    } finally {
      await browser.close();
      await srv.close();
      await Deno.remove(geoip);
    }
  },
});
