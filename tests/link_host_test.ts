import { assertError } from "./helpers/server.ts";
import assert from "node:assert/strict";
import { createLink } from "../services/links/links.ts";
import { ManualClock } from "./helpers/clock.ts";
import { deactivateLink, generateLink, generateLinkCall, linkMetrics } from "./helpers/sdk.ts";
import {
  call,
  createFeedToken,
  createProject,
  LINK_BASE_URL,
  startTestServer,
} from "./helpers/server.ts";

const NOW = "2026-03-01T12:00:00.000Z";
const srv = await startTestServer({ clock: new ManualClock(NOW) });
Deno.test.afterAll(() => srv.close());

const project = await createProject(srv.url);

const UA = {
  iphone:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
  ipad:
    "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1",
  android:
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36",
  desktop:
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
};

const CRAWLERS = [
  "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
  "Twitterbot/1.0",
  "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
  "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
  "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
  "WhatsApp/2.23.20.0 A",
  "TelegramBot (like TwitterBot)",
];

const REDIRECTS = {
  ios_custom_redirect: { url: "https://apps.apple.com/app/id123", open_app_if_installed: true },
  android_custom_redirect: { url: "https://play.google.com/store/apps/details?id=com.x" },
  desktop_custom_redirect: { url: "https://example.com/desktop" },
};

function hit(path: string, userAgent: string, method = "GET") {
  return call(srv.url, method, `/${path}`, { headers: { "User-Agent": userAgent } });
}

async function views(path: string, env: "production" | "test" = "production") {
  await srv.views.flush();
  return (await linkMetrics(srv.url, project.key, path, env)).total_views;
}

function assertHtml(res: { status: number; headers: Headers }, status: number) {
  assert.equal(res.status, status);
  assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
  assert.equal(res.headers.get("cache-control"), "no-store");
}

Deno.test("GET /:path redirects iPhone, iPad, Android and desktop to their own custom redirect", async () => {
  const path = await generateLink(srv.url, project.key, "production", { title: "R", ...REDIRECTS });
  const cases: [string, string][] = [
    [UA.iphone, REDIRECTS.ios_custom_redirect.url],
    [UA.ipad, REDIRECTS.ios_custom_redirect.url],
    [UA.android, REDIRECTS.android_custom_redirect.url],
    [UA.desktop, REDIRECTS.desktop_custom_redirect.url],
    ["", REDIRECTS.desktop_custom_redirect.url],
  ];
  for (const [ua, location] of cases) {
    const res = await hit(path, ua);
    assert.equal(res.status, 302, ua);
    assert.equal(res.headers.get("location"), location);
    assert.equal(res.headers.get("cache-control"), "no-store");
  }
  assert.equal(await views(path), cases.length);
});

Deno.test("the hot paths' plain answers carry X-Request-Id too: the client's own when plain, else a new one", async () => {
  const path = await generateLink(srv.url, project.key, "production", { title: "R", ...REDIRECTS });
  const sdk = { "PROJECT-KEY": project.key, ENVIRONMENT: "production" };
  const answers = [
    await hit(path, UA.iphone),
    await hit(path, UA.iphone, "HEAD"),
    await hit("no-such-link", UA.iphone),
    await call(srv.url, "GET", `/api/v1/sdk/link/${path}`, { headers: sdk }),
    await call(srv.url, "GET", "/api/v1/sdk/link/no-such-link", { headers: sdk }),
  ];
  assert.deepEqual(answers.map((r) => r.status), [302, 302, 404, 200, 404]);
  const ids = answers.map((r) => r.headers.get("x-request-id"));
  for (const id of ids) assert.match(id ?? "", /^[0-9a-f]{8}-[0-9a-z]+$/);
  assert.equal(new Set(ids).size, ids.length);
  const own = await call(srv.url, "GET", `/${path}`, {
    headers: { "User-Agent": UA.desktop, "X-Request-Id": "client-id=1" },
  });
  assert.equal(own.headers.get("x-request-id"), "client-id=1");
  const odd = await call(srv.url, "GET", `/api/v1/sdk/link/${path}`, {
    headers: { ...sdk, "X-Request-Id": "not plain!" },
  });
  assert.match(odd.headers.get("x-request-id") ?? "", /^[0-9a-f]{8}-[0-9a-z]+$/);
  await views(path);
});

