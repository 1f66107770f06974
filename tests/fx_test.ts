// One currency (issue 36): the upgrade of a populated database (migration 00028 sets each
// project's reporting currency to the currency of most of its purchases, and takes the others
// out of the revenue until rates convert them), and rates loaded from the ECB's XML.
import assert from "node:assert/strict";
import { migrate } from "../db/migrate.ts";
import { createTestDatabase, migrateUpTo } from "./helpers/database.ts";
import { adminHeaders, call, serveApp } from "./helpers/server.ts";
import { convertMinor, minorDigits } from "../services/fx/convert.ts";
import { parseEcbRates } from "../services/fx/ecb.ts";
import { storeRates } from "../services/fx/rates.ts";

const FIXTURES = new URL("./fixtures/ecb/", import.meta.url);

/** The number of migration 00028_fx wherever it is renumbered: the upgrade starts before it. */
function fxMigration(): number {
  const dir = new URL("../db/migrations/", import.meta.url);
  const entry = [...Deno.readDirSync(dir)].find((e) => /^\d{5}_fx$/.test(e.name));
  return Number(entry!.name.slice(0, 5));
}

Deno.test("convertMinor: exact, by each currency's minor digits, halves away from zero", () => {
  assert.equal(minorDigits("USD"), 2);
  assert.equal(minorDigits("JPY"), 0);
  assert.equal(minorDigits("KWD"), 3);
  // 10.00 EUR at 1.0823 USD per euro: 10.823 USD → 1082 cents.
  assert.equal(convertMinor(1000, "EUR", "USD", "1", "1.0823"), 1082n);
  // 1,000 JPY to EUR at 160.00 JPY per euro: 6.25 EUR.
  assert.equal(convertMinor(1000, "JPY", "EUR", "160.00", "1"), 625n);
  // 0.005 EUR is half a cent: away from zero, both ways.
  assert.equal(convertMinor(1, "KWD", "EUR", "0.2", "1"), 1n);
  assert.equal(convertMinor(-1, "KWD", "EUR", "0.2", "1"), -1n);
  // Through the euro: 1.00 GBP to USD at 0.8 GBP and 1.2 USD per euro = 1.50 USD.
  assert.equal(convertMinor(100, "GBP", "USD", "0.8", "1.2"), 150n);
  assert.equal(convertMinor(123, "USD", "USD", "9", "1"), 123n);
});

Deno.test("the ECB's XML: every rate of the file; anything else refused whole", async () => {
  const hist = parseEcbRates(await Deno.readTextFile(new URL("eurofxref-hist.xml", FIXTURES)));
  assert.equal(hist.length, 12 * 4);
  assert.deepEqual(hist[0], { day: "2026-11-06", currency: "USD", rate: "1.0697" });
  const daily = parseEcbRates(await Deno.readTextFile(new URL("eurofxref-daily.xml", FIXTURES)));
  assert.deepEqual(daily.map((r) => r.currency), ["USD", "JPY", "GBP", "KWD"]);
  for (
    const bad of [
      "",
      "not xml",
      "<a><b></a>",
      "<Envelope/>",
      "<Envelope><Cube><Cube time='2026-13-45'><Cube currency='USD' rate='1'/></Cube></Cube></Envelope>",
      "<Envelope><Cube><Cube time='2026-11-02'><Cube currency='usd' rate='1'/></Cube></Cube></Envelope>",
      "<Envelope><Cube><Cube time='2026-11-02'><Cube currency='USD' rate='-1'/></Cube></Cube></Envelope>",
      "<Envelope><Cube><Cube time='2026-11-02'><Cube currency='USD' rate='0'/></Cube></Cube></Envelope>",
    ]
  ) {
    assert.throws(() => parseEcbRates(bad), (e: Error & { code?: string }) => {
      assert.equal(e.code, "invalid_field", bad);
      assert.match(e.message, /^body: /);
      return true;
    });
  }
});

