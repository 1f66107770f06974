// Click ids at the link host (CONTRACT.md, "Attribution"; docs/deep-links.md, "Click ids"): every
// counted view mints one, stored in its envelope as attribution.click_id and read back by
// ClickIds to the link, the environment and the view's time; the Play Store referrer, the URL
// the iOS page copies and (with pass_click_id) web destinations carry it; hits that are no view
// get none. pass_click_id is managed like the link's other booleans (REST, GraphQL, CSV).
import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { ClickIds } from "../services/attribution/click_ids.ts";
import { gql, type Json } from "./helpers/graphql.ts";
import { ingest } from "./helpers/sdk.ts";
import { getPage, postForm, signInOverHttp } from "./helpers/dashboard.ts";
import { ManualClock } from "./helpers/clock.ts";
import {
  adminHeaders,
  call,
  createProject,
  CURSOR_SECRET,
  startTestServer,
} from "./helpers/server.ts";

const clock = new ManualClock("2026-03-01T09:30:15.123Z");
const srv = await startTestServer({ clock });
Deno.test.afterAll(() => srv.close());
const clickIds = new ClickIds(CURSOR_SECRET);

const UA = {
  ios:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
  android:
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36",
  desktop:
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
  slack: "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
  bot: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
};
const ID = /^[A-Za-z0-9_-]{42}$/;

const project = await createProject(srv.url, { name: "Clicks" });
const links = `/api/v1/projects/${project.productionId}/links`;
{
  const res = await call(srv.url, "PATCH", `/api/v1/admin/projects/${project.hashid}`, {
    headers: adminHeaders,
    body: {
      apps: {
        ios: {
          team_id: "ABCDE12345",
          bundle_id: "com.acme.app",
          app_store_id: "123",
          scheme: "acme",
        },
        android: {
          package: "com.acme.app",
          sha256_cert_fingerprints: [Array.from({ length: 32 }, () => "5E").join(":")],
        },
      },
    },
  });
  assert.equal(res.status, 200, res.text);
}

async function createLink(body: Record<string, unknown>): Promise<Json> {
  const res = await call(srv.url, "POST", links, { headers: adminHeaders, body });
  assert.equal(res.status, 201, res.text);
  return res.body.link;
}

function hit(path: string, userAgent: string, init: RequestInit = {}) {
  return call(srv.url, init.method ?? "GET", path.startsWith("/") ? path : `/${path}`, {
    headers: { "User-Agent": userAgent, ...(init.headers as Record<string, string>) },
    ...(typeof init.body === "string" ? { raw: init.body } : {}),
  });
}

/** The stored view envelopes of a link, oldest first. */
async function views(path: string): Promise<Json[]> {
  await srv.views.flush();
  const rows = await srv.sql<{ body: string }[]>`
    select e.body from analytics_events e join links l on l.id = e.link_id
    where l.path = ${path} and e.type = 'view' order by e.id`;
  return rows.map((r) => JSON.parse(r.body));
}

/** The click id of a URL's query (null: none). */
function clickIdOf(url: string): string | null {
  return new URL(url).searchParams.get("click_id");
}

Deno.test("a redirect's view carries a click id that reads back to its link, environment and time", async () => {
  const link = await createLink({ desktop_custom_redirect: { url: "https://example.com/d" } });
  clock.advance(60_000);
  const at = clock.now();
  const res = await hit(link.path, UA.desktop);
  assert.equal(res.status, 302);
  // Without pass_click_id the destination is as stored.
  assert.equal(res.headers.get("location"), "https://example.com/d");
  const [view] = await views(link.path);
  assert.match(view.attribution.click_id, ID);
  assert.deepEqual(clickIds.read(view.attribution.click_id), {
    environmentId: project.productionId,
    linkId: link.id,
    clickedAt: at,
  });
  // The view happened when its click id says.
  assert.equal(new Date(view.occurred_at).getTime(), at.getTime());

  // Each view its own id; another instance's key reads none of them.
  await hit(link.path, UA.desktop);
  const both = await views(link.path);
  assert.equal(both.length, 2);
  assert.notEqual(both[0].attribution.click_id, both[1].attribution.click_id);
  assert.equal(
    new ClickIds("another-secret-0123456789abcdefghij").read(both[1].attribution.click_id),
    null,
  );
});

