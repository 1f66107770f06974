// Link rules, splits, query forwarding and UTM (CONTRACT.md, "Link rules, splits and passwords"):
// each condition alone and combined, first match wins, sticky split variants over a visitor
// cookie, rule and variant in the view's attribution and in analytics, on two instances over one
// database (an edit is what the next hit on the other sees).
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { type Json } from "./helpers/sdk.ts";
import { writeCountryDatabase } from "./helpers/mmdb.ts";
import {
  adminHeaders,
  assertError,
  call,
  createProject,
  serveApp,
  startTestServer,
} from "./helpers/server.ts";
import { ipv4Number, pickVariant } from "../services/links/rules.ts";
import { preferredLanguage } from "../services/links/rules.ts";

const NOW = "2026-05-01T12:00:00.000Z";
const clock = new ManualClock(NOW);
const geoipPath = await writeCountryDatabase({
  "203.0.113.0/24": "DE",
  "198.51.100.0/24": "FR",
  "2001:db8::/32": "US",
});
const config = { GEOIP_DATABASE: geoipPath, TRUST_PROXY: "true" };
const srv = await startTestServer({ clock, config });
// A second instance over the same database: no instance keeps a link between hits.
const other = serveApp(srv.db, { clock, config });
Deno.test.afterAll(async () => {
  await other.close();
  await srv.close();
  await Deno.remove(geoipPath);
});
const project = await createProject(srv.url);
const base = `/api/v1/projects/${project.productionId}/links`;

const UA = {
  iphone:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
  android:
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36",
  windows:
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
  mac:
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
};

async function createLink(body: Record<string, unknown>): Promise<Json> {
  const res = await call(srv.url, "POST", base, { headers: adminHeaders, body });
  assert.equal(res.status, 201, res.text);
  return res.body.link;
}

async function patchLink(path: string, body: Record<string, unknown>, on = srv.url) {
  const res = await call(on, "PATCH", `${base}/${path}`, { headers: adminHeaders, body });
  assert.equal(res.status, 200, res.text);
  return res.body.link;
}

/** Where a hit goes: the Location of its 302 (or the status when it is no redirect). */
async function dest(
  path: string,
  headers: Record<string, string> = {},
  query = "",
  on = srv.url,
): Promise<string> {
  const res = await call(on, "GET", `/${path}${query}`, {
    headers: { "User-Agent": UA.windows, "X-Forwarded-For": "192.0.2.100", ...headers },
  });
  return res.status === 302 ? res.headers.get("location")! : String(res.status);
}

const DEFAULT = "https://example.com/default";
const MATCH = "https://example.com/match";

async function ruleLink(when: Record<string, unknown>) {
  return await createLink({
    desktop_custom_redirect: { url: DEFAULT },
    ios_custom_redirect: { url: DEFAULT },
    android_custom_redirect: { url: DEFAULT },
    rules: [{ name: "r", when, url: MATCH }],
  });
}