Deno.test("migration 00028 on a populated database: a one-currency project's totals stay; another's convert once rates are loaded", async () => {
  const db = await createTestDatabase({ migrate: false });
  try {
    await migrateUpTo(db.url, fxMigration() - 1);
    const sql = db.pool(1);
    // Three projects as the previous version left them: one sold in euros, one mostly in
    // dollars (and in pounds, and once in a currency whose event the history no longer keeps),
    // one without purchases.
    const hour = "2026-11-03T10:00:00Z";
    const ids: number[] = [];
    for (const name of ["euros", "mixed", "none"]) {
      const [p] = await sql<[{ id: number }]>`
        insert into projects (hashid, name, key_hash) values (${name}, ${name}, ${"k-" + name})
        returning id`;
      const [e] = await sql<[{ id: number }]>`
        insert into environments (project_id, kind) values (${p.id}, 'production') returning id`;
      ids.push(e.id);
    }
    const [euros, mixed] = ids as [number, number];
    const purchases: [number, string, number, string | null][] = [
      [euros, "e1", 100, "EUR"],
      [euros, "e2", 200, "EUR"],
      [euros, "e3", 300, "eur"],
      [mixed, "m1", 1000, "USD"],
      [mixed, "m2", 500, "USD"],
      [mixed, "m3", 300, "GBP"],
      [mixed, "m4", 50, null],
    ];
    const links = new Map<number, number>();
    for (const env of [euros, mixed]) {
      const [l] = await sql<[{ id: number }]>`
        insert into links (environment_id, path) values (${env}, ${"l" + env}) returning id`;
      links.set(env, l.id);
      const total = purchases.filter((p) => p[0] === env).reduce((n, p) => n + p[2], 0);
      await sql`insert into link_counters (link_id, environment_id, total_revenue)
        values (${l.id}, ${env}, ${total})`;
    }
    for (const [env, tx, amount, currency] of purchases) {
      const link = links.get(env)!;
      const kept = currency !== null;
      if (kept) {
        const body = JSON.stringify({
          type: "purchase",
          name: "buy",
          purchase: {
            transaction_id: tx,
            version: 1,
            amount,
            currency,
            product_id: "p",
            store: "s",
          },
        });
        await sql`insert into analytics_events (environment_id, event_id, type, name, occurred_at,
          received_at, link_id, body)
          values (${env}, ${"evt_" + tx}, 'purchase', 'buy', ${hour}, ${hour}, ${link}, ${body})`;
      }
      await sql`insert into purchase_versions (environment_id, transaction_id, name, version,
          amount, link_id, hour)
        values (${env}, ${tx}, 'buy', 1, ${amount}, ${link}, ${kept ? hour : null})`;
      if (kept) {
        await sql`insert into analytics_rollups (environment_id, hour, link_id, event_name,
            purchases, revenue)
          values (${env}, ${hour}, ${link}, 'buy', 1, ${amount})`;
      }
    }
    await migrate(db.url);
    const srv = serveApp(db);
    try {
      const after = await srv.sql<{ hashid: string; reporting_currency: string }[]>`
        select hashid, reporting_currency from projects order by hashid`;
      assert.deepEqual(after.map((p) => [p.hashid, p.reporting_currency]), [
        ["euros", "EUR"],
        ["mixed", "USD"],
        ["none", "USD"],
      ]);
      const counter = async (env: number) => {
        const [c] = await srv.sql<[{ total: string }]>`
          select total_revenue::text as total from link_counters where link_id = ${links.get(
          env,
        )!}`;
        return Number(c.total);
      };
      const analytics = async (env: number, extra: Record<string, string> = {}) => {
        const qs = new URLSearchParams({
          from: "2026-11-01T00:00:00Z",
          to: "2026-11-05T00:00:00Z",
          metrics: "revenue,purchases,unconverted_purchases",
          ...extra,
        });
        const res = await call(srv.url, "GET", `/api/v1/projects/${env}/analytics?${qs}`, {
          headers: adminHeaders,
        });
        assert.equal(res.status, 200, res.text);
        return res.body;
      };
      // Sold in euros: the same totals as before.
      assert.equal(await counter(euros), 600);
      assert.deepEqual((await analytics(euros)).totals, {
        revenue: 600,
        purchases: 3,
        unconverted_purchases: 0,
      });
      // Mostly dollars: the pounds have no rate yet, the purchase of unknown currency is taken
      // as the reporting currency's (as it was summed before).
      assert.equal(await counter(mixed), 1550);
      assert.deepEqual((await analytics(mixed)).totals, {
        revenue: 1500,
        purchases: 2,
        unconverted_purchases: 1,
      });
      const byCurrency = await analytics(mixed, { group_by: "currency" });
      assert.deepEqual(byCurrency.groups.map((g: { key: string }) => g.key), ["USD", "GBP"]);
      assert.deepEqual(
        byCurrency.groups.map((g: { totals: { revenue: number } }) => g.totals.revenue),
        [1500, 300],
      );

      // Rates loaded: the pounds convert at 3 November's rates.
      const rates = parseEcbRates(await Deno.readTextFile(new URL("eurofxref-hist.xml", FIXTURES)));
      const loaded = await storeRates(srv.sql, rates);
      assert.equal(loaded.reconverted, 1);
      const day = (c: string) =>
        rates.find((r) => r.day === "2026-11-03" && r.currency === c)!.rate;
      const pounds = Number(convertMinor(300, "GBP", "USD", day("GBP"), day("USD")));
      assert.equal(await counter(mixed), 1550 + pounds);
      assert.deepEqual((await analytics(mixed)).totals, {
        revenue: 1500 + pounds,
        purchases: 3,
        unconverted_purchases: 0,
      });
      // The same file again changes nothing.
      assert.deepEqual((await storeRates(srv.sql, rates)).reconverted, 0);
      assert.equal(await counter(mixed), 1550 + pounds);
    } finally {
      await srv.close();
    }
  } finally {
    await db.close();
  }
});