Deno.test("the Play Store referrer carries click_id beside link_path", async () => {
  const link = await createLink({ tracking_campaign: "spring sale" });
  const res = await hit(link.path, UA.android);
  assert.equal(res.status, 302);
  const play = new URL(res.headers.get("location")!);
  assert.equal(play.origin + play.pathname, "https://play.google.com/store/apps/details");
  // The referrer as the Install Referrer API hands it to the app: a query string.
  const referrer = new URLSearchParams(play.searchParams.get("referrer")!);
  assert.deepEqual([...referrer.keys()], ["link_path", "click_id", "utm_campaign"]);
  assert.equal(referrer.get("link_path"), link.path);
  assert.equal(referrer.get("utm_campaign"), "spring sale");
  const [view] = await views(link.path);
  assert.equal(referrer.get("click_id"), view.attribution.click_id);
  assert.equal(clickIds.read(referrer.get("click_id"))?.linkId, link.id);
});

Deno.test("the iOS page copies the link's URL with the view's click_id", async () => {
  const link = await createLink({ ios_custom_redirect: { open_app_if_installed: true } });
  const res = await hit(link.path, UA.ios);
  assert.equal(res.status, 200);
  const copied = res.text.match(/data-copy="([^"]*)"/)![1]!.replaceAll("&amp;", "&");
  const [view] = await views(link.path);
  assert.equal(
    copied,
    `https://lnk.example.test/${link.path}?click_id=${view.attribution.click_id}`,
  );
  // The page's own og:url and the app's scheme URL stay the link's.
  assert.doesNotMatch(res.text, /acme:\/\/[^"]*click_id/);
});

Deno.test("pass_click_id adds click_id to web destinations, after forward_query and append_utm; off, nothing is added", async () => {
  // A plain link (no rules, no forwarding): the destination's own query stays, click_id joins it.
  const plain = await createLink({
    desktop_custom_redirect: { url: "https://shop.example/p?x=1&y=a%20b" },
    pass_click_id: true,
  });
  assert.equal(plain.pass_click_id, true);
  const res = await hit(plain.path, UA.desktop);
  const location = new URL(res.headers.get("location")!);
  const [view] = await views(plain.path);
  assert.equal(
    location.href,
    `https://shop.example/p?x=1&y=a%20b&click_id=${view.attribution.click_id}`,
  );

  // With forwarding and UTM: a click_id in the visitor's query is replaced by the view's own.
  const routed = await createLink({
    desktop_custom_redirect: { url: "https://shop.example/p" },
    tracking_campaign: "spring",
    forward_query: true,
    append_utm: true,
    pass_click_id: true,
  });
  const forwarded = await hit(`/${routed.path}?ref=news&click%5Fid=forged`, UA.desktop);
  const out = new URL(forwarded.headers.get("location")!);
  const [routedView] = await views(routed.path);
  assert.deepEqual([...out.searchParams], [
    ["ref", "news"],
    ["utm_campaign", "spring"],
    ["click_id", routedView.attribution.click_id],
  ]);

  // iOS and Android custom redirects are web destinations too.
  const phones = await createLink({
    ios_custom_redirect: { url: "https://m.example/ios" },
    android_custom_redirect: { url: "https://m.example/android" },
    pass_click_id: true,
  });
  for (const ua of [UA.ios, UA.android]) {
    const r = await hit(phones.path, ua);
    assert.match(clickIdOf(r.headers.get("location")!)!, ID);
  }

  // Off (the default): nothing added, neither on a plain link nor with forwarding.
  const off = await createLink({ desktop_custom_redirect: { url: "https://shop.example/off" } });
  assert.equal(off.pass_click_id, false);
  assert.equal(
    (await hit(off.path, UA.desktop)).headers.get("location"),
    "https://shop.example/off",
  );
  const offRouted = await createLink({
    desktop_custom_redirect: { url: "https://shop.example/off" },
    forward_query: true,
  });
  assert.equal(
    (await hit(`/${offRouted.path}?a=1`, UA.desktop)).headers.get("location"),
    "https://shop.example/off?a=1",
  );
  // The view still has its id: the app may get it another way.
  assert.match((await views(off.path))[0].attribution.click_id, ID);
});

Deno.test("hits that are no view get no click id: crawlers, known bots, HEAD, the password page", async () => {
  const link = await createLink({
    desktop_custom_redirect: { url: "https://shop.example/x" },
    pass_click_id: true,
  });
  const crawler = await hit(link.path, UA.slack);
  assert.equal(crawler.status, 200);
  assert.doesNotMatch(crawler.text, /click_id/);
  const bot = await hit(link.path, UA.bot);
  assert.equal(bot.headers.get("location"), "https://shop.example/x");
  const head = await hit(link.path, UA.desktop, { method: "HEAD" });
  assert.equal(head.headers.get("location"), "https://shop.example/x");
  const android = await createLink({});
  const headPlay = await hit(android.path, UA.android, { method: "HEAD" });
  const referrer = new URL(headPlay.headers.get("location")!).searchParams.get("referrer")!;
  assert.equal(new URLSearchParams(referrer).get("click_id"), null);
  assert.deepEqual(await views(link.path), []);
  assert.deepEqual(await views(android.path), []);

  // A password link: the page has no id; the right password counts the view and mints one.
  const locked = await createLink({
    desktop_custom_redirect: { url: "https://shop.example/locked" },
    pass_click_id: true,
    password: "open sesame 42",
  });
  const page = await hit(locked.path, UA.desktop);
  assert.equal(page.status, 200);
  assert.doesNotMatch(page.text, /click_id/);
  const wrong = await hit(locked.path, UA.desktop, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: "password=nope",
  });
  assert.equal(wrong.status, 401);
  assert.doesNotMatch(wrong.text, /click_id/);
  const right = await hit(locked.path, UA.desktop, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ password: "open sesame 42" }).toString(),
  });
  assert.equal(right.status, 302);
  const [view] = await views(locked.path);
  assert.equal(clickIdOf(right.headers.get("location")!), view.attribution.click_id);
});

