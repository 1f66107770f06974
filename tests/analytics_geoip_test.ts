// A view's country comes from the GeoIP database of GEOIP_DATABASE (services/link_host/geoip.ts): from the
// connection's address, or behind TRUST_PROXY from the forwarded one; without a database it is
// unknown. The address serves the lookup only: it is nowhere in the database or the logs. The
// database is a small one that tests/helpers/mmdb.ts writes.
import assert from "node:assert/strict";
import { createLogger } from "../infra/log.ts";
import { GeoIpDatabase, GeoIpError } from "../services/link_host/geoip.ts";
import { buildCountryDatabase, writeCountryDatabase } from "./helpers/mmdb.ts";
import { generateLink, type Json } from "./helpers/sdk.ts";
import { adminHeaders, call, createProject, serveApp, startTestServer } from "./helpers/server.ts";

const NETWORKS = {
  "127.0.0.0/8": "NZ",
  "203.0.113.0/24": "DE",
  "2001:db8::/32": "FR",
};
/** Every address the tests send, or that the connection has: none may be kept. */
const ADDRESSES = ["127.0.0.1", "203.0.113.7", "203.0.113.9", "2001:db8::42", "198.51.100.1"];

const geoipPath = await writeCountryDatabase(NETWORKS);
const logLines: string[] = [];
const logger = createLogger("debug", (line) => logLines.push(line));
// Three instances over one database: the connection's address, a trusted proxy's, and none.
const direct = await startTestServer({ config: { GEOIP_DATABASE: geoipPath }, logger });
const proxied = serveApp(direct.db, {
  config: { GEOIP_DATABASE: geoipPath, TRUST_PROXY: "true" },
  logger,
});
const without = serveApp(direct.db, { config: { TRUST_PROXY: "true" }, logger });
Deno.test.afterAll(async () => {
  await proxied.close();
  await without.close();
  await direct.close();
  await Deno.remove(geoipPath);
});
const project = await createProject(direct.url);

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";

/** Views of `path` through `base`, one per X-Forwarded-For value (null: no header). */
async function visit(base: string, path: string, forwarded: (string | null)[]): Promise<void> {
  for (const xff of forwarded) {
    const headers: Record<string, string> = { "User-Agent": IPHONE };
    if (xff !== null) headers["X-Forwarded-For"] = xff;
    const res = await call(base, "GET", `/${path}`, { headers });
    assert.equal(res.status, 200, res.text);
  }
  await Promise.all([direct.views.flush(), proxied.views.flush(), without.views.flush()]);
}

/** The view envelopes of `path`'s events, as the feed serves them, in order. */
async function envelopes(path: string): Promise<Json[]> {
  const rows = await direct.sql<{ body: string }[]>`
    select e.body from analytics_events e join links l on l.id = e.link_id
    where l.path = ${path} order by e.id`;
  return rows.map((r) => JSON.parse(r.body));
}

async function countries(path: string): Promise<[string | null, number][]> {
  const res = await call(
    direct.url,
    "GET",
    `/api/v1/projects/${project.productionId}/analytics?metrics=views&group_by=country&link=${path}`,
    { headers: adminHeaders },
  );
  assert.equal(res.status, 200, res.text);
  return res.body.groups.map((g: Json) => [g.key, g.totals.views]);
}

Deno.test("a view's country is the connection's address's; X-Forwarded-For is not trusted by default", async () => {
  const path = await generateLink(direct.url, project.key, "production", { title: "Direct" });
  await visit(direct.url, path, [null, "203.0.113.7"]);
  const views = await envelopes(path);
  assert.deepEqual(views.map((v) => v.geo), [{ country: "NZ" }, { country: "NZ" }]);
  assert.deepEqual(await countries(path), [["NZ", 2]]);
});