Deno.test("GET /:path shows the preview page on a platform that asks for it, linking to its destination", async () => {
  const path = await generateLink(srv.url, project.key, "production", {
    title: "Preview me",
    subtitle: "A subtitle",
    image: "https://cdn.example.com/p.png",
    show_preview_ios: true,
    ...REDIRECTS,
  });
  const ios = await hit(path, UA.iphone);
  assertHtml(ios, 200);
  assert.match(ios.text, /<h1>Preview me<\/h1>/);
  assert.match(ios.text, /<p>A subtitle<\/p>/);
  assert.match(ios.text, /<img src="https:\/\/cdn\.example\.com\/p\.png"/);
  assert.match(ios.text, /<a class="button" href="https:\/\/apps\.apple\.com\/app\/id123"/);
  assert.match(ios.text, /<meta name="viewport"/);
  assert.ok(!/<script|<link |src="\/\//.test(ios.text), "no scripts or external assets");
  // Android asked for no preview: redirected.
  const android = await hit(path, UA.android);
  assert.equal(android.status, 302);
  const onlyAndroid = await generateLink(srv.url, project.key, "production", {
    show_preview_android: true,
    ...REDIRECTS,
  });
  const page = await hit(onlyAndroid, UA.android);
  assertHtml(page, 200);
  assert.match(page.text, /href="https:\/\/play\.google\.com\/store\/apps\/details\?id=com\.x"/);
  assert.equal((await hit(onlyAndroid, UA.iphone)).status, 302);
  assert.equal(await views(path), 2);
  assert.equal(await views(onlyAndroid), 2);
});

Deno.test("GET /:path without a redirect for the platform shows the page without a button", async () => {
  const path = await generateLink(srv.url, project.key, "production", {
    title: "Only iOS",
    ios_custom_redirect: { url: "https://apps.apple.com/app/id9" },
  });
  for (const ua of [UA.android, UA.desktop]) {
    const res = await hit(path, ua);
    assertHtml(res, 200);
    assert.ok(!res.text.includes('class="button"'));
    assert.match(res.text, /Only iOS/);
  }
  assert.equal((await hit(path, UA.iphone)).status, 302);
  assert.equal(await views(path), 3);
});

Deno.test("GET /:path serves crawlers the page with Open Graph and Twitter tags and does not count them", async () => {
  const path = await generateLink(srv.url, project.key, "production", {
    title: "Crawled",
    subtitle: "Seen by bots",
    image: "https://cdn.example.com/og.png",
    ...REDIRECTS,
  });
  for (const ua of CRAWLERS) {
    const res = await hit(path, ua);
    assertHtml(res, 200);
    assert.match(res.text, /<meta property="og:title" content="Crawled">/, ua);
    assert.match(res.text, /<meta property="og:description" content="Seen by bots">/);
    assert.match(
      res.text,
      /<meta property="og:image" content="https:\/\/cdn\.example\.com\/og\.png">/,
    );
    assert.match(res.text, /<meta name="twitter:card" content="summary_large_image">/);
    assert.ok(res.text.includes(`<meta property="og:url" content="${LINK_BASE_URL}/${path}">`));
  }
  assert.equal(await views(path), 0);
  const noImage = await generateLink(srv.url, project.key, "production", { title: "No image" });
  const res = await hit(noImage, CRAWLERS[0]!);
  assert.match(res.text, /<meta name="twitter:card" content="summary">/);
  assert.ok(!res.text.includes("og:image"));
});

Deno.test("GET /:path HTML-escapes every value from the link", async () => {
  const path = await generateLink(srv.url, project.key, "production", {
    title: `<script>alert("t")</script>`,
    subtitle: `"><img src=x onerror=alert(1)>`,
    image: `https://cdn.example.com/a.png?"><script>x</script>`,
    show_preview_ios: true,
    ios_custom_redirect: { url: `https://example.com/?q="><script>alert(1)</script>&a='b'` },
  });
  for (const ua of [UA.iphone, CRAWLERS[1]!]) {
    const res = await hit(path, ua);
    assert.equal(res.status, 200);
    assert.ok(!res.text.includes("<script>"), res.text);
    assert.ok(!res.text.includes("<img src=x"));
    assert.ok(res.text.includes("&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt;"));
    assert.ok(res.text.includes("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"));
  }
  assert.match(
    (await hit(path, UA.iphone)).text,
    /href="https:\/\/example\.com\/\?q=%22%3E%3Cscript%3Ealert\(1\)%3C\/script%3E&amp;a=(&#39;|%27)b(&#39;|%27)"|href="https:\/\/example\.com\/\?q=&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;&amp;a=&#39;b&#39;"/,
  );
});

Deno.test("the link host never follows a non-http(s) URL; generate_link refuses one with 400", async () => {
  const refused = await generateLinkCall(srv.url, project.key, "production", {
    ios_custom_redirect: { url: "javascript:alert(document.cookie)" },
  });
  assertError(refused, 400, "invalid_field", /^ios_custom_redirect\.url: /);
  // A row that bypassed validation (written by another path) is still not followed.
  const row = await createLink(srv.sql, project.productionId, {
    title: "Legacy",
    ios_custom_redirect: { url: "javascript:alert(1)" },
    desktop_custom_redirect: { url: "data:text/html,hi" },
  });
  for (const ua of [UA.iphone, UA.desktop]) {
    const res = await hit(row.path, ua);
    assertHtml(res, 200);
    assert.ok(!res.text.includes("javascript:") && !res.text.includes("data:text"));
  }
});

Deno.test("GET /:path answers 404 HTML for unknown and deactivated links and non-link paths, never 500", async () => {
  const path = await generateLink(srv.url, project.key, "production", REDIRECTS);
  await deactivateLink(srv.url, project.productionId, path);
  for (
    const p of [
      path,
      "doesnotexist",
      "favicon.ico",
      "robots.txt",
      "%00",
      "%E0%A4%A",
      "x".repeat(5000),
      "%F0%9F%98%80",
    ]
  ) {
    const res = await hit(p, UA.iphone);
    assertHtml(res, 404);
    assert.match(res.text, /Link not found/);
  }
  const [row] = await srv.sql`
    select count(*)::int as n from analytics_events where type = 'view' and link_id = (select id from links where path = ${path})
  `;
  assert.equal(row!.n, 0);
  // Paths under the API keep the JSON error body.
  assertError(await call(srv.url, "GET", "/api"), 404, "not_found");
  assertError(await call(srv.url, "GET", "/api/v1/nothing"), 404, "not_found");
  // A POST (a password link's form) to no link is the same HTML 404.
  assertHtml(await call(srv.url, "POST", `/doesnotexist`, { body: {} }), 404);
});

Deno.test("HEAD /:path answers like GET without a body and records no view", async () => {
  const path = await generateLink(srv.url, project.key, "production", REDIRECTS);
  const res = await hit(path, UA.iphone, "HEAD");
  assert.equal(res.status, 302);
  assert.equal(res.headers.get("location"), REDIRECTS.ios_custom_redirect.url);
  const page = await generateLink(srv.url, project.key, "production", { title: "Head" });
  const head = await hit(page, UA.desktop, "HEAD");
  assertHtml(head, 200);
  assert.equal(head.text, "");
  assertHtml(await hit("doesnotexist", UA.desktop, "HEAD"), 404);
  assert.equal(await views(path), 0);
  assert.equal(await views(page), 0);
});

Deno.test("a human view is recorded as a view event in the link's environment and reaches the feed", async () => {
  const p = await createProject(srv.url, { name: "Views" });
  await createFeedToken(srv.url, p.testId);
  const path = await generateLink(srv.url, p.key, "development", { title: "Dev link" });
  assert.equal((await hit(path, UA.android)).status, 200);
  await srv.views.flush();
  const rows = await srv.sql<{ type: string; link_id: number; body: string; received_at: Date }[]>`
    select type, link_id, body, received_at from analytics_events where environment_id = ${p.testId}
  `;
  assert.equal(rows.length, 1);
  const body = JSON.parse(rows[0]!.body);
  const [link] = await srv.sql<{ id: number }[]>`select id from links where path = ${path}`;
  assert.match(body.id, /^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
  assert.deepEqual(body, {
    schema_version: 1,
    id: body.id,
    type: "view",
    occurred_at: NOW,
    project: { id: p.hashid, test: true },
    // With the OS and browser families (CONTRACT, "Analytics").
    device: { platform: "android", os: "Android", browser: "Chrome" },
    // The view's click id (tests/link_host_click_ids_test.ts reads it back).
    attribution: { click_id: body.attribution.click_id },
    link: { id: link!.id, path, access_path: `${LINK_BASE_URL}/${path}` },
  });
  assert.match(body.attribution.click_id, /^[A-Za-z0-9_-]{42}$/);
  assert.equal(rows[0]!.received_at.toISOString(), NOW);
  const feed = await srv.sql<{ type: string; body: string }[]>`
    select type, body from feed_events where environment_id = ${p.testId}
  `;
  assert.deepEqual(feed.map((f) => ({ ...f })), [{ type: "view", body: rows[0]!.body }]);
  assert.equal((await linkMetrics(srv.url, p.key, path, "test")).total_views, 1);
});