Deno.test("pass_click_id is read and written by REST, GraphQL and the CSV import and export", async () => {
  const link = await createLink({ title: "Managed" });
  const got = await call(srv.url, "GET", `${links}?q=${link.path}`, { headers: adminHeaders });
  assert.equal(got.status, 200, got.text);
  assert.equal(got.body.links[0].pass_click_id, false);
  const patched = await call(srv.url, "PATCH", `${links}/${link.path}`, {
    headers: adminHeaders,
    body: { pass_click_id: true },
  });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.body.link.pass_click_id, true);
  const bad = await call(srv.url, "PATCH", `${links}/${link.path}`, {
    headers: adminHeaders,
    body: { pass_click_id: "yes" },
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, "invalid_field");
  assert.match(bad.body.error.message, /^pass_click_id/);

  const admin = { headers: adminHeaders };
  const read = await gql(
    srv.url,
    `query($id: ID!, $path: String!) { environment(projectId: $id) {
      link(path: $path) { passClickId } } }`,
    { ...admin, variables: { id: project.productionId, path: link.path } },
  );
  assert.equal(read.errors, undefined, JSON.stringify(read.errors));
  assert.equal(read.data.environment.link.passClickId, true);
  const updated = await gql(
    srv.url,
    `mutation($id: ID!, $path: String!) {
      updateLink(projectId: $id, path: $path, input: { passClickId: false }) { passClickId } }`,
    { ...admin, variables: { id: project.productionId, path: link.path } },
  );
  assert.equal(updated.errors, undefined, JSON.stringify(updated.errors));
  assert.equal(updated.data.updateLink.passClickId, false);
  const created = await gql(
    srv.url,
    `mutation($id: ID!) { createLink(projectId: $id, input: { passClickId: true }) {
      path passClickId } }`,
    { ...admin, variables: { id: project.productionId } },
  );
  assert.equal(created.errors, undefined, JSON.stringify(created.errors));
  assert.equal(created.data.createLink.passClickId, true);

  // CSV: imported, then exported with the other booleans.
  const imported = await call(srv.url, "POST", `${links}/import`, {
    headers: { ...adminHeaders, "Content-Type": "text/csv" },
    raw: "path,desktop_url,pass_click_id\ncsv-click-on,https://e.example/a,true\n" +
      "csv-click-off,https://e.example/b,\n",
  });
  assert.equal(imported.status, 201, imported.text);
  const exported = await call(srv.url, "GET", `${links}/export`, { headers: adminHeaders });
  assert.equal(exported.status, 200);
  const rows = parse(exported.text, { columns: true }) as Record<string, string>[];
  const cell = (path: string) => rows.find((r) => r.path === path)!.pass_click_id;
  // As every boolean column of the export: 1 for true, empty for false (absent on import).
  assert.equal(cell("csv-click-on"), "1");
  assert.equal(cell("csv-click-off"), "");
  assert.equal(cell(created.data.createLink.path), "1");
});