Deno.test("behind a trusted proxy, the country is the forwarded address's; unknown when not in the database or not an address", async () => {
  const path = await generateLink(direct.url, project.key, "production", { title: "Proxied" });
  await visit(proxied.url, path, [
    "203.0.113.7",
    // The last entry is the one the proxy appended.
    "198.51.100.1, 2001:db8::42",
    "::ffff:203.0.113.9",
    "198.51.100.1",
    "not an address",
  ]);
  const views = await envelopes(path);
  assert.deepEqual(views.map((v) => v.geo), [
    { country: "DE" },
    { country: "FR" },
    { country: "DE" },
    undefined,
    undefined,
  ]);
  // The rest of the view is recorded as before.
  assert.deepEqual(views[0]!.device, { platform: "ios", os: "iOS", browser: "Mobile Safari" });
  assert.deepEqual(await countries(path), [["DE", 2], [null, 2], ["FR", 1]]);
  const rollups = await direct.sql<{ country: string | null; views: number }[]>`
    select r.country, sum(r.views)::int as views from analytics_rollups r
    join links l on l.id = r.link_id where l.path = ${path}
    group by r.country order by r.country nulls last`;
  assert.deepEqual(rollups.map((r) => [r.country, r.views]), [["DE", 2], ["FR", 1], [null, 2]]);
});

Deno.test("without a GeoIP database the country is unknown", async () => {
  const path = await generateLink(direct.url, project.key, "production", { title: "Unknown" });
  await visit(without.url, path, ["203.0.113.7", null]);
  assert.deepEqual((await envelopes(path)).map((v) => v.geo), [undefined, undefined]);
  assert.deepEqual(await countries(path), [[null, 2]]);
});

Deno.test("no address is anywhere in the database or the logs", async () => {
  const tables = await direct.sql<{ name: string }[]>`
    select format('%I.%I', table_schema, table_name) as name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE'`;
  assert.ok(tables.some((t) => t.name === "public.analytics_events"), "the history is scanned");
  const found: string[] = [];
  for (const { name } of tables) {
    const [row] = await direct.sql.unsafe<{ n: number }[]>(
      `select count(*)::int as n from ${name} t where t::text like any($1::text[])`,
      [ADDRESSES.map((a) => `%${a}%`)] as never[],
    );
    if (row!.n > 0) found.push(`${name}: ${row!.n} rows`);
  }
  assert.deepEqual(found, []);

  // The log has a line for every hit (so it is the one being read) and no address in any.
  assert.ok(logLines.filter((l) => /"msg":"request".*"status":200/.test(l)).length >= 9);
  assert.deepEqual(logLines.filter((l) => ADDRESSES.some((a) => l.includes(a))), []);
});

Deno.test("GeoIpDatabase: a file that is missing or not a MaxMind database is refused, saying which", async () => {
  const dir = await Deno.makeTempDir();
  try {
    assert.throws(() => new GeoIpDatabase(`${dir}/missing.mmdb`), (err: Error) => {
      assert.ok(err instanceof GeoIpError);
      assert.match(err.message, /^cannot read .*missing\.mmdb: /);
      return true;
    });
    await Deno.writeTextFile(`${dir}/text.mmdb`, "not a database\n".repeat(100));
    assert.throws(() => new GeoIpDatabase(`${dir}/text.mmdb`), (err: Error) => {
      assert.ok(err instanceof GeoIpError);
      assert.match(err.message, /text\.mmdb is not a MaxMind DB file/);
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("GeoIpDatabase: a replaced file is read again; a broken replacement keeps the previous one", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/country.mmdb`;
  try {
    await Deno.writeFile(path, buildCountryDatabase({ "203.0.113.0/24": "DE" }));
    const db = new GeoIpDatabase(path);
    assert.equal(db.country("203.0.113.7"), "DE");
    assert.equal(db.reloadIfChanged(), false);

    // Replaced whole, as geoipupdate does (a new file renamed over the old one).
    await Deno.writeFile(`${path}.new`, buildCountryDatabase({ "203.0.113.0/24": "AT" }));
    await Deno.rename(`${path}.new`, path);
    await Deno.utime(path, new Date(), new Date(Date.now() + 60_000));
    assert.equal(db.reloadIfChanged(), true);
    assert.equal(db.country("203.0.113.7"), "AT");

    await Deno.writeTextFile(path, "truncated");
    assert.throws(() => db.reloadIfChanged(), GeoIpError);
    assert.equal(db.country("203.0.113.7"), "AT");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
