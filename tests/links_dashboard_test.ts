// The dashboard's link management over HTTP: chosen path and expiry on create, the edit form,
// archive, delete with its confirmation, the list's states, the CSV import (a streamed upload,
// all or nothing, with its report) and export; forms carry the CSRF token, values are escaped.
import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { getPage, postForm, postUpload, signInOverHttp } from "./helpers/dashboard.ts";
import { generateLink } from "./helpers/sdk.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";
import { ManualClock } from "./helpers/clock.ts";

const srv = await startTestServer({ clock: new ManualClock("2026-06-01T12:00:00Z") });
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

  // The same path again, a reserved one, too long, bad characters: the form comes back with the
  // error beside the path field, and nothing is stored.
  const before = await linkCount();
  for (
    const [path, message] of [
      ["poster-2026", /is taken/],
      ["dashboard", /reserved/],
      ["x".repeat(65), /64/],
      ["with space", /1 to 64 of A-Z, a-z, 0-9, - and _/],
    ] as const
  ) {
    const again = await postForm(srv.url, links, client, { _csrf: client.csrf, path });
    assert.equal(again.status, 400, path);
    const error = /<p class="error-text" id="f-path-error">([^<]*)<\/p>/.exec(again.text)?.[1];
    assert.match(error ?? "", message, path);
  }
  assert.equal(await linkCount(), before);

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

async function linkCount(): Promise<number> {
  const [row] = await srv.sql<{ n: number }[]>`select count(*)::int as n from links`;
  return row!.n;
}
/** The import report's rows as the page shows them: [row, column, problem]. */
function reportRows(html: string): [string, string, string][] {
  const report = html.slice(html.indexOf('class="import-report"'));
  return [
    ...report.matchAll(/<tr><td>(.*?)<\/td><td><code>(.*?)<\/code><\/td><td>(.*?)<\/td><\/tr>/g),
  ]
    .map((m): [string, string, string] => [m[1]!, m[2]!, m[3]!]);
}

Deno.test("dashboard import: a CSV upload, all or nothing, the count or the report of bad rows", async () => {
  const upload = (content: string, fields: Record<string, string> = { _csrf: client.csrf }) =>
    postUpload(srv.url, `${links}/import`, client, fields, { name: "links.csv", content });

  const ok = await upload(
    "path,title,desktop_url,tags,max_views\n" +
      'imp-one,"One, with a comma",https://one.example/,"[""print""]",\n' +
      "imp-two,<i>Two</i>,https://two.example/,,5\n",
  );
  assert.equal(ok.status, 303, ok.text);
  assert.equal(ok.headers.get("location"), `${links}?imported=2`);
  const listed = await getPage(srv.url, `${links}?imported=2`, client);
  assert.match(listed.text, /2 links imported\./);
  assert.match(listed.text, /&lt;i&gt;Two&lt;\/i&gt;/);
  const hit = await fetch(`${srv.url}/imp-one`, { redirect: "manual" });
  await hit.body?.cancel();
  assert.equal(hit.headers.get("location"), "https://one.example/");
  const [two] = await srv.sql`select generated_from_platform, max_views from links
    where path = 'imp-two'`;
  assert.deepEqual(two, { generated_from_platform: "Import", max_views: 5 });

  // Bad rows: nothing is stored, and the page lists every one, escaped.
  const before = await linkCount();
  const bad = await upload(
    "path,title,desktop_url,max_views\n" +
      "imp-three,Fine,https://three.example/,\n" +
      "imp-one,Taken path,https://x.example/,\n" +
      "imp-four,Bad URL,javascript:alert(1),\n" +
      "imp-five,<b>Bad views</b>,,zero\n" +
      "bad path!,Bad path,,\n",
  );
  assert.equal(bad.status, 400);
  assert.match(bad.text, /Import report/);
  assert.match(bad.text, /The file has 4 bad rows; nothing was imported\./);
  const rows = reportRows(bad.text);
  assert.deepEqual(rows.map(([row, field]) => [row, field]), [
    ["2", "path"],
    ["3", "desktop_url"],
    ["4", "max_views"],
    ["5", "path"],
  ]);
  assert.match(rows[0]![2], /is taken/);
  assert.doesNotMatch(bad.text, /<b>Bad views/);
  assert.equal(await linkCount(), before);

  // A header naming an unknown column, and an empty file: the header row, row 0.
  const header = await upload("path,colour\nx,red\n");
  assert.equal(header.status, 400);
  assert.deepEqual(reportRows(header.text).map(([row, field]) => [row, field]), [
    ["header", "colour"],
  ]);
  const empty = await upload("");
  assert.equal(empty.status, 400);
  assert.match(reportRows(empty.text)[0]![2], /the file is empty/);
  // The form without a file part at all.
  const none = await postUpload(srv.url, `${links}/import`, client, { _csrf: client.csrf }, null);
  assert.equal(none.status, 400);
  assert.match(none.text, /Choose a CSV file to import/);
  assert.equal(await linkCount(), before);
});

