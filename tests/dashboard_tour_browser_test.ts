// The dashboard as its people meet it, in a real Chromium: a project served on its own link
// domain, links with views from phones and computers, events of every kind (installs, sessions,
// purchases, custom events), members in every role. Each page is checked (labels, no sideways
// overflow at 390 px, readable tables and timestamps) and shot at 390 and 1440 px, light and
// dark, into test-output/screenshots/tour-*. The README's pictures (docs/images/*.png) are
// written from here too when README_IMAGES=1:
//   README_IMAGES=1 deno test -A tests/dashboard_tour_browser_test.ts
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { renderSVG } from "uqr";
import { checkPage, launchBrowser, test } from "./helpers/browser.ts";
import { ManualClock } from "./helpers/clock.ts";
import { addPerson } from "./helpers/dashboard.ts";
import { callOnHost } from "./helpers/host.ts";
import { ingest } from "./helpers/sdk.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  call,
  createFeedToken,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

const NOW = "2026-06-15T12:00:00.000Z";
const DAY_MS = 86_400_000;
const LINK_DOMAIN = "go.acme.test";
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
const ANDROID =
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36";
const DESKTOP =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";
const README_IMAGES = Deno.env.get("README_IMAGES") === "1";

/** The tour's own page check: the shared one, under the tour's names. */
async function tour(page: Page, name: string): Promise<void> {
  await page.waitForLoadState("load");
  await checkPage(page, `tour-${name}`);
}

/**
 * One picture for the README and docs: the page as a viewport of this size shows it, from its
 * top or scrolled to `from`.
 */
async function readmeImage(
  page: Page,
  name: string,
  size: { width: number; height: number },
  scheme: "light" | "dark" = "light",
  from?: string,
): Promise<void> {
  if (!README_IMAGES) return;
  await page.setViewportSize(size);
  await page.emulateMedia({ colorScheme: scheme });
  if (from) await page.$eval(from, (el) => el.scrollIntoView({ block: "start" }));
  await page.screenshot({ path: `docs/images/${name}.png` });
  await page.evaluate(() => globalThis.scrollTo(0, 0));
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 1440, height: 900 });
}