Deno.test("rules: each condition alone matches its values and nothing else", async () => {
  const cases: [
    Record<string, unknown>,
    Record<string, string>,
    string,
    Record<string, string>,
    string,
  ][] = [
    // [when, matching headers, matching query, other headers, other query]
    [{ country: ["DE", "AT"] }, { "X-Forwarded-For": "203.0.113.9" }, "", {
      "X-Forwarded-For": "198.51.100.3",
    }, ""],
    [{ language: ["de"] }, { "Accept-Language": "fr;q=0.5, de-CH, en;q=0.8" }, "", {
      "Accept-Language": "en-US,de;q=0.9",
    }, ""],
    [{ platform: ["android"] }, { "User-Agent": UA.android }, "", { "User-Agent": UA.iphone }, ""],
    [{ os: ["Windows"] }, { "User-Agent": UA.windows }, "", { "User-Agent": UA.mac }, ""],
    [
      { query: { utm_source: "news", ref: "*" } },
      {},
      "?utm_source=news&ref=",
      {},
      "?utm_source=news",
    ],
    [{ referrer_host: ["news.example.org"] }, { Referer: "https://News.Example.org/a" }, "", {
      Referer: "https://other.example.org/",
    }, ""],
    [{ ip: ["192.0.2.0/28", "2001:db8::/48"] }, { "X-Forwarded-For": "2001:db8::5" }, "", {
      "X-Forwarded-For": "192.0.2.200",
    }, ""],
    [{ ip: ["192.0.2.0/28"] }, { "X-Forwarded-For": "192.0.2.3" }, "", {
      "X-Forwarded-For": "2001:db9::1",
    }, ""],
    [{ from: "2026-05-01T00:00:00Z", until: "2026-05-02T00:00:00Z" }, {}, "", {}, "@later"],
  ];
  for (const [when, yes, yesQuery, no, noQuery] of cases) {
    const link = await ruleLink(when);
    const label = JSON.stringify(when);
    assert.equal(await dest(link.path, yes, yesQuery), MATCH, label);
    if (noQuery === "@later") {
      clock.set("2026-05-02T00:00:00Z");
      assert.equal(await dest(link.path, no), DEFAULT, `${label} at until`);
      clock.set("2026-04-30T23:59:59Z");
      assert.equal(await dest(link.path, no), DEFAULT, `${label} before from`);
      clock.set(NOW);
    } else {
      assert.equal(await dest(link.path, no, noQuery), DEFAULT, label);
    }
    // What a hit lacks (no country, no language, no referrer) matches nothing.
    if (!("platform" in when) && !("os" in when) && !("from" in when)) {
      assert.equal(await dest(link.path, {}), DEFAULT, `${label} without the fact`);
    }
  }
});

Deno.test("rules: every condition of a rule must hold, and the first matching rule decides", async () => {
  const link = await createLink({
    desktop_custom_redirect: { url: DEFAULT },
    rules: [
      { name: "de-android", when: { country: ["DE"], platform: ["android"] }, url: MATCH + "/1" },
      { when: { country: ["DE"] }, url: MATCH + "/2" },
      { when: {}, url: MATCH + "/3" },
    ],
  });
  const de = { "X-Forwarded-For": "203.0.113.1" };
  assert.equal(await dest(link.path, { ...de, "User-Agent": UA.android }), MATCH + "/1");
  assert.equal(await dest(link.path, { ...de, "User-Agent": UA.iphone }), MATCH + "/2");
  assert.equal(await dest(link.path, { "User-Agent": UA.android }), MATCH + "/3");
  // The view records which rule decided: its name, else its 1-based place.
  await srv.views.flush();
  const rules = (await envelopes(link.path)).map((e) => e.attribution?.rule);
  assert.deepEqual(rules, ["de-android", 2, 3]);
});

