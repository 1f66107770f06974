// PATCH/GET /api/v1/admin/projects/:hashid with link_domain and apps: validation, uniqueness,
// and access_path derived from the project's domain wherever a link is shown.
import assert from "node:assert/strict";
import { readOk } from "./helpers/feed.ts";
import { gql } from "./helpers/graphql.ts";
import { generateLinkCall, ingest, type Json, sdkHeaders } from "./helpers/sdk.ts";
import {
  adminHeaders,
  assertError,
  call,
  createFeedToken,
  createProject,
  LINK_BASE_URL,
  startTestServer,
} from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

const FINGERPRINT = Array.from({ length: 32 }, (_, i) => i.toString(16).padStart(2, "0"))
  .join(":");
const APPS = {
  ios: {
    team_id: "ABCDE12345",
    bundle_id: "com.acme.app",
    app_store_id: "123456789",
    scheme: "acme",
  },
  android: { package: "com.acme.app", sha256_cert_fingerprints: [FINGERPRINT], scheme: "acme" },
};

function patch(hashid: string, body: unknown) {
  return call(srv.url, "PATCH", `/api/v1/admin/projects/${hashid}`, {
    headers: adminHeaders,
    body,
  });
}

async function getProject(hashid: string): Promise<Json> {
  const res = await call(srv.url, "GET", `/api/v1/admin/projects/${hashid}`, {
    headers: adminHeaders,
  });
  assert.equal(res.status, 200, res.text);
  return res.body.project;
}

