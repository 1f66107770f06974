// Moving from Shlink: its short URLs and redirect rules, read from a Shlink API (a real HTTP
// server on 127.0.0.1 answering as Shlink 4 does) or from a file, become the links CSV; the
// import takes it, and every condition type Shlink has an equivalent for routes as it did.
// Every imported link works on every device: longUrl is the web destination phones fall back to.
import assert from "node:assert/strict";
import { readShlinkServer } from "../cli/shlink.ts";
import {
  type ShlinkCondition,
  shlinkIpRange,
  type ShlinkShortUrl,
  shlinkToCsv,
} from "../inputs/shlink.ts";
import { writeCountryDatabase } from "./helpers/mmdb.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const geoipPath = await writeCountryDatabase({ "203.0.113.0/24": "US", "198.51.100.0/24": "DE" });
const srv = await startTestServer({ config: { GEOIP_DATABASE: geoipPath, TRUST_PROXY: "true" } });
const project = await createProject(srv.url);

const LONG = "https://shop.example/spring";
const rule = (priority: number, longUrl: string, ...conditions: ShlinkCondition[]) => ({
  longUrl,
  priority,
  conditions,
});
const SHORT_URLS: ShlinkShortUrl[] = [
  {
    shortCode: "spring",
    longUrl: LONG,
    title: "Spring",
    tags: ["print"],
    meta: { validUntil: "2030-01-01T00:00:00+00:00", maxVisits: 1000 },
    forwardQuery: false,
  },
  {
    shortCode: "ruled",
    longUrl: LONG,
    forwardQuery: true,
    // Given out of order: priority decides.
    redirectRules: [
      rule(3, "https://r.example/ios", { type: "device", matchValue: "ios" }),
      rule(1, "https://r.example/android", { type: "device", matchValue: "android" }),
      rule(2, "https://r.example/windows", { type: "device", matchValue: "windows" }),
      rule(4, "https://r.example/es", { type: "language", matchValue: "es-ES" }),
      rule(5, "https://r.example/promo", {
        type: "query-param",
        matchKey: "promo",
        matchValue: "x",
      }),
      rule(6, "https://r.example/any", { type: "any-value-query-param", matchKey: "ref" }),
      rule(7, "https://r.example/us", { type: "geolocation-country-code", matchValue: "us" }),
      rule(8, "https://r.example/office", { type: "ip-address", matchValue: "192.0.2.*" }),
      rule(9, "https://r.example/lab", { type: "ip-address", matchValue: "2001:db8::/32" }),
      rule(10, "https://r.example/city", { type: "geolocation-city-name", matchValue: "Berlin" }),
      rule(
        11,
        "https://r.example/de-mobile",
        { type: "geolocation-country-code", matchValue: "DE" },
        { type: "device", matchValue: "mobile" },
      ),
    ],
  },
  {
    shortCode: "legacy",
    longUrl: LONG,
    deviceLongUrls: { ios: "https://apps.apple.com/app/id1", android: null, desktop: null },
  },
];

// A Shlink server: two pages of short URLs, and each one's redirect rules.
const KEY = "shlink-key-1";
const shlink = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
  if (req.headers.get("X-Api-Key") !== KEY) return new Response("no", { status: 401 });
  const url = new URL(req.url);
  const rules = /^\/rest\/v3\/short-urls\/([^/]+)\/redirect-rules$/.exec(url.pathname);
  if (rules) {
    const short = SHORT_URLS.find((s) => s.shortCode === decodeURIComponent(rules[1]!))!;
    return Response.json({
      defaultLongUrl: short.longUrl,
      redirectRules: short.redirectRules ?? [],
    });
  }
  if (url.pathname === "/rest/v3/short-urls") {
    const page = Number(url.searchParams.get("page"));
    const data = page === 1 ? SHORT_URLS.slice(0, 2) : SHORT_URLS.slice(2);
    return Response.json({
      shortUrls: {
        data: data.map(({ redirectRules: _r, ...s }) => ({
          ...s,
          shortUrl: `https://s.example/${s.shortCode}`,
        })),
        pagination: { currentPage: page, pagesCount: 2 },
      },
    });
  }
  return new Response("not found", { status: 404 });
});
Deno.test.afterAll(async () => {
  await shlink.shutdown();
  await srv.close();
  await Deno.remove(geoipPath);
});

function hit(path: string, headers: Record<string, string> = {}, query = "") {
  return call(srv.url, "GET", `/${path}${query}`, {
    headers: {
      "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0",
      "X-Forwarded-For": "192.0.3.1",
      ...headers,
    },
  });
}
async function dest(path: string, headers: Record<string, string> = {}, query = "") {
  const res = await hit(path, headers, query);
  assert.equal(res.status, 302, res.text);
  return res.headers.get("location");
}