Deno.test("dashboard import: the form token is checked before the file, which is streamed past 1 MiB", async () => {
  const file = { name: "links.csv", content: "path,title\ntok-1,One\n" };
  const before = await linkCount();
  // No token, a wrong one, the token after the file, another site, a urlencoded post.
  const refused = [
    await postUpload(srv.url, `${links}/import`, client, {}, file),
    await postUpload(srv.url, `${links}/import`, client, { _csrf: "x".repeat(43) }, file),
    await (async () => {
      const form = new FormData();
      form.append("file", new File([file.content], file.name));
      form.append("_csrf", client.csrf);
      const res = await fetch(`${srv.url}${links}/import`, {
        method: "POST",
        body: form,
        headers: { cookie: client.cookie, Origin: srv.url },
        redirect: "manual",
      });
      await res.body?.cancel();
      return { status: res.status };
    })(),
    await postUpload(srv.url, `${links}/import`, client, { _csrf: client.csrf }, file, {
      Origin: "https://evil.example",
    }),
    await postForm(srv.url, `${links}/import`, client, { _csrf: client.csrf }),
  ];
  assert.deepEqual(refused.map((r) => r.status), [403, 403, 403, 403, 403]);
  assert.equal(await linkCount(), before);
  // Hand-made bodies: one cut in the middle of the file, one that is no multipart at all.
  const raw = async (body: string) => {
    const res = await fetch(`${srv.url}${links}/import`, {
      method: "POST",
      body,
      headers: {
        cookie: client.cookie,
        Origin: srv.url,
        "Content-Type": "multipart/form-data; boundary=XyZ",
      },
      redirect: "manual",
    });
    return { status: res.status, text: await res.text() };
  };
  const cut = await raw(
    `--XyZ\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${client.csrf}\r\n` +
      `--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\n` +
      "path,title\ncut-1,One\ncut-2,Two\n",
  );
  assert.equal(cut.status, 400);
  assert.match(cut.text, /The upload ended before the whole file arrived/);
  assert.equal((await raw("garbage")).status, 403);
  assert.equal(await linkCount(), before);
  // Signed out: to the sign-in page, nothing read.
  const anonymous = await postUpload(srv.url, `${links}/import`, { cookie: "" }, {
    _csrf: client.csrf,
  }, file);
  assert.equal(anonymous.status, 303);
  assert.equal(await linkCount(), before);

  // 20,000 rows (about 1.5 MB, past the 1 MiB limit of other bodies) import in one go.
  let csv = "path,title,subtitle,desktop_url\n";
  const subtitle = "s".repeat(40);
  for (let i = 0; i < 20_000; i++) {
    csv += `bulk-${i},Bulk ${i},${subtitle},https://bulk.example/${i}\n`;
  }
  assert.ok(csv.length > 1024 * 1024);
  const big = await postUpload(srv.url, `${links}/import`, client, { _csrf: client.csrf }, {
    name: "bulk.csv",
    content: csv,
  });
  assert.equal(big.status, 303, big.text);
  assert.equal(big.headers.get("location"), `${links}?imported=20000`);
  assert.match((await getPage(srv.url, `${links}?imported=20000`, client)).text, /20,000 links/);

  // 300 bad rows in a 1.5 MB file: the first 100 are reported, and the answer arrives whole
  // although the service stopped reading the file at the hundredth (it reads the rest away).
  let worse = "path,title,subtitle,max_views\n";
  for (let i = 0; i < 20_000; i++) {
    worse += `worse-${i},Worse ${i},${subtitle},${i < 300 ? "none" : ""}\n`;
  }
  const refusedBig = await postUpload(srv.url, `${links}/import`, client, {
    _csrf: client.csrf,
  }, { name: "worse.csv", content: worse });
  assert.equal(refusedBig.status, 400);
  assert.match(refusedBig.text, /The file has 100 or more bad rows/);
  const reported = reportRows(refusedBig.text);
  assert.equal(reported.length, 100);
  assert.deepEqual(reported.map(([row]) => row).slice(0, 3), ["1", "2", "3"]);
  assert.equal(await linkCount(), before + 20_000);
});