Deno.test("PATCH /admin/projects/:hashid sets link_domain and apps, normalised; GET shows them", async () => {
  const p = await createProject(srv.url, { name: "Settings" });
  const before = await getProject(p.hashid);
  assert.equal(before.link_domain, null);
  assert.deepEqual(before.apps, {});

  const res = await patch(p.hashid, {
    link_domain: "Go.Settings.Example.",
    apps: {
      ...APPS,
      android: { ...APPS.android, sha256_cert_fingerprints: [FINGERPRINT.toLowerCase()] },
    },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.project.link_domain, "go.settings.example");
  assert.deepEqual(res.body.project.apps, {
    ios: APPS.ios,
    android: { ...APPS.android, sha256_cert_fingerprints: [FINGERPRINT.toUpperCase()] },
  });
  assert.equal(res.body.project.project_key, undefined);
  assert.deepEqual(await getProject(p.hashid), res.body.project);
  // The list shows each project as its own route does: link_domain and apps included.
  const listed = await call(srv.url, "GET", "/api/v1/admin/projects?q=Settings", {
    headers: adminHeaders,
  });
  assert.equal(listed.status, 200, listed.text);
  assert.deepEqual(
    listed.body.projects.find((l: Json) => l.id === p.hashid),
    res.body.project,
  );

  // One platform replaced, the other kept; null removes; an absent key changes nothing.
  const ios2 = { team_id: "ZYXWV98765", bundle_id: "com.acme.other" };
  const res2 = await patch(p.hashid, { apps: { ios: ios2 } });
  assert.equal(res2.status, 200, res2.text);
  assert.deepEqual(res2.body.project.apps.ios, ios2);
  assert.equal(res2.body.project.apps.android.package, "com.acme.app");
  assert.equal(res2.body.project.link_domain, "go.settings.example");
  const res3 = await patch(p.hashid, { link_domain: null, apps: { android: null } });
  assert.equal(res3.status, 200, res3.text);
  assert.equal(res3.body.project.link_domain, null);
  assert.deepEqual(res3.body.project.apps, { ios: ios2 });
});

const BAD_SETTINGS: [string, unknown, RegExp][] = [
  ["fingerprint of 31 bytes", {
    apps: { android: { ...APPS.android, sha256_cert_fingerprints: [FINGERPRINT.slice(3)] } },
  }, /^apps\.android\.sha256_cert_fingerprints\[0\]: /],
  ["fingerprint without colons", {
    apps: {
      android: { ...APPS.android, sha256_cert_fingerprints: [FINGERPRINT.replaceAll(":", "")] },
    },
  }, /^apps\.android\.sha256_cert_fingerprints\[0\]: /],
  ["no fingerprint", {
    apps: { android: { ...APPS.android, sha256_cert_fingerprints: [] } },
  }, /^apps\.android\.sha256_cert_fingerprints: /],
  [
    "javascript: scheme on iOS",
    { apps: { ios: { ...APPS.ios, scheme: "javascript" } } },
    /^apps\.ios\.scheme: /,
  ],
  [
    "javascript: scheme with colon",
    { apps: { ios: { ...APPS.ios, scheme: "javascript:" } } },
    /^apps\.ios\.scheme: /,
  ],
  [
    "https scheme on Android",
    { apps: { android: { ...APPS.android, scheme: "HTTPS" } } },
    /^apps\.android\.scheme: /,
  ],
  [
    "scheme starting with a digit",
    { apps: { android: { ...APPS.android, scheme: "1app" } } },
    /^apps\.android\.scheme: /,
  ],
  ["javascript: link domain", { link_domain: "javascript:alert(1)" }, /^link_domain: /],
  ["link domain with a path", { link_domain: "go.acme.com/x" }, /^link_domain: /],
  ["link domain with a port", { link_domain: "go.acme.com:443" }, /^link_domain: /],
  ["link domain an IP address", { link_domain: "10.0.0.1" }, /^link_domain: /],
  ["link domain of one label", { link_domain: "localhost" }, /^link_domain: /],
  [
    "link domain the default host",
    { link_domain: new URL(LINK_BASE_URL).hostname },
    /^link_domain: /,
  ],
  [
    "team id of 9 characters",
    { apps: { ios: { ...APPS.ios, team_id: "ABCDE1234" } } },
    /^apps\.ios\.team_id: /,
  ],
  [
    "team id in lower case",
    { apps: { ios: { ...APPS.ios, team_id: "abcde12345" } } },
    /^apps\.ios\.team_id: /,
  ],
  [
    "bundle id of one label",
    { apps: { ios: { ...APPS.ios, bundle_id: "acme" } } },
    /^apps\.ios\.bundle_id: /,
  ],
  [
    "bundle id with a slash",
    { apps: { ios: { ...APPS.ios, bundle_id: "com.acme/app" } } },
    /^apps\.ios\.bundle_id: /,
  ],
  [
    "App Store id not digits",
    { apps: { ios: { ...APPS.ios, app_store_id: "id123" } } },
    /^apps\.ios\.app_store_id: /,
  ],
  [
    "package with a hyphen",
    { apps: { android: { ...APPS.android, package: "com.ac-me.app" } } },
    /^apps\.android\.package: /,
  ],
  [
    "unknown app field",
    { apps: { ios: { ...APPS.ios, url: "javascript:alert(1)" } } },
    /^apps\.ios: /,
  ],
  ["unknown platform", { apps: { windows: {} } }, /^apps: /],
  [
    "ios without team id",
    { apps: { ios: { bundle_id: "com.acme.app" } } },
    /^apps\.ios\.team_id: /,
  ],
];

Deno.test("PATCH /admin/projects/:hashid: bad settings are 400 invalid_field naming the field, and change nothing", async () => {
  const p = await createProject(srv.url, { name: "Bad settings" });
  const good = await patch(p.hashid, { link_domain: "go.bad-settings.example", apps: APPS });
  assert.equal(good.status, 200, good.text);
  const before = await getProject(p.hashid);
  for (const [what, body, field] of BAD_SETTINGS) {
    const res = await patch(p.hashid, { name: "Renamed", ...(body as object) });
    assertError(res, 400, "invalid_field", field);
    assert.deepEqual(await getProject(p.hashid), before, what);
  }
});

Deno.test("PATCH /admin/projects/:hashid: a link domain already used is 400 invalid_field, also under concurrency", async () => {
  const a = await createProject(srv.url, { name: "Dup A" });
  const b = await createProject(srv.url, { name: "Dup B" });
  assert.equal((await patch(a.hashid, { link_domain: "go.dup.example" })).status, 200);
  const res = await patch(b.hashid, { link_domain: "GO.DUP.EXAMPLE" });
  assertError(res, 400, "invalid_field", /^link_domain: .*another project/);
  assert.equal((await getProject(b.hashid)).link_domain, null);

  // Two projects claiming one free domain at the same moment: exactly one wins.
  const c = await createProject(srv.url, { name: "Race C" });
  const d = await createProject(srv.url, { name: "Race D" });
  const both = await Promise.all([
    patch(c.hashid, { link_domain: "go.race.example" }),
    patch(d.hashid, { link_domain: "go.race.example" }),
  ]);
  assert.deepEqual(both.map((r) => r.status).sort(), [200, 400]);
  const loser = both.find((r) => r.status === 400)!;
  assertError(loser, 400, "invalid_field", /^link_domain: /);
});

Deno.test("PATCH /admin/projects/:hashid: unknown project is 404, wrong token 401", async () => {
  assertError(await patch("nosuchproject", { link_domain: "go.x.example" }), 404, "not_found");
  const res = await call(srv.url, "PATCH", "/api/v1/admin/projects/x", {
    body: { link_domain: "go.x.example" },
  });
  assertError(res, 401, "unauthorized");
});

Deno.test("access_path follows the project's link domain everywhere a link is read; feed envelopes keep the one of their recording", async () => {
  const p = await createProject(srv.url, { name: "Moving", enterprise: true });
  const token = await createFeedToken(srv.url, p.productionId);
  const created = await generateLinkCall(srv.url, p.key, "production", { title: "Moving" });
  assert.equal(created.status, 200, created.text);
  const url: string = created.body.link;
  const path = new URL(url).pathname.slice(1);
  assert.equal(url, `${LINK_BASE_URL}/${path}`);
  await ingest(srv.url, p.key, "production", [
    { type: "open", occurred_at: new Date().toISOString(), link_path: path },
  ]);

  assert.equal((await patch(p.hashid, { link_domain: "go.moving.example" })).status, 200);
  const moved = `https://go.moving.example/${path}`;

  const lookup = await call(srv.url, "GET", `/api/v1/sdk/link/${path}`, {
    headers: sdkHeaders(p.key, "production"),
  });
  assert.equal(lookup.body.link.access_path, moved);
  const again = await generateLinkCall(srv.url, p.key, "production", {});
  assert.match(again.body.link, /^https:\/\/go\.moving\.example\/[A-Za-z0-9]{10}$/);
  const patched = await call(srv.url, "PATCH", `/api/v1/projects/${p.productionId}/links/${path}`, {
    headers: adminHeaders,
    body: { active: true },
  });
  assert.equal(patched.body.link.access_path, moved);
  const graph = await gql(srv.url, `query($p: String!) { link(path: $p) { accessPath } }`, {
    variables: { p: path },
    headers: sdkHeaders(p.key, "production"),
  });
  assert.equal(graph.data.link.accessPath, moved);
  const generated = await gql(
    srv.url,
    `mutation { generateLink(input: {title: "g"}) { url link { accessPath } } }`,
    { headers: sdkHeaders(p.key, "production") },
  );
  assert.match(generated.data.generateLink.url, /^https:\/\/go\.moving\.example\//);
  assert.equal(generated.data.generateLink.url, generated.data.generateLink.link.accessPath);

  await ingest(srv.url, p.key, "production", [
    { type: "open", occurred_at: new Date().toISOString(), link_path: path },
  ]);
  const page = await readOk(srv.url, p.productionId, token.value);
  assert.deepEqual(
    page.events.map((e: Json) => e.link.access_path),
    [url, moved],
  );
  // GraphQL's FeedEvent.link is the Link itself, read now: the current domain.
  const feed = await gql(
    srv.url,
    `query($id: ID!) { eventFeed(projectId: $id) { edges { node { link { accessPath } } } } }`,
    {
      variables: { id: String(p.productionId) },
      headers: { Authorization: `Bearer ${token.value}` },
    },
  );
  assert.deepEqual(
    feed.data.eventFeed.edges.map((e: Json) => e.node.link.accessPath),
    [moved, moved],
  );
});