Deno.test("a Shlink export with each condition type imports, and every link routes as in Shlink", async () => {
  const read = await readShlinkServer(`http://127.0.0.1:${shlink.addr.port}`, KEY);
  assert.deepEqual(read.map((s) => s.shortCode), ["spring", "ruled", "legacy"]);
  const { csv, warnings } = shlinkToCsv(read);
  assert.deepEqual(warnings, [{
    shortCode: "ruled",
    message: 'redirect rule 10 left out: condition "geolocation-city-name" has no equivalent',
  }]);
  const res = await call(srv.url, "POST", `/api/v1/projects/${project.productionId}/links/import`, {
    headers: { ...adminHeaders, "Content-Type": "text/csv" },
    raw: csv,
  });
  assert.equal(res.status, 201, res.text);
  assert.deepEqual(res.body, { imported: 3 });

  // longUrl works on every device.
  const IPHONE =
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) Mobile/15E148 Safari/604.1";
  const ANDROID = "Mozilla/5.0 (Linux; Android 14; Pixel 8) Chrome/124.0 Mobile Safari/537.36";
  const WINDOWS = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/124.0.0.0 Safari/537.36";
  for (const ua of [IPHONE, ANDROID, WINDOWS]) {
    assert.equal(await dest("spring", { "User-Agent": ua }), LONG, ua);
  }
  // Shlink 3's per-device URLs stay per device, the long URL for the others.
  assert.equal(await dest("legacy", { "User-Agent": IPHONE }), "https://apps.apple.com/app/id1");
  assert.equal(await dest("legacy", { "User-Agent": ANDROID }), LONG);

  // Each condition type, in priority order.
  assert.equal(await dest("ruled", { "User-Agent": ANDROID }), "https://r.example/android");
  assert.equal(await dest("ruled", { "User-Agent": WINDOWS }), "https://r.example/windows");
  assert.equal(await dest("ruled", { "User-Agent": IPHONE }), "https://r.example/ios");
  assert.equal(
    await dest("ruled", { "Accept-Language": "es-MX,en;q=0.5" }),
    "https://r.example/es",
  );
  assert.equal(await dest("ruled", {}, "?promo=x"), "https://r.example/promo?promo=x");
  assert.equal(await dest("ruled", {}, "?ref=news"), "https://r.example/any?ref=news");
  assert.equal(await dest("ruled", { "X-Forwarded-For": "203.0.113.4" }), "https://r.example/us");
  assert.equal(
    await dest("ruled", { "X-Forwarded-For": "192.0.2.77" }),
    "https://r.example/office",
  );
  assert.equal(await dest("ruled", { "X-Forwarded-For": "2001:db8::9" }), "https://r.example/lab");
  // Nothing matched: the long URL, the hit's query forwarded as Shlink did for this link.
  assert.equal(await dest("ruled", {}, "?utm_source=x"), `${LONG}?utm_source=x`);
  assert.equal(await dest("spring", {}, "?utm_source=x"), LONG);

  // The managed links show what came across.
  const list = await call(
    srv.url,
    "GET",
    `/api/v1/projects/${project.productionId}/links?q=spring`,
    {
      headers: adminHeaders,
    },
  );
  const spring = list.body.links[0];
  assert.equal(spring.expires_at, "2030-01-01T00:00:00.000Z");
  assert.equal(spring.max_views, 1000);
  assert.deepEqual(spring.tags, ["print"]);
  const ruled =
    (await call(srv.url, "GET", `/api/v1/projects/${project.productionId}/links?q=ruled`, {
      headers: adminHeaders,
    })).body.links[0];
  assert.equal(ruled.rules.length, 10);
  assert.deepEqual(ruled.rules.at(-1), {
    name: "shlink 11",
    when: { country: ["DE"], platform: ["ios", "android"] },
    url: "https://r.example/de-mobile",
  });
});

Deno.test("the CLI writes the same CSV from a file of Shlink's list answer", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/shlink.json`;
  await Deno.writeTextFile(file, JSON.stringify({ shortUrls: { data: SHORT_URLS } }));
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "cli/shlink.ts",
      "--",
      "--file",
      file,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.equal(new TextDecoder().decode(out.stdout), shlinkToCsv(SHORT_URLS).csv);
  assert.match(new TextDecoder().decode(out.stderr), /3 links, 1 warnings/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("Shlink's IP patterns become CIDR ranges", () => {
  assert.equal(shlinkIpRange("192.168.1.*"), "192.168.1.0/24");
  assert.equal(shlinkIpRange("10.*.*.*"), "10.0.0.0/8");
  assert.equal(shlinkIpRange("10.*.3.*"), null);
  assert.equal(shlinkIpRange("192.168.1.10"), "192.168.1.10");
});
