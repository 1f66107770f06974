// The dashboard's link management over HTTP: chosen path and expiry on create, the edit form,
// archive, delete with its confirmation; forms carry the CSRF token, values are escaped.
import assert from "node:assert/strict";
import { getPage, postForm, signInOverHttp } from "./helpers/dashboard.ts";
import { createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());
const project = await createProject(srv.url);
const client = await signInOverHttp(srv.url);
const links = `/dashboard/environments/${project.productionId}/links`;

Deno.test("dashboard: create with a chosen path and expiry, edit every field, archive, delete", async () => {
  const created = await postForm(srv.url, links, client, {
    _csrf: client.csrf,
    path: "poster-2026",
    title: "<b>Poster</b>",
    desktop_url: "https://old.example/",
    expires_at: "2027-01-01T00:00:00Z",
    max_views: "25",
    expired_url: "https://over.example/",
  });
  assert.equal(created.status, 303, created.text);
  assert.equal(created.headers.get("location"), `${links}/poster-2026?created=1`);
  const view = await getPage(srv.url, `${links}/poster-2026`, client);
  assert.match(view.text, /&lt;b&gt;Poster&lt;\/b&gt;/);
  assert.doesNotMatch(view.text, /<b>Poster/);
  assert.match(view.text, /At most 25 views/);

  // The same path again: the form comes back with the error beside the field.
  const again = await postForm(srv.url, links, client, { _csrf: client.csrf, path: "poster-2026" });
  assert.equal(again.status, 400);
  assert.match(again.text, /is taken/);

  const form = await getPage(srv.url, `${links}/poster-2026/edit`, client);
  assert.equal(form.status, 200);
  assert.match(form.text, /value="https:\/\/old\.example\/"/);
  assert.match(form.text, /value="25"/);
  const edited = await postForm(srv.url, `${links}/poster-2026/edit`, client, {
    _csrf: client.csrf,
    title: "Poster v2",
    desktop_url: "https://new.example/",
    tags: "print, spring",
    data: '{"v":2}',
    expires_at: "",
    max_views: "",
    expired_url: "",
  });
  assert.equal(edited.status, 303, edited.text);
  const hit = await fetch(`${srv.url}/poster-2026`, { redirect: "manual" });
  await hit.body?.cancel();
  assert.equal(hit.headers.get("location"), "https://new.example/");
  const [row] = await srv.sql`select title, tags, data, max_views, expires_at from links
    where path = 'poster-2026'`;
  assert.deepEqual(row, {
    title: "Poster v2",
    tags: ["print", "spring"],
    data: { v: 2 },
    max_views: null,
    expires_at: null,
  });
  const badEdit = await postForm(srv.url, `${links}/poster-2026/edit`, client, {
    _csrf: client.csrf,
    image: "javascript:alert(1)",
  });
  assert.equal(badEdit.status, 400);

  // Without the form token nothing changes.
  const forged = await postForm(srv.url, `${links}/poster-2026/archive`, client, {
    archived: "true",
  });
  assert.equal(forged.status, 403);
  const archived = await postForm(srv.url, `${links}/poster-2026/archive`, client, {
    _csrf: client.csrf,
    archived: "true",
  });
  assert.equal(archived.status, 303);
  const list = await getPage(srv.url, links, client);
  assert.doesNotMatch(list.text, /poster-2026/);

  const confirm = await getPage(srv.url, `${links}/poster-2026/delete`, client);
  assert.match(confirm.text, /Delete for good/);
  const deleted = await postForm(srv.url, `${links}/poster-2026/delete`, client, {
    _csrf: client.csrf,
  });
  assert.equal(deleted.status, 303);
  assert.equal((await getPage(srv.url, `${links}/poster-2026`, client)).status, 404);
});
