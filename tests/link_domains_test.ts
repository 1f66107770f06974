// The link host by Host: each project's links only on its own domain, domain-less projects on
// the default host, and the two association files in Apple's and Google's formats: on a
// project's own domain for its apps, on the shared default host only for the owner the instance
// admin names (DEFAULT_HOST_APPS_PROJECT).
import assert from "node:assert/strict";
import { z } from "zod";
import { callOnHost } from "./helpers/host.ts";
import { generateLink } from "./helpers/sdk.ts";
import {
  adminHeaders,
  call,
  createProject,
  LINK_BASE_URL,
  serveApp,
  startTestServer,
} from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

const DEFAULT_HOST = new URL(LINK_BASE_URL).host;
const AASA = "/.well-known/apple-app-site-association";
const ASSETLINKS = "/.well-known/assetlinks.json";

function fingerprint(byte: string) {
  return Array.from({ length: 32 }, () => byte).join(":");
}

async function projectWith(name: string, settings: Record<string, unknown>) {
  const p = await createProject(srv.url, { name });
  const res = await call(srv.url, "PATCH", `/api/v1/admin/projects/${p.hashid}`, {
    headers: adminHeaders,
    body: settings,
  });
  assert.equal(res.status, 200, res.text);
  const path = await generateLink(srv.url, p.key, "production", {
    title: name,
    desktop_custom_redirect: { url: `https://example.com/${name}` },
  });
  return { ...p, path };
}

const a = await projectWith("alpha", {
  link_domain: "go.alpha.test",
  apps: {
    ios: { team_id: "AAAAA11111", bundle_id: "com.alpha.app", scheme: "alpha" },
    android: { package: "com.alpha.app", sha256_cert_fingerprints: [fingerprint("AA")] },
  },
});
const b = await projectWith("beta", {
  link_domain: "go.beta.test",
  apps: {
    ios: { team_id: "BBBBB22222", bundle_id: "com.beta.app" },
    android: { package: "com.beta.app", sha256_cert_fingerprints: [fingerprint("BB")] },
  },
});
const c = await projectWith("gamma", {
  apps: { android: { package: "com.gamma.app", sha256_cert_fingerprints: [fingerprint("CC")] } },
});
const d = await projectWith("delta", { link_domain: "go.delta.test" });

// Apple, "Supporting associated domains": applinks.details[] with appIDs and components (iOS
// 13+), appID and paths (iOS 12 and earlier); an app ID is "<team id>.<bundle id>".
const appleSchema = z.strictObject({
  applinks: z.strictObject({
    apps: z.array(z.never()).length(0),
    details: z.array(z.strictObject({
      appIDs: z.array(z.string().regex(/^[A-Z0-9]{10}\.[A-Za-z0-9.-]+$/)).min(1),
      appID: z.string().regex(/^[A-Z0-9]{10}\.[A-Za-z0-9.-]+$/),
      components: z.array(
        z.strictObject({ "/": z.string(), comment: z.string().optional() }),
      ).min(1),
      paths: z.array(z.string()).min(1),
    })).min(1),
  }),
});

// Google, "Declare website associations": a list of statements.
const googleSchema = z.array(z.strictObject({
  relation: z.tuple([z.literal("delegate_permission/common.handle_all_urls")]),
  target: z.strictObject({
    namespace: z.literal("android_app"),
    package_name: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/),
    sha256_cert_fingerprints: z.array(z.string().regex(/^[0-9A-F]{2}(:[0-9A-F]{2}){31}$/)).min(1),
  }),
})).min(1);

function associationOf(host: string, path: string) {
  return associationOfOn(srv.url, host, path);
}

async function associationOfOn(base: string, host: string, path: string) {
  const res = await callOnHost(base, host, path);
  assert.equal(res.status, 200, `${host}${path}: ${res.text}`);
  assert.equal(res.headers["content-type"], "application/json");
  assert.equal(res.headers["location"], undefined);
  assert.match(res.headers["cache-control"]!, /^public, max-age=\d+$/);
  assert.match(res.headers["etag"]!, /^"[^"]+"$/);
  return { body: JSON.parse(res.text), etag: res.headers["etag"]! };
}

