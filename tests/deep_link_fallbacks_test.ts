// The link host's answer per platform × open_app_if_installed × preview × custom redirect × app
// configured (CONTRACT.md, "Link domains and app association"), with every expected Location or
// fallback written out.
import assert from "node:assert/strict";
import { generateLink, linkMetrics } from "./helpers/sdk.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

const UA = {
  ios:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
  android:
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36",
  desktop:
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
};
type Platform = keyof typeof UA;

const FINGERPRINT = Array.from({ length: 32 }, () => "5E").join(":");
const withApps = await createProject(srv.url, { name: "With apps" });
const patched = await call(srv.url, "PATCH", `/api/v1/admin/projects/${withApps.hashid}`, {
  headers: adminHeaders,
  body: {
    apps: {
      ios: {
        team_id: "ABCDE12345",
        bundle_id: "com.acme.app",
        app_store_id: "123456789",
        scheme: "acme",
      },
      android: { package: "com.acme.app", sha256_cert_fingerprints: [FINGERPRINT], scheme: "acme" },
    },
  },
});
assert.equal(patched.status, 200, patched.text);
const withoutApps = await createProject(srv.url, { name: "Without apps" });

// Values that need encoding: the referrer must survive two levels of it.
const TRACKING = {
  tracking_campaign: "spring sale&more",
  tracking_source: "news/letter",
  tracking_medium: "e-mail=yes",
};
const R = {
  ios: "https://example.com/ios?x=1&y=2",
  android: "https://example.com/android",
  desktop: "https://example.com/desktop",
};

/** What a row expects, in the notation of the table below; `$p` is the link's path. */
type Expected =
  | `302 ${string}`
  | `page ${string}`
  | `open ${string} ${"auto" | "tap"}`;

const STORE = "https://apps.apple.com/app/id123456789";
// `$c`: the view's click id (tests/link_host_click_ids_test.ts reads it back).
const PLAY = "https://play.google.com/store/apps/details?id=com.acme.app&referrer=" +
  "link_path%3D$p%26click_id%3D$c%26utm_campaign%3Dspring%2Bsale%2526more%26utm_source%3Dnews%252Fletter" +
  "%26utm_medium%3De-mail%253Dyes";
const INTENT_R = "intent://$p#Intent;scheme=acme;package=com.acme.app;" +
  "S.browser_fallback_url=https%3A%2F%2Fexample.com%2Fandroid;end";
const INTENT_PLAY = "intent://$p#Intent;scheme=acme;package=com.acme.app;" +
  "S.browser_fallback_url=https%3A%2F%2Fplay.google.com%2Fstore%2Fapps%2Fdetails%3Fid%3Dcom.acme.app" +
  "%26referrer%3Dlink_path%253D$p%2526click_id%253D$c%2526utm_campaign%253Dspring%252Bsale%252526more" +
  "%2526utm_source%253Dnews%25252Fletter%2526utm_medium%253De-mail%25253Dyes;end";

// platform, open_app_if_installed, show_preview, custom redirect, app configured → answer
const TABLE: [Platform, boolean, boolean, boolean, boolean, Expected][] = [
  ["ios", false, false, false, false, "page -"],
  ["ios", false, false, false, true, `302 ${STORE}`],
  ["ios", false, false, true, false, `302 ${R.ios}`],
  ["ios", false, false, true, true, `302 ${R.ios}`],
  ["ios", false, true, false, false, "page -"],
  ["ios", false, true, false, true, `page ${STORE}`],
  ["ios", false, true, true, false, `page ${R.ios}`],
  ["ios", false, true, true, true, `page ${R.ios}`],
  ["ios", true, false, false, false, "page -"],
  ["ios", true, false, false, true, `open ${STORE} auto`],
  ["ios", true, false, true, false, `302 ${R.ios}`],
  ["ios", true, false, true, true, `open ${R.ios} auto`],
  ["ios", true, true, false, false, "page -"],
  ["ios", true, true, false, true, `open ${STORE} tap`],
  ["ios", true, true, true, false, `page ${R.ios}`],
  ["ios", true, true, true, true, `open ${R.ios} tap`],
  ["android", false, false, false, false, "page -"],
  ["android", false, false, false, true, `302 ${PLAY}`],
  ["android", false, false, true, false, `302 ${R.android}`],
  ["android", false, false, true, true, `302 ${R.android}`],
  ["android", false, true, false, false, "page -"],
  ["android", false, true, false, true, `page ${PLAY}`],
  ["android", false, true, true, false, `page ${R.android}`],
  ["android", false, true, true, true, `page ${R.android}`],
  ["android", true, false, false, false, "page -"],
  ["android", true, false, false, true, `302 ${INTENT_PLAY}`],
  ["android", true, false, true, false, `302 ${R.android}`],
  ["android", true, false, true, true, `302 ${INTENT_R}`],
  ["android", true, true, false, false, "page -"],
  ["android", true, true, false, true, `page ${INTENT_PLAY}`],
  ["android", true, true, true, false, `page ${R.android}`],
  ["android", true, true, true, true, `page ${INTENT_R}`],
  // The desktop has neither flag: only its redirect matters.
  ...[false, true].flatMap((open) =>
    [false, true].flatMap((preview) =>
      [false, true].flatMap((app): [Platform, boolean, boolean, boolean, boolean, Expected][] => [
        ["desktop", open, preview, false, app, "page -"],
        ["desktop", open, preview, true, app, `302 ${R.desktop}`],
      ])
    )
  ),
];

