// The rules page shows each role what it may use (docs/dashboard.md): viewers read the rules as
// text with the split results, editors get the editor, and a save by the form changes the link
// as the admin API would (over HTTP, without a browser).
import assert from "node:assert/strict";
import { getPage, postForm } from "./helpers/dashboard.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());
const project = await createProject(srv.url, { name: "Roles" });
const admin = (method: string, path: string, body?: unknown) =>
  call(srv.url, method, path, { headers: adminHeaders, body });
const PASSWORD = "roles password 0123";

async function person(name: string, role: string) {
  const made = await admin("POST", "/api/v1/admin/accounts", {
    email: `${name}@example.test`,
    name,
  });
  await admin("PUT", `/api/v1/admin/projects/${project.hashid}/members/${made.body.account.id}`, {
    role,
  });
  const token = new URL(made.body.setup_url).searchParams.get("token")!;
  const res = await postForm(srv.url, "/dashboard/setup", { cookie: "" }, {
    token,
    password: PASSWORD,
    confirm: PASSWORD,
  });
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  const home = await getPage(srv.url, "/dashboard", { cookie });
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(home.text)![1]! };
}

Deno.test("viewers read the rules and results; editors get the editor, whose save changes the link", async () => {
  const made = await admin("POST", `/api/v1/projects/${project.productionId}/links`, {
    path: "roles-link",
    rules: [{ name: "de", when: { language: ["de"] }, url: "https://de.example/" }],
    split: [{ url: "https://a.example/", weight: 1 }, { url: "https://b.example/", weight: 1 }],
  });
  assert.equal(made.status, 201, made.text);
  const owner = await person("owner", "owner");
  const viewer = await person("viewer", "viewer");
  const editor = await person("editor", "editor");
  const page = `/dashboard/environments/${project.productionId}/links/roles-link/rules`;

  const seen = await getPage(srv.url, page, viewer);
  assert.equal(seen.status, 200);
  assert.ok(!seen.text.includes("data-editor"), "a viewer gets no editor");
  assert.match(seen.text, /<strong>de<\/strong>/);
  assert.match(seen.text, /Split results/);
  assert.match(seen.text, /See rules|Rules/);
  assert.equal((await postForm(srv.url, page, viewer, { _csrf: viewer.csrf })).status, 403);

  const edit = await getPage(srv.url, page, editor);
  assert.match(edit.text, /data-editor/);
  assert.match(edit.text, /name="r0_c0_value"[^>]*value="de"/);
  // A button's change comes back without saving anything.
  const form = {
    _csrf: editor.csrf,
    r0_name: "de",
    r0_mode: "url",
    r0_url: "https://de.example/",
    r0_c0_type: "language",
    r0_c0_value: "de, at",
    sv0_url: "https://a.example/",
    sv0_weight: "1",
    sv1_url: "https://b.example/",
    sv1_weight: "4",
    append_utm: "on",
  };
  const added = await postForm(srv.url, page, editor, { ...form, op: "add-cond:0" });
  assert.equal(added.status, 200);
  assert.match(added.text, /name="r0_c1_type"/);
  const before = (await admin("GET", `/api/v1/projects/${project.productionId}/links?q=roles`))
    .body.links[0];
  assert.equal(before.append_utm, false);
  // A value the API refuses is shown beside its field, nothing saved.
  const bad = await postForm(srv.url, page, editor, {
    ...form,
    r0_c0_value: "klingon!",
    op: "save",
  });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /id="r0_c0_value-error"/);
  const saved = await postForm(srv.url, page, editor, { ...form, op: "save" });
  assert.equal(saved.status, 303);
  const after = (await admin("GET", `/api/v1/projects/${project.productionId}/links?q=roles`))
    .body.links[0];
  assert.deepEqual(after.rules, [{
    name: "de",
    when: { language: ["de", "at"] },
    url: "https://de.example/",
  }]);
  assert.deepEqual(after.split, [{ url: "https://a.example/", weight: 1 }, {
    url: "https://b.example/",
    weight: 4,
  }]);
  assert.equal(after.append_utm, true);
  // The owner's view of the link page leads to the editor; the QR designer is everyone's.
  const link = await getPage(
    srv.url,
    `/dashboard/environments/${project.productionId}/links/roles-link`,
    owner,
  );
  assert.match(link.text, /Edit rules/);
  const viewerLink = await getPage(
    srv.url,
    `/dashboard/environments/${project.productionId}/links/roles-link`,
    viewer,
  );
  assert.match(viewerLink.text, /See rules/);
  const qr = await getPage(
    srv.url,
    `/dashboard/environments/${project.productionId}/links/roles-link/qr`,
    viewer,
  );
  assert.equal(qr.status, 200);
});
