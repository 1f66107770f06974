// The admin API's additions for the dashboard: project search, links, events per day (the list
// of links: links_manage_test.ts).
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { ingest } from "./helpers/sdk.ts";
import {
  adminHeaders,
  assertError,
  call,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

const NOW = "2026-03-10T12:00:00.000Z";
const srv = await startTestServer({ clock: new ManualClock(NOW) });
Deno.test.afterAll(() => srv.close());

const acme = await createProject(srv.url, { name: "Acme Mobile" });
const other = await createProject(srv.url, { name: "Other_50%" });

function get(path: string) {
  return call(srv.url, "GET", path, { headers: adminHeaders });
}

Deno.test("GET /api/v1/admin/projects lists every project, newest first", async () => {
  const res = await get("/api/v1/admin/projects");
  assert.equal(res.status, 200);
  const ids = res.body.projects.map((p: { id: string }) => p.id);
  assert.deepEqual(ids.slice(0, 2), [other.hashid, acme.hashid]);
  assert.equal(res.body.projects[1].environments.production.project_id, acme.productionId);
  assert.equal("project_key" in res.body.projects[0], false);
});

Deno.test("GET /api/v1/admin/projects?q= matches a name substring, wildcards literally", async () => {
  const byName = await get("/api/v1/admin/projects?q=mobile");
  assert.deepEqual(byName.body.projects.map((p: { id: string }) => p.id), [acme.hashid]);
  const literal = await get(`/api/v1/admin/projects?q=${encodeURIComponent("_50%")}`);
  assert.deepEqual(literal.body.projects.map((p: { id: string }) => p.id), [other.hashid]);
  const none = await get("/api/v1/admin/projects?q=%25%25nothing");
  assert.deepEqual(none.body.projects, []);
});

Deno.test("GET /api/v1/admin/projects refuses a wrong token and an overlong q", async () => {
  assertError(await call(srv.url, "GET", "/api/v1/admin/projects"), 401, "unauthorized");
  assertError(
    await get(`/api/v1/admin/projects?q=${"x".repeat(201)}`),
    400,
    "invalid_field",
    /^q:/,
  );
});

Deno.test("POST /api/v1/projects/:project_id/links makes an API link, not an SDK one", async () => {
  const res = await call(srv.url, "POST", `/api/v1/projects/${acme.productionId}/links`, {
    headers: adminHeaders,
    body: {
      title: "Poster",
      data: { promo: "spring" },
      tags: ["print", "spring"],
      ios_custom_redirect: { url: "https://apps.example.com/ios", open_app_if_installed: true },
      show_preview_android: true,
      tracking_campaign: "spring",
    },
  });
  assert.equal(res.status, 201, res.text);
  const link = res.body.link;
  assert.equal(link.generated_from_platform, "API");
  assert.equal(link.sdk_generated, false);
  assert.deepEqual(link.data, { promo: "spring" });
  assert.deepEqual(link.tags, ["print", "spring"]);
  assert.equal(link.show_preview, true);
  assert.equal(link.access_path, `${srv.config.linkBaseUrl}/${link.path}`);
  // The SDK's lookup sees it like any other link of the environment.
  const lookup = await call(srv.url, "GET", `/api/v1/sdk/link/${link.path}`, {
    headers: { "PROJECT-KEY": acme.key, ENVIRONMENT: "production" },
  });
  assert.equal(lookup.status, 200);
  assert.equal(lookup.body.link.generated_from_platform, "API");
});

Deno.test("POST /api/v1/projects/:project_id/links refuses bad fields and changes nothing", async () => {
  const before = await get(`/api/v1/projects/${acme.testId}/links?limit=100`);
  const bad = await call(srv.url, "POST", `/api/v1/projects/${acme.testId}/links`, {
    headers: adminHeaders,
    body: { title: "x", image: "javascript:alert(1)" },
  });
  assertError(bad, 400, "invalid_field", /^image:/);
  const stringTags = await call(srv.url, "POST", `/api/v1/projects/${acme.testId}/links`, {
    headers: adminHeaders,
    body: { tags: '["a"]' },
  });
  assertError(stringTags, 400, "invalid_field", /^tags:/);
  assertError(
    await call(srv.url, "POST", "/api/v1/projects/999999/links", {
      headers: adminHeaders,
      body: {},
    }),
    404,
    "not_found",
  );
  const after = await get(`/api/v1/projects/${acme.testId}/links?limit=100`);
  assert.equal(after.status, 200);
  assert.deepEqual(after.body.links, before.body.links);
});

Deno.test("GET /api/v1/projects/:project_id/events_per_day counts by UTC day and type", async () => {
  const env = other.productionId;
  await ingest(srv.url, other.key, "production", [
    { type: "install", occurred_at: "2026-03-10T00:00:00Z" },
    { type: "install", occurred_at: "2026-03-10T11:59:00Z" },
    { type: "open", occurred_at: "2026-03-09T23:59:59Z" },
    { type: "custom", name: "signup", occurred_at: "2026-03-01T10:00:00Z" },
    // Outside the default 30 days.
    { type: "open", occurred_at: "2026-02-01T10:00:00Z" },
  ]);
  const res = await get(`/api/v1/projects/${env}/events_per_day`);
  assert.equal(res.status, 200, res.text);
  const days = res.body.days as { date: string; counts: Record<string, number>; total: number }[];
  assert.equal(days.length, 30);
  assert.equal(days[0]!.date, "2026-02-09");
  assert.equal(days[29]!.date, "2026-03-10");
  assert.equal(days[29]!.counts.install, 2);
  assert.equal(days[29]!.total, 2);
  assert.equal(days[28]!.counts.open, 1);
  assert.equal(days.find((d) => d.date === "2026-03-01")!.counts.custom, 1);
  assert.equal(days.reduce((n, d) => n + d.total, 0), 4);
  assert.equal(days[5]!.counts.view, 0);

  const week = await get(`/api/v1/projects/${env}/events_per_day?days=7`);
  assert.equal(week.body.days.length, 7);
  assert.equal(week.body.days[0].date, "2026-03-04");
  const long = await get(`/api/v1/projects/${env}/events_per_day?days=90`);
  assert.equal(long.body.days.reduce((n: number, d: { total: number }) => n + d.total, 0), 5);

  assertError(await get(`/api/v1/projects/${env}/events_per_day?days=0`), 400, "invalid_field");
  assertError(await get(`/api/v1/projects/${env}/events_per_day?days=91`), 400, "invalid_field");
  assertError(
    await call(srv.url, "GET", `/api/v1/projects/${env}/events_per_day`),
    401,
    "unauthorized",
  );
});
