// The project's attribution settings (CONTRACT.md, "Attribution"; docs/analytics.md):
// attribution_window_days (1–90, 30) and attribution_model (first_touch | last_touch), set and
// read the same through the admin API, GraphQL and the dashboard, and refused alike when wrong.
import assert from "node:assert/strict";
import { gql } from "./helpers/graphql.ts";
import { getPage, postForm, signInOverHttp } from "./helpers/dashboard.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());
const project = await createProject(srv.url, { name: "Attributed" });
const admin = { headers: adminHeaders };

function patch(body: unknown) {
  return call(srv.url, "PATCH", `/api/v1/admin/projects/${project.hashid}`, { ...admin, body });
}

async function settings(): Promise<[number, string]> {
  const res = await call(srv.url, "GET", `/api/v1/admin/projects/${project.hashid}`, admin);
  assert.equal(res.status, 200, res.text);
  return [res.body.project.attribution_window_days, res.body.project.attribution_model];
}

Deno.test("admin API: the defaults, each setting alone, and every wrong value a 400 naming it", async () => {
  assert.deepEqual(await settings(), [30, "first_touch"]);
  const days = await patch({ attribution_window_days: 7 });
  assert.equal(days.status, 200, days.text);
  assert.equal(days.body.project.attribution_window_days, 7);
  assert.equal(days.body.project.attribution_model, "first_touch");
  const model = await patch({ attribution_model: "last_touch" });
  assert.equal(model.status, 200, model.text);
  assert.deepEqual(await settings(), [7, "last_touch"]);
  const both = await patch({ attribution_window_days: 90, attribution_model: "first_touch" });
  assert.equal(both.status, 200, both.text);
  assert.deepEqual(await settings(), [90, "first_touch"]);
  // Another change leaves them be.
  assert.equal((await patch({ name: "Attributed again" })).status, 200);
  assert.deepEqual(await settings(), [90, "first_touch"]);

  for (
    const [body, field] of [
      [{ attribution_window_days: 0 }, "attribution_window_days"],
      [{ attribution_window_days: 91 }, "attribution_window_days"],
      [{ attribution_window_days: 1.5 }, "attribution_window_days"],
      [{ attribution_window_days: "30" }, "attribution_window_days"],
      [{ attribution_window_days: null }, "attribution_window_days"],
      [{ attribution_model: "linear" }, "attribution_model"],
      [{ attribution_model: "FIRST_TOUCH" }, "attribution_model"],
      [{ attribution_model: 1 }, "attribution_model"],
    ] as const
  ) {
    const res = await patch(body);
    assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
    assert.equal(res.body.error.code, "invalid_field");
    assert.match(res.body.error.message, new RegExp(`^${field}: `), res.text);
  }
  assert.deepEqual(await settings(), [90, "first_touch"]);
  // The smallest window is allowed.
  assert.equal((await patch({ attribution_window_days: 1 })).status, 200);
  assert.deepEqual(await settings(), [1, "first_touch"]);
});

Deno.test("GraphQL: Project.attributionWindowDays and attributionModel, setAttributionSettings", async () => {
  const variables = { id: String(project.productionId) };
  const set = await gql(
    srv.url,
    `mutation($id: ID!) { setAttributionSettings(projectId: $id,
      input: { windowDays: 14, model: LAST_TOUCH }) { attributionWindowDays attributionModel } }`,
    { ...admin, variables },
  );
  assert.equal(set.errors, undefined, JSON.stringify(set.errors));
  assert.deepEqual(set.data.setAttributionSettings, {
    attributionWindowDays: 14,
    attributionModel: "LAST_TOUCH",
  });
  assert.deepEqual(await settings(), [14, "last_touch"]);
  // One alone keeps the other.
  const one = await gql(
    srv.url,
    `mutation($id: ID!) { setAttributionSettings(projectId: $id, input: { model: FIRST_TOUCH }) {
      attributionWindowDays attributionModel } }`,
    { ...admin, variables },
  );
  assert.deepEqual(one.data.setAttributionSettings, {
    attributionWindowDays: 14,
    attributionModel: "FIRST_TOUCH",
  });
  const read = await gql(
    srv.url,
    `query($id: ID!) { environment(projectId: $id) { project {
      attributionWindowDays attributionModel } } }`,
    { ...admin, variables },
  );
  assert.deepEqual(read.data.environment.project, {
    attributionWindowDays: 14,
    attributionModel: "FIRST_TOUCH",
  });
  const bad = await gql(
    srv.url,
    `mutation($id: ID!) { setAttributionSettings(projectId: $id, input: { windowDays: 120 }) {
      attributionWindowDays } }`,
    { ...admin, variables },
  );
  assert.equal(bad.errors?.length, 1, JSON.stringify(bad));
  assert.equal(bad.errors![0].extensions.code, "BAD_USER_INPUT");
  assert.match(bad.errors![0].message, /^input\.windowDays: /);
  assert.deepEqual(await settings(), [14, "first_touch"]);
});

Deno.test("dashboard: the Attribution card shows the settings, saves them, and shows a wrong one beside its field", async () => {
  await patch({ attribution_window_days: 30, attribution_model: "first_touch" });
  const client = await signInOverHttp(srv.url);
  const page = await getPage(srv.url, `/dashboard/projects/${project.hashid}`, client);
  assert.equal(page.status, 200);
  assert.match(page.text, /<h2 id="attribution-h">Attribution<\/h2>/);
  assert.match(page.text, /name="attribution_window_days" type="text" value="30"/);
  assert.match(page.text, /<option value="first_touch" selected[ >]/);
  const path = `/dashboard/projects/${project.hashid}/attribution`;
  const saved = await postForm(srv.url, path, client, {
    _csrf: client.csrf,
    attribution_window_days: "45",
    attribution_model: "last_touch",
  });
  assert.equal(saved.status, 303, saved.text);
  assert.deepEqual(await settings(), [45, "last_touch"]);
  const refused = await postForm(srv.url, path, client, {
    _csrf: client.csrf,
    attribution_window_days: "365",
    attribution_model: "linear",
  });
  assert.equal(refused.status, 400);
  assert.match(refused.text, /Must be a whole number of days from 1 to 90\./);
  assert.match(refused.text, /Must be first_touch or last_touch\./);
  // The typed value is shown again; nothing was saved.
  assert.match(refused.text, /name="attribution_window_days" type="text" value="365"/);
  assert.deepEqual(await settings(), [45, "last_touch"]);
});