Deno.test("the app sends the referrer's click id back: its install counts for the link, within the project's window", async () => {
  const link = await createLink({ title: "From the store" });
  const other = await createLink({ title: "Elsewhere" });
  const res = await hit(link.path, UA.android);
  const referrer = new URLSearchParams(
    new URL(res.headers.get("location")!).searchParams.get("referrer")!,
  );
  const clickId = referrer.get("click_id")!;
  const [view] = await views(link.path);
  clock.advance(3 * 86_400_000);
  // The click id wins over a link_path that says otherwise.
  const at = clock.now().toISOString();
  await ingest(srv.url, project.key, "production", [
    {
      id: "install-1",
      type: "install",
      occurred_at: at,
      link_path: other.path,
      attribution: { click_id: clickId },
      user: { id: "user-1" },
    },
  ]);
  const [install] = await srv.sql<{ body: string }[]>`
    select body from analytics_events where type = 'install' and body::jsonb->'user'->>'id' = 'user-1'`;
  const envelope = JSON.parse(install!.body);
  assert.deepEqual(envelope.attribution, {
    click_id: clickId,
    method: "click_id",
    link_path: link.path,
    clicked_at: view.occurred_at,
  });
  assert.equal(envelope.link.path, link.path);

  // A window of 1 day: the same click, 3 days old, attributes nothing; link_path decides.
  const patched = await call(srv.url, "PATCH", `/api/v1/admin/projects/${project.hashid}`, {
    headers: adminHeaders,
    body: { attribution_window_days: 1 },
  });
  assert.equal(patched.status, 200, patched.text);
  await ingest(srv.url, project.key, "production", [
    {
      id: "install-2",
      type: "install",
      occurred_at: at,
      link_path: other.path,
      attribution: { click_id: clickId },
    },
  ]);
  const [late] = await srv.sql<{ body: string }[]>`
    select e.body from analytics_events e join links l on l.id = e.link_id
    where e.type = 'install' and l.path = ${other.path}`;
  const lateEnvelope = JSON.parse(late!.body);
  assert.equal(lateEnvelope.attribution.method, "link_path");
  assert.equal(lateEnvelope.attribution.click_id, clickId);
  assert.equal(lateEnvelope.link.path, other.path);
  await call(srv.url, "PATCH", `/api/v1/admin/projects/${project.hashid}`, {
    headers: adminHeaders,
    body: { attribution_window_days: 30 },
  });
});

Deno.test("dashboard: the link form's click id box sets pass_click_id, and the link's page says so", async () => {
  const client = await signInOverHttp(srv.url);
  const base = `/dashboard/environments/${project.productionId}/links`;
  const created = await postForm(srv.url, base, client, {
    _csrf: client.csrf,
    path: "dash-click",
    desktop_url: "https://shop.example/dash",
    pass_click_id: "on",
  });
  assert.equal(created.status, 303, created.text);
  const page = await getPage(srv.url, `${base}/dash-click`, client);
  assert.match(page.text, /adds the click id to web addresses/);
  const form = await getPage(srv.url, `${base}/dash-click/edit`, client);
  assert.match(
    form.text,
    /<input type="checkbox" id="f-pass_click_id" name="pass_click_id" value="on" checked/,
  );
  const r = await hit("dash-click", UA.desktop);
  assert.match(clickIdOf(r.headers.get("location")!)!, ID);

  // Unticked on the edit form: off.
  const edited = await postForm(srv.url, `${base}/dash-click/edit`, client, {
    _csrf: client.csrf,
    desktop_url: "https://shop.example/dash",
  });
  assert.equal(edited.status, 303, edited.text);
  assert.equal(
    (await hit("dash-click", UA.desktop)).headers.get("location"),
    "https://shop.example/dash",
  );
});