Deno.test("dashboard export: the links listed, archived ones too, not the apps', as a streamed CSV", async () => {
  const p = await createProject(srv.url, { name: "Exporter" });
  const c2 = client;
  const base = `/dashboard/environments/${p.productionId}/links`;
  const imported = await postUpload(srv.url, `${base}/import`, c2, { _csrf: c2.csrf }, {
    name: "x.csv",
    content: 'path,title,tags\nexp-a,A,\nexp-b,"B, quoted","[""t""]"\nexp-c,=1+1,\n',
  });
  assert.equal(imported.status, 303, imported.text);
  await postForm(srv.url, `${base}/exp-b/archive`, c2, { _csrf: c2.csrf, archived: "true" });
  const sdkPath = await generateLink(srv.url, p.key, "production", { title: "from the app" });
  const res = await fetch(`${srv.url}${base}/export.csv`, { headers: { cookie: c2.cookie } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/csv; charset=utf-8");
  assert.equal(
    res.headers.get("content-disposition"),
    `attachment; filename="links-${p.productionId}.csv"`,
  );
  const rows = parse(await res.text(), { columns: true }) as Record<string, string>[];
  // A title a spreadsheet would run as a formula is written as text (services/csv_cells.ts).
  assert.deepEqual(rows.map((r) => [r.path, r.title, r.state, r.tags]), [
    ["exp-a", "A", "active", "[]"],
    ["exp-b", "B, quoted", "archived", '["t"]'],
    ["exp-c", "'=1+1", "active", "[]"],
  ]);
  assert.ok(!rows.some((r) => r.path === sdkPath));
  // The admin API's export has the app's link too.
  const all = await call(srv.url, "GET", `/api/v1/projects/${p.productionId}/links/export`, {
    headers: adminHeaders,
  });
  assert.match(all.text, new RegExp(sdkPath));
  // Signed out: the sign-in page, no CSV.
  const anonymous = await fetch(`${srv.url}${base}/export.csv`, { redirect: "manual" });
  await anonymous.body?.cancel();
  assert.equal(anonymous.status, 303);
});

Deno.test("dashboard list: each link's state, and a filter by state (archived ones only there)", async () => {
  const p = await createProject(srv.url, { name: "States" });
  const base = `/dashboard/environments/${p.productionId}/links`;
  const make = async (path: string, extra: Record<string, string> = {}) => {
    const res = await postForm(srv.url, base, client, { _csrf: client.csrf, path, ...extra });
    assert.equal(res.status, 303, res.text);
  };
  await make("st-active");
  await make("st-inactive");
  await postForm(srv.url, `${base}/st-inactive/active`, client, {
    _csrf: client.csrf,
    active: "false",
  });
  await make("st-dated", { expires_at: "2026-06-01T11:00:00Z" });
  await make("st-used-up", { max_views: "1" });
  const hit = await fetch(`${srv.url}/st-used-up`, { redirect: "manual" });
  await hit.body?.cancel();
  await make("st-archived");
  await postForm(srv.url, `${base}/st-archived/archive`, client, {
    _csrf: client.csrf,
    archived: "true",
  });
  const states = async (query: string) => {
    const html = (await getPage(srv.url, `${base}${query}`, client)).text;
    return [
      ...html.matchAll(/href="[^"]*\/links\/(st-[a-z-]+)".*?class="badge [a-z]+ link-([a-z]+)"/gs),
    ]
      .map((m) => `${m[1]}:${m[2]}`);
  };
  assert.deepEqual(await states(""), [
    "st-used-up:expired",
    "st-dated:expired",
    "st-inactive:inactive",
    "st-active:active",
  ]);
  assert.deepEqual(await states("?state=expired"), ["st-used-up:expired", "st-dated:expired"]);
  assert.deepEqual(await states("?state=active"), ["st-active:active"]);
  assert.deepEqual(await states("?state=inactive"), ["st-inactive:inactive"]);
  assert.deepEqual(await states("?state=archived"), ["st-archived:archived"]);
  // The form's first choice sends an empty state: every link but the archived ones.
  assert.deepEqual(await states("?q=st-&state="), await states(""));
  const view = await getPage(srv.url, `${base}/st-dated`, client);
  assert.match(view.text, /class="badge off link-expired">Expired</);
  assert.equal((await getPage(srv.url, `${base}?state=gone`, client)).status, 400);
});