Deno.test("GET /.well-known/apple-app-site-association lists only the apps of the project owning the host, in Apple's format", async () => {
  const alpha = appleSchema.parse((await associationOf("go.alpha.test", AASA)).body);
  assert.deepEqual(alpha.applinks.details.map((x) => x.appIDs), [["AAAAA11111.com.alpha.app"]]);
  assert.deepEqual(alpha.applinks.details[0]!.components, [
    { "/": "*", comment: "every link on this host" },
  ]);
  assert.deepEqual(alpha.applinks.details[0]!.paths, ["*"]);
  // The port of the Host header does not matter, nor its case.
  const beta = appleSchema.parse((await associationOf("GO.Beta.test:443", AASA)).body);
  assert.deepEqual(beta.applinks.details.map((x) => x.appID), ["BBBBB22222.com.beta.app"]);
  // Nothing for iOS on the default host (gamma has only Android) nor on delta's domain.
  for (const host of [DEFAULT_HOST, "go.delta.test"]) {
    const res = await callOnHost(srv.url, host, AASA);
    assert.equal(res.status, 404, host);
    assert.equal(res.headers["content-type"], "application/json");
    assert.equal(JSON.parse(res.text).error.code, "not_found");
  }
});

Deno.test("GET /.well-known/assetlinks.json lists only the apps of the project owning the host, in Google's format", async () => {
  const alpha = googleSchema.parse((await associationOf("go.alpha.test", ASSETLINKS)).body);
  assert.deepEqual(alpha.map((s) => s.target.package_name), ["com.alpha.app"]);
  assert.deepEqual(alpha[0]!.target.sha256_cert_fingerprints, [fingerprint("AA")]);
  const beta = googleSchema.parse((await associationOf("go.beta.test", ASSETLINKS)).body);
  assert.deepEqual(beta.map((s) => s.target.package_name), ["com.beta.app"]);
  // The default host is shared by every project without a link domain: unless the instance
  // admin names its owner, it declares no app, not even gamma's (its only one with apps).
  for (const host of [DEFAULT_HOST, "localhost:8000", "127.0.0.1"]) {
    const res = await callOnHost(srv.url, host, ASSETLINKS);
    assert.equal(res.status, 404, host);
    assert.equal(JSON.parse(res.text).error.code, "not_found");
  }
  assert.equal((await callOnHost(srv.url, "go.delta.test", ASSETLINKS)).status, 404);
});

Deno.test("association files on the shared default host: only the owner the instance admin names", async () => {
  // Two more projects without a link domain, each with both apps: on the default host today
  // each one's app would take the other's links.
  const eta = await projectWith("eta", {
    apps: {
      ios: { team_id: "EEEEE55555", bundle_id: "com.eta.app" },
      android: { package: "com.eta.app", sha256_cert_fingerprints: [fingerprint("EE")] },
    },
  });
  await projectWith("theta", {
    apps: {
      ios: { team_id: "TTTTT66666", bundle_id: "com.theta.app" },
      android: { package: "com.theta.app", sha256_cert_fingerprints: [fingerprint("DD")] },
    },
  });
  for (const file of [AASA, ASSETLINKS]) {
    assert.equal((await callOnHost(srv.url, DEFAULT_HOST, file)).status, 404, file);
  }

  // An instance whose admin names eta the default host's owner declares eta's apps alone
  // there (and on localhost and the service's address, the same host), and nobody else's.
  const owned = serveApp(srv.db, { config: { DEFAULT_HOST_APPS_PROJECT: eta.hashid } });
  try {
    for (const host of [DEFAULT_HOST, "localhost", "127.0.0.1:8000"]) {
      const apple = appleSchema.parse((await associationOfOn(owned.url, host, AASA)).body);
      assert.deepEqual(apple.applinks.details.map((x) => x.appID), ["EEEEE55555.com.eta.app"]);
      const google = googleSchema.parse((await associationOfOn(owned.url, host, ASSETLINKS)).body);
      assert.deepEqual(google.map((s) => s.target.package_name), ["com.eta.app"]);
    }
    // The other projects' own domains are theirs as before.
    const alpha = googleSchema.parse(
      (await associationOfOn(owned.url, "go.alpha.test", ASSETLINKS)).body,
    );
    assert.deepEqual(alpha.map((s) => s.target.package_name), ["com.alpha.app"]);
    // The default host still serves every domain-less project's links, gamma's too.
    assert.equal((await callOnHost(owned.url, DEFAULT_HOST, `/${c.path}`)).status, 302);

    // Once the owner takes a link domain, its apps go there and the default host declares none.
    const moved = await call(srv.url, "PATCH", `/api/v1/admin/projects/${eta.hashid}`, {
      headers: adminHeaders,
      body: { link_domain: "go.eta.test" },
    });
    assert.equal(moved.status, 200, moved.text);
    assert.equal((await callOnHost(owned.url, DEFAULT_HOST, AASA)).status, 404);
    const etaDomain = appleSchema.parse(
      (await associationOfOn(owned.url, "go.eta.test", AASA)).body,
    );
    assert.deepEqual(etaDomain.applinks.details.map((x) => x.appID), ["EEEEE55555.com.eta.app"]);
  } finally {
    await owned.close();
  }

  // A name that is no project's hashid declares nothing.
  const unknown = serveApp(srv.db, { config: { DEFAULT_HOST_APPS_PROJECT: "NoSuchProject1" } });
  try {
    assert.equal((await callOnHost(unknown.url, DEFAULT_HOST, ASSETLINKS)).status, 404);
  } finally {
    await unknown.close();
  }
});

