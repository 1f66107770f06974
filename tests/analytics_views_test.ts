// Link-host views record the visitor's OS and browser families and the referrer's host
// (services/link_host/visitor.ts); a known bot's hit records nothing; the address is stored nowhere.
import assert from "node:assert/strict";
import { generateLink, type Json } from "./helpers/sdk.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());
const project = await createProject(srv.url);

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
const CHROME_WINDOWS =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";

async function envelopes(path: string): Promise<Json[]> {
  const rows = await srv.sql<{ body: string }[]>`
    select e.body from analytics_events e join links l on l.id = e.link_id
    where l.path = ${path} order by e.id`;
  return rows.map((r) => JSON.parse(r.body));
}

Deno.test("a view records the OS and browser families and the referrer's host, each when known", async () => {
  const path = await generateLink(srv.url, project.key, "production", { title: "Seen" });
  const hit = (headers: Record<string, string>) => call(srv.url, "GET", `/${path}`, { headers });
  await hit({ "User-Agent": IPHONE, Referer: "https://News.Example.org/story?id=1" });
  await hit({ "User-Agent": CHROME_WINDOWS, "X-Forwarded-For": "203.0.113.7" });
  // The link's own host is no referrer, nor is something that is not an http(s) URL.
  await hit({ "User-Agent": CHROME_WINDOWS, Referer: "https://lnk.example.test/other" });
  await hit({ "User-Agent": "", Referer: "android-app://com.example" });
  await srv.views.flush();
  const views = await envelopes(path);
  // Every counted view has its click id (tests/link_host_click_ids_test.ts reads them back).
  const withoutClick = (a: Json) => {
    assert.match(a.click_id, /^[A-Za-z0-9_-]{42}$/);
    const { click_id: _, ...rest } = a;
    return rest;
  };
  assert.deepEqual(views.map((v) => [v.device, withoutClick(v.attribution)]), [
    [{ platform: "ios", os: "iOS", browser: "Mobile Safari" }, {
      referrer_host: "news.example.org",
    }],
    [{ platform: "desktop", os: "Windows", browser: "Chrome" }, {}],
    [{ platform: "desktop", os: "Windows", browser: "Chrome" }, {}],
    [{ platform: "desktop" }, {}],
  ]);

  const res = await call(
    srv.url,
    "GET",
    `/api/v1/projects/${project.productionId}/analytics?metrics=views&group_by=browser&link=${path}`,
    { headers: adminHeaders },
  );
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body.groups.map((g: Json) => [g.key, g.totals.views]), [
    ["Chrome", 2],
    ["Mobile Safari", 1],
    [null, 1],
  ]);
});

Deno.test("a known bot's hit is answered but records nothing", async () => {
  const path = await generateLink(srv.url, project.key, "production", { title: "Crawled" });
  for (
    const ua of [
      "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
      "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
      "curl/8.5.0",
      "python-requests/2.31.0",
    ]
  ) {
    const res = await call(srv.url, "GET", `/${path}`, { headers: { "User-Agent": ua } });
    assert.equal(res.status, 200, ua);
  }
  await call(srv.url, "GET", `/${path}`, { headers: { "User-Agent": IPHONE } });
  await srv.views.flush();
  assert.equal((await envelopes(path)).length, 1);
});

Deno.test("no address is stored: not the client's, not a forwarded one", async () => {
  const rows = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from analytics_events
    where body like '%203.0.113.7%' or body like '%127.0.0.1%'`;
  assert.equal(rows[0]!.n, 0);
  const feed = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from analytics_rollups
    where concat_ws(' ', country, platform, os, browser, referrer) like '%127.0.0.1%'`;
  assert.equal(feed[0]!.n, 0);
});