function unescape(value: string): string {
  return value.replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">").replaceAll("&amp;", "&");
}

function attribute(html: string, pattern: RegExp): string | null {
  const m = html.match(pattern);
  return m ? unescape(m[1]!) : null;
}

/** The answer in the table's notation (any click id in it as `$c`). */
function describe(res: { status: number; headers: Headers; text: string }, path: string): string {
  return describeWithIds(res, path).replace(/(click_id%(?:25)?3D)[A-Za-z0-9_-]{42}/g, "$1$c");
}

function describeWithIds(
  res: { status: number; headers: Headers; text: string },
  path: string,
): string {
  if (res.status === 302) return `302 ${res.headers.get("location")}`;
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
  const app = attribute(res.text, /<main id="open-app" data-app-url="([^"]*)"/);
  if (app !== null) {
    const fallback = attribute(res.text, /data-fallback-url="([^"]*)"/);
    const auto = attribute(res.text, /data-auto="([^"]*)"/);
    assert.equal(app, `acme://${path}`);
    return `open ${fallback} ${auto === "true" ? "auto" : "tap"}`;
  }
  return `page ${attribute(res.text, /<a class="button" href="([^"]*)"/) ?? "-"}`;
}

Deno.test("link host: status and Location (or the page's fallback) per platform × open_app_if_installed × preview × redirect × app", async () => {
  let hits = 0;
  const failures: string[] = [];
  for (const [platform, open, preview, redirect, app, expected] of TABLE) {
    const project = app ? withApps : withoutApps;
    const path = await generateLink(srv.url, project.key, "production", {
      title: `${platform} ${open} ${preview} ${redirect} ${app}`,
      ...TRACKING,
      show_preview_ios: preview,
      show_preview_android: preview,
      ios_custom_redirect: { ...(redirect ? { url: R.ios } : {}), open_app_if_installed: open },
      android_custom_redirect: {
        ...(redirect ? { url: R.android } : {}),
        open_app_if_installed: open,
      },
      desktop_custom_redirect: redirect ? { url: R.desktop } : {},
    });
    const res = await fetch(`${srv.url}/${path}`, {
      headers: { "User-Agent": UA[platform] },
      redirect: "manual",
    });
    const answer = describe(
      { status: res.status, headers: res.headers, text: await res.text() },
      path,
    );
    hits++;
    const want = expected.replaceAll("$p", path);
    if (answer !== want) {
      failures.push(`${platform} open=${open} preview=${preview} redirect=${redirect} app=${app}:
  got  ${answer}
  want ${want}`);
    }
    // Every human hit is one view, whatever the answer.
    await srv.views.flush();
    const views = (await linkMetrics(srv.url, project.key, path, "production")).total_views;
    assert.equal(views, 1, `${platform} ${path}`);
  }
  assert.deepEqual(failures, []);
  assert.equal(hits, 48);
});

Deno.test("link host: the iOS open-app page escapes every value, runs no inline script, and crawlers still get the Open Graph page", async () => {
  const title = `"><script>alert(1)</script>`;
  const path = await generateLink(srv.url, withApps.key, "production", {
    title,
    subtitle: "<b>bold</b> & 'quoted'",
    ios_custom_redirect: { url: 'https://example.com/a?b=<c>&d="e"', open_app_if_installed: true },
  });
  const res = await fetch(`${srv.url}/${path}`, { headers: { "User-Agent": UA.ios } });
  const html = await res.text();
  assert.equal(res.status, 200);
  const csp = res.headers.get("content-security-policy")!;
  assert.match(csp, /(^|; )script-src 'self'(;|$)/);
  assert.match(csp, /(^|; )default-src 'none'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline'[^;]*script|script-src[^;]*unsafe/);
  // The only script element is the file; no inline handler attribute either.
  assert.deepEqual(html.match(/<script[^>]*>/g), [`<script src="/open-app.js" defer>`]);
  assert.doesNotMatch(html, /<script[^>]*>[^<]/);
  assert.doesNotMatch(html, /\son[a-z]+=/i);
  assert.ok(!html.includes(title));
  assert.ok(html.includes("&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
  assert.ok(html.includes("&lt;b&gt;bold&lt;/b&gt; &amp; &#39;quoted&#39;"));
  assert.equal(
    attribute(html, /data-fallback-url="([^"]*)"/),
    "https://example.com/a?b=%3Cc%3E&d=%22e%22",
  );
  // The App Store button carries the link's own URL with the view's click id, for the app to
  // find after installing.
  assert.match(
    attribute(html, /data-copy="([^"]*)"/)!,
    new RegExp(`^https://lnk\\.example\\.test/${path}\\?click_id=[A-Za-z0-9_-]{42}$`),
  );

  const crawler = await fetch(`${srv.url}/${path}`, {
    headers: { "User-Agent": "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)" },
  });
  const card = await crawler.text();
  assert.equal(crawler.status, 200);
  assert.match(card, /<meta property="og:title" content="&quot;&gt;&lt;script&gt;/);
  assert.doesNotMatch(card, /open-app/);
  const head = await fetch(`${srv.url}/${path}`, {
    method: "HEAD",
    headers: { "User-Agent": UA.ios },
  });
  await head.body?.cancel();
  assert.equal(head.status, 200);
  await srv.views.flush();
  // One view: the iPhone's GET. The crawler and the HEAD are not counted.
  assert.equal((await linkMetrics(srv.url, withApps.key, path, "production")).total_views, 1);
});