/** WCAG's contrast ratio of two CSS colours (rgb()/rgba() as getComputedStyle gives them). */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = c.match(/[\d.]+/g)!.slice(0, 3).map(Number).map((v) => {
      const x = v / 255;
      return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** The text and background colours of every visible danger button on the page. */
function dangerColours(page: Page): Promise<{ text: string; color: string; bg: string }[]> {
  return page.$$eval(
    ".button.danger",
    (all) =>
      all.filter((el) => (el as HTMLElement).offsetParent !== null).map((el) => {
        const style = getComputedStyle(el);
        return { text: el.textContent ?? "", color: style.color, bg: style.backgroundColor };
      }),
  );
}

/**
 * Where each URL shown as code.url wraps: the character before every line break. A URL may
 * break only after a separator, never inside a word.
 */
function urlBreaks(page: Page): Promise<{ url: string; before: string[] }[]> {
  return page.$$eval(
    "code.url",
    (all) =>
      all.filter((el) => (el as HTMLElement).offsetParent !== null).map((el) => {
        const chars: { ch: string; top: number }[] = [];
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          for (let i = 0; i < node.textContent!.length; i++) {
            const range = document.createRange();
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            chars.push({ ch: node.textContent![i]!, top: range.getBoundingClientRect().top });
          }
        }
        const before: string[] = [];
        for (let i = 1; i < chars.length; i++) {
          if (chars[i]!.top > chars[i - 1]!.top + 2) before.push(chars[i - 1]!.ch);
        }
        return { url: el.textContent ?? "", before };
      }),
  );
}

/** How many lines each element matching `selector` takes (its height over its line height). */
function lineCounts(page: Page, selector: string): Promise<number[]> {
  return page.$$eval(
    selector,
    (all) =>
      all.filter((el) => (el as HTMLElement).offsetParent !== null).map((el) => {
        const style = getComputedStyle(el);
        const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.5;
        return Math.round(el.getBoundingClientRect().height / line);
      }),
  );
}

test({
  name: "dashboard tour in Chromium: a project on its link domain, every page, every role",
  async fn() {
    const clock = new ManualClock(NOW);
    const srv = await startTestServer({ clock });
    const browser = await launchBrowser();
    try {
      const project = await createProject(srv.url, { name: "Acme Mobile" });
      const envId = project.productionId;
      // A feed token starts the environment's capture: its events then reach the live page.
      await createFeedToken(srv.url, envId);
      const env = `${srv.url}/dashboard/environments/${envId}`;
      const domain = await call(srv.url, "PATCH", `/api/v1/admin/projects/${project.hashid}`, {
        headers: adminHeaders,
        // The project sells in euros: revenue is summed in them.
        body: { link_domain: LINK_DOMAIN, reporting_currency: "EUR" },
      });
      assert.equal(domain.status, 200, domain.text);

      // Links, made through the admin API as a team's script would.
      const makeLink = async (body: Record<string, unknown>) => {
        const res = await call(srv.url, "POST", `/api/v1/projects/${envId}/links`, {
          headers: adminHeaders,
          body,
        });
        assert.equal(res.status, 201, res.text);
        return res.body.link;
      };
      await makeLink({
        path: "newsletter-june",
        title: "Newsletter, June",
        desktop_url: "https://acme.example/news/june",
        tags: ["newsletter"],
        tracking_campaign: "newsletter",
      });
      await makeLink({
        path: "black-friday-early-access-2026",
        title: "Black Friday early access for members who signed up before October",
        desktop_url: "https://acme.example/offers/black-friday-early-access?utm_source=email",
        tags: ["sale", "members"],
      });
      const spring = await makeLink({
        path: "spring-sale",
        title: "Spring sale poster",
        subtitle: "Twenty percent off everything in the app",
        desktop_url: "https://acme.example/spring",
        ios_custom_redirect: { url: "https://apps.apple.com/app/acme/id1234567890" },
        tags: ["print", "spring"],
        tracking_campaign: "spring-sale",
        tracking_source: "poster",
        data: { promo: "spring", discount: 20 },
      });

      // Views from phones and computers over two weeks, on the project's link domain.
      for (let day = 13; day >= 0; day--) {
        clock.set(new Date(Date.parse(NOW) - day * DAY_MS - (day % 5) * 3_600_000));
        for (let i = 0; i <= day % 4; i++) {
          const ua = [IPHONE, ANDROID, DESKTOP][(day + i) % 3]!;
          const path = ["spring-sale", "spring-sale", "newsletter-june"][(day + i) % 3]!;
          const res = await callOnHost(srv.url, LINK_DOMAIN, `/${path}`, {
            headers: { "User-Agent": ua },
          });
          assert.ok(res.status === 200 || res.status === 302, `${res.status} ${res.text}`);
        }
        await srv.views.flush();
      }
      clock.set(NOW);
      const at = (daysAgo: number, hour = 10) =>
        new Date(Date.parse(NOW) - daysAgo * DAY_MS - hour * 60_000).toISOString();
      await ingest(srv.url, project.key, "production", [
        ...Array.from({ length: 7 }, (_, i) => ({
          type: "install",
          occurred_at: at(i * 2),
          link_path: "spring-sale",
          geo: { country: ["DE", "FR", "US"][i % 3] },
          device: { platform: i % 2 ? "android" : "ios", os: i % 2 ? "Android" : "iOS" },
        })),
        ...Array.from({ length: 5 }, (_, i) => ({
          type: "session",
          occurred_at: at(i),
          link_path: "spring-sale",
          time_spent: 95 + i * 61,
        })),
        {
          type: "purchase",
          name: "purchase",
          occurred_at: at(1),
          link_path: "spring-sale",
          purchase: {
            transaction_id: "t-1001",
            version: 1,
            amount: 1299,
            currency: "EUR",
            product_id: "pro_monthly",
            store: "app_store",
          },
        },
        { type: "custom", name: "signup", occurred_at: at(3), link_path: "spring-sale" },
        { type: "custom", name: "signup", occurred_at: at(2), link_path: "newsletter-june" },
      ]);

      // A browser in Berlin: a new link's expiry is read in the browser's own zone.
      const context = await browser.newContext({
        viewport: { width: 1440, height: 900 },
        timezoneId: "Europe/Berlin",
      });
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: srv.url });
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      page.on("console", (m) => {
        if (
          m.type() === "error" && !/^Failed to load resource: .* status of 4\d\d/.test(m.text())
        ) {
          pageErrors.push(m.text());
        }
      });
      await page.goto(`${srv.url}/dashboard/sign-in`);
      await page.fill("#f-token", ADMIN_TOKEN);
      await page.click("#admin-token-sign-in button[type=submit]");

      // Links: every URL shown or copied is the one on the project's domain, as the API's
      // access_path and the QR code give it.
      const listed = await call(srv.url, "GET", `/api/v1/projects/${envId}/links`, {
        headers: adminHeaders,
      });
      const accessPath = (listed.body.links as { path: string; access_path: string }[])
        .find((l) => l.path === "spring-sale")!.access_path;
      assert.equal(accessPath, `https://${LINK_DOMAIN}/spring-sale`);
      assert.equal(spring.access_path, accessPath);
      await page.goto(`${env}/links`);
      const shown = await page.locator(".list li:has-text('Spring sale poster') code.url")
        .textContent();
      assert.equal(shown, accessPath);
      // At 390 px a URL wraps, if at all, only after a separator; the tab bar scrolls, with a
      // shadow at the edge that has more tabs beyond it.
      await page.setViewportSize({ width: 390, height: 844 });
      for (const { url, before } of await urlBreaks(page)) {
        assert.ok(before.every((c) => "/.?&=#-_".includes(c)), `${url} breaks after ${before}`);
      }
      const tabs = await page.$eval("nav.tabs", (el) => ({
        scrolls: el.scrollWidth > el.clientWidth,
        hint: getComputedStyle(el).backgroundImage,
      }));
      assert.ok(tabs.scrolls, "the tabs are wider than a phone");
      assert.match(tabs.hint, /radial-gradient/, "the tab bar shows that it scrolls");
      await page.setViewportSize({ width: 1440, height: 900 });
      await tour(page, "01-links");

      await page.click("text=Spring sale poster");
      assert.equal(await page.inputValue("#link-url"), accessPath);
      await page.click("button[data-copy='link-url']");
      await page.waitForSelector("[data-copy-status='link-url']:has-text('Copied')");
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), accessPath);
      const qr = await page.evaluate(
        async (src) => await (await fetch(src)).text(),
        `${new URL(page.url()).pathname}/qr.svg`,
      );
      assert.equal(qr, renderSVG(accessPath, { border: 2 }));
      // Danger buttons (Delete is a link, Deactivate a button) keep 4.5:1 in both schemes.
      for (const scheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        const buttons = await dangerColours(page);
        assert.deepEqual(buttons.map((b) => b.text.trim()).sort(), ["Deactivate", "Delete"]);
        for (const b of buttons) {
          const ratio = contrast(b.color, b.bg);
          assert.ok(ratio >= 4.5, `${scheme}: ${b.text} is ${ratio.toFixed(2)}:1`);
        }
      }
      await page.emulateMedia({ colorScheme: "light" });
      await tour(page, "02-link");
      await page.reload();
      await readmeImage(page, "dashboard-link", { width: 1440, height: 900 });
      await readmeImage(page, "dashboard-link-phone-dark", { width: 390, height: 844 }, "dark");

      // The new-link form: the destination first, the rest in groups that open on demand; the
      // expiry is the platform's date and time picker with the zone it is read in.
      await page.goto(`${env}/links/new`);
      assert.equal(
        await page.getAttribute("form.link-form input:not([type=hidden])", "name"),
        "desktop_url",
      );
      assert.deepEqual(
        await page.$$eval(
          "details.form-section",
          (ds) => ds.map((d) => (d as HTMLDetailsElement).open),
        ),
        [false, false, false, false, false],
      );
      assert.equal(await page.getAttribute("#f-expires_at", "type"), "datetime-local");
      assert.equal(await page.inputValue("#f-expires_tz"), "Europe/Berlin", "the browser's zone");
      await tour(page, "03-link-new");
      await page.fill("#f-desktop_url", "https://acme.example/summer");
      await page.fill("#f-title", "Summer");
      await page.click("#link-expiry summary");
      await page.fill("#f-expires_at", "2026-07-01T09:00");
      await page.selectOption("#f-expires_tz", "America/New_York");
      await tour(page, "03-link-new-expiry");
      await page.click("button:has-text('Create link')");
      assert.match(await page.textContent(".notice") ?? "", /Link created/);
      const summerPath = new URL(page.url()).pathname.split("/").at(-1);
      const summer = (await call(srv.url, "GET", `/api/v1/projects/${envId}/links`, {
        headers: adminHeaders,
      })).body.links.find((l: { path: string }) => l.path === summerPath);
      // 9:00 in New York in July (daylight time, UTC-4) is 13:00 UTC.
      assert.equal(summer.expires_at, "2026-07-01T13:00:00.000Z");

      // Metrics with several metrics ticked, revenue in euros: every column shows at 1440 px,
      // the tables say that they scroll at 390 px, charts have whole-number scales.
      const metrics = ["views", "installs", "sessions", "time_spent", "purchases", "revenue"];
      const metricsUrl = (currency: string) =>
        `${env}/metrics?${new URLSearchParams([
          ...metrics.map((m) => ["metrics", m]),
          ["currency", currency],
        ])}`;
      await page.goto(metricsUrl(""));
      assert.equal(
        await page.textContent(".ac-figure.m-revenue figcaption"),
        "Revenue (minor units) 1,299",
      );
      await page.goto(metricsUrl("EUR"));
      assert.equal(
        await page.textContent(".ac-figure.m-revenue figcaption"),
        "Revenue (EUR) €12.99",
      );
      assert.equal(
        await page.textContent(".ac-figure.m-time_spent figcaption strong"),
        "18 min 05 s",
      );
      for (const m of ["views", "installs", "sessions", "purchases"]) {
        const ticks = await page.locator(`.ac-figure.m-${m} .y-axis span`).allTextContents();
        assert.ok(ticks.every((t) => /^[\d,]*$/.test(t)), `${m}: ticks ${ticks}`);
      }
      const fits = await page.$$eval(
        ".breakdown .table-scroll",
        (all) => all.map((el) => el.scrollWidth <= el.clientWidth + 1),
      );
      assert.ok(fits.length > 0 && fits.every(Boolean), "every breakdown column shows at 1440 px");
      assert.deepEqual(
        await page.locator("#bd-country ~ .table-scroll th[scope=col]").allTextContents(),
        ["Country", "Views", "Share", "Installs", "Sessions", "Time spent", "Purchases", "Revenue"],
      );
      assert.match(
        await page.textContent("#bd-country ~ .table-scroll tbody tr:first-child") ?? "",
        /18 min 05 s.*€12\.99/,
      );
      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForFunction(() =>
        [...document.querySelectorAll(".breakdown [data-scroll-note]")].some((n) =>
          !(n as HTMLElement).hidden
        )
      );
      await page.setViewportSize({ width: 1440, height: 900 });
      await tour(page, "04-metrics-several");
      await readmeImage(page, "dashboard-metrics", { width: 1440, height: 900 }, "light", ".range");

      // Live events say what happened: the custom event's name, the purchase's amount.
      await page.goto(`${env}/live`);
      await page.waitForSelector("[data-live-status]:has-text('Live')");
      await ingest(srv.url, project.key, "production", [
        { type: "install", occurred_at: at(0, 3), geo: { country: "DE" }, device: { os: "iOS" } },
        {
          type: "purchase",
          name: "purchase",
          occurred_at: at(0, 2),
          link_path: "spring-sale",
          purchase: {
            transaction_id: "t-2002",
            version: 1,
            amount: 1299,
            currency: "EUR",
            product_id: "pro_monthly",
            store: "app_store",
          },
        },
        { type: "custom", name: "added_to_cart", occurred_at: at(0, 1), link_path: "spring-sale" },
      ]);
      await page.waitForSelector("[data-live-rows] > :nth-child(3)");
      assert.deepEqual(await page.locator("[data-live-rows] .ev-what").allTextContents(), [
        "added_to_cart",
        "purchase €12.99",
      ]);
      assert.match(
        await page.textContent("[data-live-rows] > li:nth-child(3)") ?? "",
        /Install.*iOS · DE/,
      );
      await page.setViewportSize({ width: 390, height: 844 });
      // A time or an id takes one line on a phone.
      assert.ok((await lineCounts(page, "[data-live-rows] .when")).every((n) => n === 1));
      assert.ok((await lineCounts(page, "[data-live-rows] .mono")).every((n) => n === 1));
      await page.setViewportSize({ width: 1440, height: 900 });
      await tour(page, "05-live");

      // Members and accounts: removing asks first, on a page of its own (no script needed).
      await addPerson(srv.url, {
        email: "olivia@acme.example",
        name: "Olivia Owner",
        project: project.hashid,
        role: "owner",
      });
      const vic = await addPerson(srv.url, {
        email: "vic@acme.example",
        name: "Vic Viewer",
        project: project.hashid,
        role: "viewer",
      });
      await page.goto(`${srv.url}/dashboard/projects/${project.hashid}/members`);
      await tour(page, "06-members");
      await page.goto(`${srv.url}/dashboard/accounts`);
      await tour(page, "07-accounts");
      const cookies = await context.cookies();
      const noScript = await browser.newContext({ javaScriptEnabled: false });
      await noScript.addCookies(cookies);
      const plain = await noScript.newPage();
      await plain.goto(`${srv.url}/dashboard/accounts`);
      await plain.click(`a[href='/dashboard/accounts/${vic.accountId}/remove']`);
      assert.match(await plain.textContent("h1") ?? "", /Remove Vic Viewer\?/);
      const stillThere = await call(srv.url, "GET", "/api/v1/admin/accounts", {
        headers: adminHeaders,
      });
      assert.ok(stillThere.body.accounts.some((a: { id: number }) => a.id === vic.accountId));
      await tour(plain, "07-account-remove-confirm");
      await plain.click("button:has-text('Remove the account')");
      assert.match(await plain.textContent(".notice") ?? "", /account was removed/);
      const gone = await call(srv.url, "GET", "/api/v1/admin/accounts", { headers: adminHeaders });
      assert.ok(!gone.body.accounts.some((a: { id: number }) => a.id === vic.accountId));
      await noScript.close();

      await page.goto(`${srv.url}/dashboard/projects/${project.hashid}/audit`);
      await page.setViewportSize({ width: 390, height: 844 });
      assert.ok((await lineCounts(page, "td .when")).every((n) => n === 1), "audit times");
      await page.setViewportSize({ width: 1440, height: 900 });
      await tour(page, "08-audit");

      // GraphiQL: its default query runs as it opens, and on a phone the answer is readable.
      await page.goto(`${srv.url}/graphql`);
      await page.waitForSelector(".graphiql-execute-button");
      await page.setViewportSize({ width: 390, height: 844 });
      await page.click(".graphiql-execute-button");
      await page.waitForFunction(() =>
        /"data"/.test(document.querySelector(".graphiql-response")?.textContent ?? "")
      );
      // The editor wraps long lines on a phone and draws spaces as no-break spaces.
      const answer = (await page.locator(".graphiql-response").innerText())
        .replace(/[\s\u200b]+/g, " ");
      assert.doesNotMatch(answer, /"errors"/);
      assert.match(answer, /"name": "Acme Mobile"/);
      const width = await page.$eval(
        ".graphiql-response",
        (el) => el.getBoundingClientRect().width,
      );
      assert.ok(width >= 280, `the response is ${width} px wide at 390 px`);
      // The editors lay themselves out again a moment after the window changes size.
      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForFunction(() =>
        document.documentElement.scrollWidth <= document.documentElement.clientWidth
      );
      await tour(page, "09-graphiql");

      assert.deepEqual(pageErrors, [], "no script or CSP errors in the console");
    } finally {
      await browser.close();
      await srv.close();
    }
  },
});
