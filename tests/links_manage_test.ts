// Managing links over HTTP (CONTRACT.md, "Managing links"): create with a chosen path, edit every
// field, archive, delete, and the cursor-paged list with its filters and orders.
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { gql, type Json } from "./helpers/graphql.ts";
import { generateLink, ingest, sdkHeaders } from "./helpers/sdk.ts";
import {
  adminHeaders,
  assertError,
  call,
  createFeedToken,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

const NOW = "2026-03-10T12:00:00.000Z";
const srv = await startTestServer({ clock: new ManualClock(NOW) });
Deno.test.afterAll(() => srv.close());

const acme = await createProject(srv.url, { name: "Acme" });
const base = (env = acme.productionId) => `/api/v1/projects/${env}/links`;

const UA = {
  ios: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148",
  android: "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0 Mobile",
  desktop: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 Chrome/124.0",
};

function admin(method: string, path: string, body?: unknown) {
  return call(srv.url, method, path, { headers: adminHeaders, body });
}
function hit(path: string, userAgent: string) {
  return call(srv.url, "GET", `/${path}`, { headers: { "User-Agent": userAgent } });
}
async function create(body: Json, env = acme.productionId) {
  const res = await admin("POST", base(env), body);
  assert.equal(res.status, 201, res.text);
  return res.body.link;
}
async function linkCount(): Promise<number> {
  const [row] = await srv.sql<{ n: number }[]>`select count(*)::int as n from links`;
  return row!.n;
}

Deno.test("POST …/links creates with a chosen path and expiry, as an API link", async () => {
  const link = await create({
    path: "spring-Sale_2026",
    title: "Spring",
    data: { promo: "spring" },
    tags: ["print"],
    expires_at: "2026-12-31T23:59:59+01:00",
    max_views: 500,
    expired_url: "https://example.com/over",
  });
  assert.equal(link.path, "spring-Sale_2026");
  assert.equal(link.access_path, `${srv.config.linkBaseUrl}/spring-Sale_2026`);
  assert.equal(link.generated_from_platform, "API");
  assert.equal(link.sdk_generated, false);
  assert.equal(link.expires_at, "2026-12-31T22:59:59.000Z");
  assert.equal(link.max_views, 500);
  assert.equal(link.expired_url, "https://example.com/over");
  assert.equal(link.state, "active");
  assert.equal(link.archived, false);
  assert.equal(link.total_views, 0);
  assert.equal(typeof link.created_at, "string");
  assert.deepEqual(link.data, { promo: "spring" });
  // Paths are case-sensitive: another case is another path.
  const other = await create({ path: "SPRING-sale_2026" });
  assert.equal(other.path, "SPRING-sale_2026");
});

Deno.test("POST …/links refuses taken, reserved, long and malformed paths, naming path, storing nothing", async () => {
  await create({ path: "taken-path" });
  const deleted = await create({ path: "deleted-path" });
  assert.equal((await admin("DELETE", `${base()}/${deleted.path}`)).status, 204);
  const before = await linkCount();
  for (
    const path of [
      "taken-path",
      "deleted-path",
      "api",
      "Dashboard",
      "healthz",
      "assets",
      "x".repeat(65),
      "",
      "with space",
      "dot.ted",
      "slash/ed",
      "é",
    ]
  ) {
    const res = await admin("POST", base(), { path, title: "never stored" });
    assertError(res, 400, "invalid_field", /^path:/);
  }
  // The other environment of the instance cannot take them either: paths are instance-wide.
  assertError(
    await admin("POST", base(acme.testId), { path: "taken-path" }),
    400,
    "invalid_field",
    /^path:/,
  );
  assert.equal(await linkCount(), before);
  assert.equal((await create({ path: "x".repeat(64) })).path, "x".repeat(64));
});

Deno.test("PATCH …/links/:path edits every field; lookup, the link host and the preview follow", async () => {
  const link = await create({
    title: "Old",
    desktop_custom_redirect: { url: "https://old.example/" },
  });
  const patch = {
    title: "New title",
    subtitle: "New <subtitle>",
    image: "https://img.example/new.png",
    data: { version: 2 },
    tags: ["edited"],
    ios_custom_redirect: { url: "https://ios.example/new" },
    android_custom_redirect: { url: "https://android.example/new" },
    desktop_custom_redirect: { url: "https://desktop.example/new" },
    show_preview_ios: false,
    show_preview_android: false,
    tracking_campaign: "c2",
    tracking_source: "s2",
    tracking_medium: "m2",
    expires_at: "2027-01-01T00:00:00Z",
    max_views: 1000,
    expired_url: "https://expired.example/",
  };
  await new Promise((r) => setTimeout(r, 5)); // updated_at is PostgreSQL's now(): let it move
  const res = await admin("PATCH", `${base()}/${link.path}`, patch);
  assert.equal(res.status, 200, res.text);
  const edited = res.body.link;
  for (const [k, v] of Object.entries(patch)) {
    if (k === "expires_at") assert.equal(edited[k], "2027-01-01T00:00:00.000Z");
    else if (!k.startsWith("show_preview")) assert.deepEqual(edited[k], v, k);
  }
  assert.ok(edited.updated_at > link.updated_at);
  assert.equal(edited.path, link.path);

  // Lookup (the specification's Link object) shows every field of the edit.
  const lookup = await call(srv.url, "GET", `/api/v1/sdk/link/${link.path}`, {
    headers: sdkHeaders(acme.key, "production"),
  });
  assert.equal(lookup.status, 200, lookup.text);
  const { expires_at: _e, max_views: _m, expired_url: _x, ...linkFields } = patch;
  const { show_preview_ios: _i, show_preview_android: _a, ...shown } = linkFields;
  for (const [k, v] of Object.entries(shown)) {
    assert.deepEqual(lookup.body.link[k], v, `lookup ${k}`);
  }
  assert.equal(lookup.body.link.show_preview, false);
  assert.equal(lookup.body.link.updated_at, edited.updated_at);
  // The link host sends each platform to its new target.
  for (
    const [platform, url] of Object.entries({
      ios: "https://ios.example/new",
      android: "https://android.example/new",
      desktop: "https://desktop.example/new",
    })
  ) {
    const h = await hit(link.path, UA[platform as keyof typeof UA]);
    assert.equal(h.status, 302, platform);
    assert.equal(h.headers.get("location"), url);
  }
  // The preview page, on iOS and Android (their own flags) and for a crawler (any platform),
  // shows the new title, subtitle and image, its button leading to the platform's new target.
  const previews = await admin("PATCH", `${base()}/${link.path}`, {
    show_preview_ios: true,
    show_preview_android: true,
  });
  assert.equal(previews.body.link.show_preview, true);
  for (
    const [ua, url] of [
      [UA.ios, "https://ios.example/new"],
      [UA.android, "https://android.example/new"],
      ["Twitterbot/1.0", "https://desktop.example/new"],
    ]
  ) {
    const preview = await hit(link.path, ua!);
    assert.equal(preview.status, 200, ua);
    assert.match(preview.text, /<h1>New title<\/h1>/);
    assert.match(preview.text, /<p>New &lt;subtitle&gt;<\/p>/);
    assert.match(
      preview.text,
      /<meta property="og:image" content="https:\/\/img\.example\/new\.png">/,
    );
    assert.match(preview.text, new RegExp(`<a class="button" href="${url}"`), ua);
  }
  assert.equal(
    (await call(srv.url, "GET", `/api/v1/sdk/link/${link.path}`, {
      headers: sdkHeaders(acme.key, "production"),
    })).body.link.show_preview,
    true,
  );

  // null clears an optional field.
  const cleared = await admin("PATCH", `${base()}/${link.path}`, {
    image: null,
    tags: null,
    tracking_campaign: null,
    expires_at: null,
    max_views: null,
    expired_url: null,
    desktop_custom_redirect: null,
    title: null,
  });
  assert.equal(cleared.status, 200, cleared.text);
  assert.equal(cleared.body.link.image, null);
  assert.deepEqual(cleared.body.link.tags, []);
  assert.equal(cleared.body.link.tracking_campaign, null);
  assert.equal(cleared.body.link.expires_at, null);
  assert.equal(cleared.body.link.max_views, null);
  assert.deepEqual(cleared.body.link.desktop_custom_redirect, {});
  assert.equal(cleared.body.link.title, "");
});

Deno.test("PATCH …/links/:path refuses what generate_link refuses, unknown fields and path, changing nothing", async () => {
  const link = await create({ title: "Keep", path: "keep-me" });
  const cases: [Json, RegExp][] = [
    [{ image: "javascript:alert(1)" }, /^image:/],
    [{ desktop_custom_redirect: { url: "data:text/html,x" } }, /^desktop_custom_redirect\.url:/],
    [{ tags: '["a"]' }, /^tags:/],
    [{ data: [1] }, /^data:/],
    [{ title: "x".repeat(1001) }, /^title:/],
    [{ max_views: 0 }, /^max_views:/],
    [{ max_views: 1.5 }, /^max_views:/],
    [{ expires_at: "tomorrow" }, /^expires_at:/],
    [{ expired_url: "ftp://x" }, /^expired_url:/],
    [{ path: "other" }, /path/],
    [{ sdk_generated: true }, /sdk_generated/],
    [{ active: "no" }, /^active:/],
    [{}, /at least one field/],
  ];
  for (const [body, message] of cases) {
    assertError(
      await admin("PATCH", `${base()}/${link.path}`, body),
      400,
      "invalid_field",
      message,
    );
  }
  assertError(
    await call(srv.url, "PATCH", `${base()}/${link.path}`, { headers: adminHeaders, raw: "{" }),
    400,
    "malformed_json",
  );
  assertError(
    await call(srv.url, "PATCH", `${base()}/${link.path}`, { body: { title: "x" } }),
    401,
    "unauthorized",
  );
  assertError(await admin("PATCH", `${base()}/nope-nope`, { title: "x" }), 404, "not_found");
  const after = await admin("GET", `${base()}?q=keep-me`);
  assert.equal(after.body.links[0].title, "Keep");
  assert.equal(after.body.links[0].updated_at, link.updated_at);
});

Deno.test("PATCH {active:false} still answers as before, and the link host stops serving", async () => {
  const path = await generateLink(srv.url, acme.key, "production", { title: "sdk" });
  const res = await admin("PATCH", `${base()}/${path}`, { active: false });
  assert.equal(res.status, 200);
  assert.equal(res.body.link.active, false);
  assert.equal(res.body.link.state, "inactive");
  assert.equal((await hit(path, UA.desktop)).status, 404);
});

Deno.test("archive: leaves the lists, answers 404 on the host, lookup still finds it, counters kept", async () => {
  const link = await create({
    title: "To archive",
    desktop_custom_redirect: { url: "https://a.example/" },
  });
  assert.equal((await hit(link.path, UA.desktop)).status, 302);
  await srv.views.flush();
  const archived = await admin("PATCH", `${base()}/${link.path}`, { archived: true });
  assert.equal(archived.body.link.state, "archived");
  assert.equal(archived.body.link.total_views, 1);
  assert.equal((await hit(link.path, UA.desktop)).status, 404);
  const lookup = await call(srv.url, "GET", `/api/v1/sdk/link/${link.path}`, {
    headers: sdkHeaders(acme.key, "production"),
  });
  assert.equal(lookup.status, 200);
  const listed = await admin("GET", `${base()}?q=To%20archive`);
  assert.deepEqual(listed.body.links, []);
  const onlyArchived = await admin("GET", `${base()}?q=To%20archive&state=archived`);
  assert.equal(onlyArchived.body.links[0].path, link.path);
  const back = await admin("PATCH", `${base()}/${link.path}`, { archived: false });
  assert.equal(back.body.link.state, "active");
  assert.equal(back.body.link.total_views, 1);
  assert.equal((await hit(link.path, UA.desktop)).status, 302);
});

Deno.test("DELETE …/links/:path removes link and counters, keeps feed envelopes byte for byte, FeedEvent.link null", async () => {
  const p = await createProject(srv.url, { name: "Feedy" });
  const token = await createFeedToken(srv.url, p.productionId);
  const link = await create({ title: "Doomed", path: "doomed-link" }, p.productionId);
  await ingest(srv.url, p.key, "production", [
    { type: "install", occurred_at: NOW, link_path: link.path },
  ]);
  assert.equal((await hit(link.path, UA.desktop)).status, 200);
  await srv.views.flush();
  // The stored envelopes (text columns), and what the feed and the history export answer.
  const envelopes = async () => ({
    feed: await srv.sql<{ body: string }[]>`
      select body from feed_events where environment_id = ${p.productionId} order by seq`,
    history: await srv.sql<{ body: string }[]>`
      select body from analytics_events where environment_id = ${p.productionId} order by id`,
    served: (await call(srv.url, "GET", `/api/v1/projects/${p.productionId}/event_stream`, {
      headers: { Authorization: `Bearer ${token.value}` },
    })).text,
    exported: (await call(
      srv.url,
      "GET",
      `/api/v1/projects/${p.productionId}/export?from=2026-03-10T00:00:00Z&to=2026-03-11T00:00:00Z`,
      { headers: adminHeaders },
    )).text,
  });
  const before = await envelopes();
  assert.equal(before.feed.length, 2);
  assert.equal(before.history.length, 2);
  assert.equal(before.exported.trim().split("\n").length, 2, before.exported);
  assert.match(before.served, /"path":"doomed-link"/);

  const res = await admin("DELETE", `${base(p.productionId)}/${link.path}`);
  assert.equal(res.status, 204);
  assert.equal(res.text, "");
  assert.deepEqual(await envelopes(), before);
  const counters = await srv.sql`select 1 from link_counters where link_id = ${link.id}`;
  assert.equal(counters.length, 0);
  assertError(
    await call(srv.url, "GET", `/api/v1/sdk/link/${link.path}`, {
      headers: sdkHeaders(p.key, "production"),
    }),
    404,
    "not_found",
  );
  assert.equal((await hit(link.path, UA.desktop)).status, 404);
  assertError(await admin("DELETE", `${base(p.productionId)}/${link.path}`), 404, "not_found");
  assertError(
    await admin("POST", base(p.productionId), { path: link.path }),
    400,
    "invalid_field",
    /^path:/,
  );

  const g = await gql(
    srv.url,
    `query($id: ID!) { eventFeed(projectId: $id, first: 10) { edges { node { type link { path } } } } }`,
    {
      variables: { id: String(p.productionId) },
      headers: { Authorization: `Bearer ${token.value}` },
    },
  );
  assert.equal(g.errors, undefined, JSON.stringify(g.errors));
  const nodes = g.data.eventFeed.edges.map((e: Json) => e.node);
  assert.equal(nodes.length, 2);
  for (const n of nodes) assert.equal(n.link, null);
  // REST serves the stored envelopes as they were.
  const feed = await call(srv.url, "GET", `/api/v1/projects/${p.productionId}/event_stream`, {
    headers: { Authorization: `Bearer ${token.value}` },
  });
  assert.equal(feed.body.events[0].link.path, link.path);
});

Deno.test("GET …/links pages with a cursor, stable while links are added, in every order", async () => {
  const p = await createProject(srv.url, { name: "Lister" });
  const paths: string[] = [];
  for (let i = 0; i < 7; i++) {
    paths.push(
      (await create({ title: `L${i}`, tags: [i % 2 ? "odd" : "even"] }, p.productionId)).path,
    );
  }
  const sdk = await generateLink(srv.url, p.key, "production", { title: "from sdk" });
  const list = (q: string) => admin("GET", `${base(p.productionId)}?${q}`);

  const first = await list("limit=3");
  assert.equal(first.status, 200, first.text);
  assert.deepEqual(first.body.links.map((l: Json) => l.path), [sdk, paths[6], paths[5]]);
  // Links added meanwhile do not shift the next pages.
  const added = await create({ title: "late" }, p.productionId);
  const second = await list(`limit=3&after=${first.body.next_after}`);
  assert.deepEqual(second.body.links.map((l: Json) => l.path), [paths[4], paths[3], paths[2]]);
  const third = await list(`limit=3&after=${second.body.next_after}`);
  assert.deepEqual(third.body.links.map((l: Json) => l.path), [paths[1], paths[0]]);
  assert.equal(third.body.next_after, null);
  assert.ok(!JSON.stringify([first.body, second.body, third.body]).includes(added.path));

  const asc = await list("order=created_at&limit=100");
  assert.deepEqual(asc.body.links.map((l: Json) => l.path), [...paths, sdk, added.path]);

  // Views order: views, then id.
  for (let i = 0; i < 3; i++) await hit(paths[2]!, UA.desktop);
  await hit(paths[4]!, UA.desktop);
  await srv.views.flush();
  const byViews = await list("order=-views&limit=2");
  assert.deepEqual(byViews.body.links.map((l: Json) => [l.path, l.total_views]), [
    [paths[2], 3],
    [paths[4], 1],
  ]);
  const byViews2 = await list(`order=-views&limit=2&after=${byViews.body.next_after}`);
  assert.deepEqual(byViews2.body.links.map((l: Json) => l.path), [added.path, sdk]);

  // updated_at: an edit moves a link to the front.
  await admin("PATCH", `${base(p.productionId)}/${paths[0]}`, { title: "touched" });
  const byUpdated = await list("order=-updated_at&limit=1");
  assert.equal(byUpdated.body.links[0].path, paths[0]);

  // Filters.
  const paths_ = (r: Json) => r.body.links.map((l: Json) => l.path).sort();
  assert.deepEqual(paths_(await list("tag=odd")), [paths[1], paths[3], paths[5]].sort());
  assert.deepEqual(paths_(await list("sdk_generated=true")), [sdk]);
  assert.equal((await list("sdk_generated=false")).body.links.length, 8);
  assert.deepEqual(paths_(await list("q=touch")), [paths[0]]);
  assert.deepEqual(paths_(await list(`q=${paths[3]!.slice(2, 8)}`)), [paths[3]]);
  await admin("PATCH", `${base(p.productionId)}/${paths[1]}`, {
    active: false,
    tracking_campaign: "c",
    tracking_source: "s",
    tracking_medium: "m",
  });
  assert.deepEqual(paths_(await list("state=inactive")), [paths[1]]);
  assert.deepEqual(paths_(await list("campaign=c&source=s&medium=m")), [paths[1]]);
  assert.equal((await list("campaign=c&source=other")).body.links.length, 0);
  assert.equal((await list("state=active")).body.links.length, 8);

  // Bad input.
  assertError(await list("limit=0"), 400, "invalid_limit");
  assertError(await list("limit=101"), 400, "invalid_limit");
  assertError(await list("limit=x"), 400, "invalid_limit");
  assertError(await list("after=nonsense"), 400, "bad_cursor");
  assertError(await list(`order=views&after=${first.body.next_after}`), 400, "bad_cursor");
  assertError(await list("order=title"), 400, "invalid_field", /^order:/);
  assertError(await list("state=gone"), 400, "invalid_field", /^state:/);
  assertError(await list("sdk_generated=maybe"), 400, "invalid_field", /^sdk_generated:/);
  assertError(await call(srv.url, "GET", base(p.productionId)), 401, "unauthorized");
  assertError(await admin("GET", "/api/v1/projects/99999/links"), 404, "not_found");
});

Deno.test("GET …/links in ascending time orders resumes right after the cursor's link", async () => {
  // Cursors carry the key with its microseconds: one read back at milliseconds would start the
  // next ascending page at the cursor's own link again.
  const p = await createProject(srv.url, { name: "Ascending" });
  const paths: string[] = [];
  for (let i = 0; i < 5; i++) paths.push((await create({ title: `A${i}` }, p.productionId)).path);
  for (const order of ["created_at", "updated_at"]) {
    const seen: string[] = [];
    let after = "";
    for (let pages = 0; pages < 10; pages++) {
      const res = await admin(
        "GET",
        `${base(p.productionId)}?order=${order}&limit=2&after=${after}`,
      );
      assert.equal(res.status, 200, res.text);
      seen.push(...res.body.links.map((l: Json) => l.path));
      if (res.body.next_after === null) break;
      after = res.body.next_after;
    }
    assert.deepEqual(seen, paths, order);
  }
});