Deno.test("association files: ETag revalidation answers 304, and a changed app changes the ETag", async () => {
  const first = await associationOf("go.beta.test", ASSETLINKS);
  const again = await callOnHost(srv.url, "go.beta.test", ASSETLINKS, {
    headers: { "If-None-Match": first.etag },
  });
  assert.equal(again.status, 304);
  assert.equal(again.text, "");
  assert.equal(again.headers["etag"], first.etag);

  const res = await call(srv.url, "PATCH", `/api/v1/admin/projects/${b.hashid}`, {
    headers: adminHeaders,
    body: {
      apps: { android: { package: "com.beta.app", sha256_cert_fingerprints: [fingerprint("BC")] } },
    },
  });
  assert.equal(res.status, 200, res.text);
  const changed = await callOnHost(srv.url, "go.beta.test", ASSETLINKS, {
    headers: { "If-None-Match": first.etag },
  });
  assert.equal(changed.status, 200);
  assert.notEqual(changed.headers["etag"], first.etag);
  assert.deepEqual(JSON.parse(changed.text)[0].target.sha256_cert_fingerprints, [
    fingerprint("BC"),
  ]);
});

Deno.test("link host: a project's links are served only on its own domain, domain-less ones on the default host", async () => {
  const cases: [string, string, string | null][] = [
    ["go.alpha.test", a.path, "https://example.com/alpha"],
    ["go.beta.test", b.path, "https://example.com/beta"],
    ["go.delta.test", d.path, "https://example.com/delta"],
    [DEFAULT_HOST, c.path, "https://example.com/gamma"],
    // A host that is no project's domain (the service's own address) is the default host.
    ["127.0.0.1", c.path, "https://example.com/gamma"],
    // Foreign domains and the default host do not serve a project's links; a name that is no
    // project's domain (pointed at the service by someone else) serves nothing.
    ["go.unknown.test", c.path, null],
    ["go.unknown.test", a.path, null],
    // Foreign domains and the default host do not serve a project's links.
    ["go.beta.test", a.path, null],
    ["go.alpha.test", b.path, null],
    ["go.alpha.test", c.path, null],
    [DEFAULT_HOST, a.path, null],
    ["127.0.0.1", d.path, null],
  ];
  for (const [host, path, location] of cases) {
    const res = await callOnHost(srv.url, host, `/${path}`);
    if (location === null) {
      assert.equal(res.status, 404, `${host}/${path}`);
      assert.equal(res.headers["content-type"], "text/html; charset=utf-8");
    } else {
      assert.equal(res.status, 302, `${host}/${path}: ${res.text}`);
      assert.equal(res.headers["location"], location);
    }
  }
});

Deno.test("link host: after a domain change the links move with it; the old host answers 404", async () => {
  const e = await projectWith("epsilon", { link_domain: "go.epsilon.test" });
  assert.equal((await callOnHost(srv.url, "go.epsilon.test", `/${e.path}`)).status, 302);
  const res = await call(srv.url, "PATCH", `/api/v1/admin/projects/${e.hashid}`, {
    headers: adminHeaders,
    body: { link_domain: "links.epsilon.test" },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal((await callOnHost(srv.url, "go.epsilon.test", `/${e.path}`)).status, 404);
  assert.equal((await callOnHost(srv.url, "links.epsilon.test", `/${e.path}`)).status, 302);
  const removed = await call(srv.url, "PATCH", `/api/v1/admin/projects/${e.hashid}`, {
    headers: adminHeaders,
    body: { link_domain: null },
  });
  assert.equal(removed.status, 200, removed.text);
  assert.equal((await callOnHost(srv.url, "links.epsilon.test", `/${e.path}`)).status, 404);
  assert.equal((await callOnHost(srv.url, DEFAULT_HOST, `/${e.path}`)).status, 302);
  assert.equal((await callOnHost(srv.url, "localhost:8000", `/${e.path}`)).status, 302);
});

Deno.test("GET /open-app.js: the open-app script, a file with its own ETag", async () => {
  const res = await callOnHost(srv.url, "go.alpha.test", "/open-app.js");
  assert.equal(res.status, 200);
  assert.equal(res.headers["content-type"], "text/javascript; charset=utf-8");
  assert.match(res.text, /data-fallback-url/);
  const again = await callOnHost(srv.url, "go.alpha.test", "/open-app.js", {
    headers: { "If-None-Match": res.headers["etag"]! },
  });
  assert.equal(again.status, 304);
});