Deno.test("a rule's url replaces the platform's destination; open-app and the store fallback stay", async () => {
  // A project of its own: its apps must not change the other tests' links.
  const withApp = await createProject(srv.url, { name: "With app" });
  const apps = await call(srv.url, "PATCH", `/api/v1/admin/projects/${withApp.hashid}`, {
    headers: adminHeaders,
    body: {
      apps: {
        android: {
          package: "com.acme.app",
          scheme: "acme",
          sha256_cert_fingerprints: [Array.from({ length: 32 }, () => "AB").join(":")],
        },
      },
    },
  });
  assert.equal(apps.status, 200, apps.text);
  const created = await call(srv.url, "POST", `/api/v1/projects/${withApp.productionId}/links`, {
    headers: adminHeaders,
    body: {
      android_custom_redirect: { open_app_if_installed: true },
      rules: [{ when: { country: ["DE"] }, url: MATCH }],
    },
  });
  const link = created.body.link;
  const android = await dest(link.path, {
    "User-Agent": UA.android,
    "X-Forwarded-For": "203.0.113.1",
  });
  assert.match(android, /^intent:\/\//);
  assert.ok(android.includes(`S.browser_fallback_url=${encodeURIComponent(MATCH)}`), android);
  const elsewhere = await dest(link.path, { "User-Agent": UA.android });
  assert.ok(elsewhere.includes(encodeURIComponent("https://play.google.com/")), elsewhere);
});

Deno.test("a link with only a desktop URL sends phones there too (issue 33)", async () => {
  const link = await createLink({ desktop_custom_redirect: { url: DEFAULT } });
  assert.equal(await dest(link.path, { "User-Agent": UA.iphone }), DEFAULT);
  assert.equal(await dest(link.path, { "User-Agent": UA.android }), DEFAULT);
  // A preview asked for still shows first, its button leading there.
  await patchLink(link.path, { show_preview_ios: true });
  const res = await call(srv.url, "GET", `/${link.path}`, { headers: { "User-Agent": UA.iphone } });
  assert.equal(res.status, 200);
  assert.ok(res.text.includes(`href="${DEFAULT}"`));
});

Deno.test("splits: a visitor keeps their variant through the cookie; new visitors spread by weight", async () => {
  const variants = ["https://a.example/", "https://b.example/", "https://c.example/"];
  const link = await createLink({
    desktop_custom_redirect: { url: DEFAULT },
    split: variants.map((url, i) => ({ url, weight: [50, 30, 20][i] })),
  });
  const seen = new Map<string, number>();
  for (let i = 0; i < 60; i++) {
    const res = await call(srv.url, "GET", `/${link.path}`, { headers: { "User-Agent": UA.mac } });
    assert.equal(res.status, 302);
    const cookie = res.headers.get("set-cookie")!;
    assert.match(
      cookie,
      /^lv_id=[A-Za-z0-9_-]{22}; Path=\/; Max-Age=31536000; HttpOnly; SameSite=Lax/,
    );
    const location = res.headers.get("location")!;
    seen.set(location, (seen.get(location) ?? 0) + 1);
    // The same visitor, on either instance, keeps it and gets no new cookie.
    const id = cookie.split(";")[0]!;
    for (const on of [srv.url, other.url]) {
      const again = await call(on, "GET", `/${link.path}`, {
        headers: { "User-Agent": UA.mac, Cookie: `other=1; ${id}` },
      });
      assert.equal(again.headers.get("location"), location);
      assert.equal(again.headers.get("set-cookie"), null);
    }
  }
  assert.deepEqual([...seen.keys()].sort(), variants);
  // Views record their variant (1-based); analytics group by it with link=.
  await srv.views.flush();
  await other.views.flush();
  const recorded = (await envelopes(link.path)).map((e) => e.attribution?.variant);
  assert.equal(recorded.length, 180);
  assert.ok(recorded.every((v) => v >= 1 && v <= 3));
  const res = await call(
    srv.url,
    "GET",
    `/api/v1/projects/${project.productionId}/analytics?group_by=variant&link=${link.path}&metrics=views&from=2026-04-01T00:00:00Z&to=2026-06-01T00:00:00Z`,
    { headers: adminHeaders },
  );
  assert.equal(res.status, 200, res.text);
  const byVariant = Object.fromEntries(res.body.groups.map((g: Json) => [g.key, g.totals.views]));
  for (const [url, n] of seen) {
    assert.equal(byVariant[String(variants.indexOf(url) + 1)], n * 3);
  }
  assertError(
    await call(
      srv.url,
      "GET",
      `/api/v1/projects/${project.productionId}/analytics?group_by=variant`,
      {
        headers: adminHeaders,
      },
    ),
    400,
    "invalid_field",
    /link/,
  );
  // The split's results: every variant, not enough data yet.
  const results = await call(srv.url, "GET", `${base}/${link.path}/split`, {
    headers: adminHeaders,
  });
  assert.equal(results.status, 200, results.text);
  assert.equal(results.body.enough_data, false);
  assert.deepEqual(
    results.body.variants.map((v: Json) => [v.variant, v.url, v.views]),
    variants.map((
      url,
      i,
    ) => [i + 1, url, (seen.get(url) ?? 0) * 3]),
  );
  const total = results.body.variants.reduce((n: number, v: Json) => n + v.probability_best, 0);
  assert.ok(Math.abs(total - 1) < 1e-9);
});

Deno.test("splits: over 10,000 simulated visitors each variant's share is within 2 points of its weight's", () => {
  for (const weights of [[50, 30, 20], [1, 1], [1, 999], [7, 3, 5, 10, 25]]) {
    const cumulative: number[] = [];
    let total = 0;
    for (const w of weights) cumulative.push(total += w);
    for (const [linkId, rule] of [[1, 0], [42, 3]]) {
      const counts = new Array(weights.length).fill(0);
      for (let i = 0; i < 10_000; i++) {
        const id = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
        counts[pickVariant({ cumulative, total }, id, linkId!, rule!) - 1]++;
      }
      counts.forEach((n, i) => {
        const share = n / 100;
        const expected = (weights[i]! / total) * 100;
        assert.ok(
          Math.abs(share - expected) <= 2,
          `${weights}: variant ${i + 1} ${share}% vs ${expected}%`,
        );
      });
    }
  }
});

Deno.test("a rule's split is sticky per rule and recorded with the rule", async () => {
  const link = await createLink({
    rules: [{
      name: "fr",
      when: { country: ["FR"] },
      split: [{ url: "https://fr-a.example/", weight: 1 }, {
        url: "https://fr-b.example/",
        weight: 1,
      }],
    }],
    split: [{ url: "https://x.example/", weight: 1 }, { url: "https://y.example/", weight: 1 }],
  });
  const fr = { "X-Forwarded-For": "198.51.100.8", Cookie: "lv_id=AAAAAAAAAAAAAAAAAAAAAA" };
  const first = await dest(link.path, fr);
  assert.match(first, /^https:\/\/fr-[ab]\.example\/$/);
  for (let i = 0; i < 5; i++) assert.equal(await dest(link.path, fr), first);
  const top = await dest(link.path, { Cookie: fr.Cookie });
  assert.match(top, /^https:\/\/[xy]\.example\/$/);
  await srv.views.flush();
  const last = (await envelopes(link.path)).at(-1);
  assert.equal(last.attribution.rule, undefined);
  assert.ok([1, 2].includes(last.attribution.variant));
  assert.equal((await envelopes(link.path))[0].attribution.rule, "fr");
  const results = await call(srv.url, "GET", `${base}/${link.path}/split?rule=fr`, {
    headers: adminHeaders,
  });
  assert.equal(results.status, 200, results.text);
  assert.equal(results.body.rule, "fr");
  assert.equal(results.body.variants.reduce((n: number, v: Json) => n + v.views, 0), 6);
  assertError(
    await call(srv.url, "GET", `${base}/${link.path}/split?rule=nope`, { headers: adminHeaders }),
    400,
    "invalid_field",
  );
});

Deno.test("forward_query adds the hit's parameters (the destination's win); append_utm the tracking fields", async () => {
  const link = await createLink({
    desktop_custom_redirect: { url: "https://shop.example/p?ref=own" },
    tracking_campaign: "spring sale",
    tracking_source: "poster",
    forward_query: true,
    append_utm: true,
  });
  const to = new URL(await dest(link.path, {}, "?ref=hit&gclid=abc&utm_source=hit"));
  assert.equal(to.searchParams.get("ref"), "own");
  assert.equal(to.searchParams.get("gclid"), "abc");
  // The hit's utm_source came first (forwarded), so append_utm leaves it.
  assert.equal(to.searchParams.get("utm_source"), "hit");
  assert.equal(to.searchParams.get("utm_campaign"), "spring sale");
  assert.equal(to.searchParams.get("utm_medium"), null);
  const plain = await patchLink(link.path, { forward_query: false });
  assert.equal(plain.forward_query, false);
  assert.equal(
    await dest(link.path, {}, "?gclid=abc"),
    "https://shop.example/p?ref=own&utm_campaign=spring+sale&utm_source=poster",
  );
});

Deno.test("rules are validated, listed, edited and cleared; an edit is served by the other instance at once", async () => {
  const bad: [unknown, RegExp][] = [
    [[{ when: { country: ["XX"] }, url: MATCH }], /rules\[0\]\.when\.country\[0\]/],
    [
      [{ when: {}, url: MATCH, split: [{ url: MATCH, weight: 1 }, { url: MATCH, weight: 1 }] }],
      /url or split/,
    ],
    [[{ when: {}, url: "javascript:alert(1)" }], /http/],
    [[{ when: { ip: ["10.0.0.0/33"] }, url: MATCH }], /CIDR/],
    [[{ when: { platform: ["tv"] }, url: MATCH }], /platform/],
    [[{ when: { colour: ["red"] }, url: MATCH }], /colour|Unrecognized|unknown/i],
    [
      [{ when: { from: "2026-06-01T00:00:00Z", until: "2026-05-01T00:00:00Z" }, url: MATCH }],
      /before/,
    ],
    [Array.from({ length: 51 }, () => ({ when: {}, url: MATCH })), /50/],
  ];
  for (const [rules, message] of bad) {
    const res = await call(srv.url, "POST", base, { headers: adminHeaders, body: { rules } });
    assertError(res, 400, "invalid_field", message);
  }
  assertError(
    await call(srv.url, "POST", base, {
      headers: adminHeaders,
      body: { split: [{ url: MATCH, weight: 1 }] },
    }),
    400,
    "invalid_field",
    /at least 2/,
  );
  const link = await ruleLink({ language: ["EN"] });
  assert.deepEqual(link.rules, [{ name: "r", when: { language: ["en"] }, url: MATCH }]);
  assert.equal(link.split, null);
  assert.equal(link.password_protected, false);
  const en = { "Accept-Language": "en" };
  assert.equal(await dest(link.path, en, "", other.url), MATCH);
  await patchLink(link.path, { rules: [{ when: { language: ["en"] }, url: MATCH + "/new" }] });
  assert.equal(await dest(link.path, en, "", other.url), MATCH + "/new");
  const cleared = await patchLink(link.path, { rules: null }, other.url);
  assert.deepEqual(cleared.rules, []);
  assert.equal(await dest(link.path, en), DEFAULT);
  const listed = await call(srv.url, "GET", `${base}?q=${link.path}`, { headers: adminHeaders });
  assert.deepEqual(listed.body.links[0].rules, []);
});

Deno.test("the most preferred language is the highest q, the first on ties", () => {
  assert.equal(preferredLanguage("de-CH, fr;q=0.9"), "de");
  assert.equal(preferredLanguage("fr;q=0.5, en;q=0.8, *"), "en");
  assert.equal(preferredLanguage("en-US,en;q=0.9,de;q=0.9"), "en");
  assert.equal(preferredLanguage("x-klingon, it;q=0"), null);
  assert.equal(preferredLanguage(""), null);
});

async function envelopes(path: string): Promise<Json[]> {
  const rows = await srv.sql<{ body: string }[]>`
    select e.body from analytics_events e join links l on l.id = e.link_id
    where l.path = ${path} order by e.id`;
  return rows.map((r) => JSON.parse(r.body));
}

Deno.test("IPv4 addresses are read as numbers; anything else is no IPv4 address", () => {
  assert.equal(ipv4Number("192.0.2.1"), 0xc0000201);
  assert.equal(ipv4Number("255.255.255.255"), 0xffffffff);
  for (const bad of ["256.0.0.1", "1.2.3", "1.2.3.4.5", "1..2.3", "::1", "", "1.2.3.a"]) {
    assert.equal(ipv4Number(bad), null, bad);
  }
});
