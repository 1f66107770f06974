// One currency (issue 36): the upgrade of a populated database (migration 00027 sets each
// project's reporting currency to the currency of most of its purchases, and takes the others
// out of the revenue until rates convert them), and rates loaded from the ECB's XML.
import assert from "node:assert/strict";
import postgres from "postgres";
import { migrate } from "../db/migrate.ts";
import { isLostConnection } from "../db/closed_write.ts";
import { createTestDatabase, migrateUpTo } from "./helpers/database.ts";
import { adminHeaders, call, createProject, serveApp, startTestServer } from "./helpers/server.ts";
import { generateLink, ingest, metrics } from "./helpers/sdk.ts";
import { gql } from "./helpers/graphql.ts";
import { getPage, postForm, signInOverHttp } from "./helpers/dashboard.ts";
import { ManualClock, silentLogger } from "./helpers/clock.ts";
import { fetchRatesIfDue, nextFetchAt } from "../services/fx/fetch.ts";
import { convertMinor, minorDigits } from "../services/fx/convert.ts";
import { parseEcbRates } from "../services/fx/ecb.ts";
import { storeRates } from "../services/fx/rates.ts";

const FIXTURES = new URL("./fixtures/ecb/", import.meta.url);

/** The number of migration 00027_fx wherever it is renumbered: the upgrade starts before it. */
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

Deno.test("migration 00027 on a populated database: a one-currency project's totals stay; another's convert once rates are loaded", async () => {
  const db = await createTestDatabase({ migrate: false });
  try {
    await migrateUpTo(db.url, fxMigration() - 1);
    // Its own connection, closed before migrating: the embedded database serves one at a time.
    const sql = postgres(db.url, { max: 1, onnotice: () => {} });
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
    await sql.end();
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

Deno.test("POST /api/v1/admin/fx_rates: the ECB's XML stored; a malformed file is a 400 storing nothing; admin only; 413 over 16 MiB", async () => {
  const srv = await startTestServer();
  try {
    const count = async () => {
      const [{ n }] = await srv.sql<[{ n: number }]>`select count(*)::int as n from fx_rates`;
      return n;
    };
    const post = (raw: string, headers: Record<string, string> = adminHeaders) =>
      call(srv.url, "POST", "/api/v1/admin/fx_rates", {
        raw,
        headers: { ...headers, "Content-Type": "application/xml" },
      });
    const xml = await Deno.readTextFile(new URL("eurofxref-hist.xml", FIXTURES));
    const broken = xml.replace("</gesmes:Envelope>", "");
    const bad = await post(broken);
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.error.code, "invalid_field");
    assert.equal(bad.body.error.status, 400);
    assert.match(bad.body.error.message, /^body: not well-formed XML/);
    assert.equal(await count(), 0);
    const wrong = await post(xml.replace("rate='1.0697'", "rate='1,0697'"));
    assert.equal(wrong.status, 400, wrong.text);
    assert.match(wrong.body.error.message, /^body: 2026-11-06 USD: not a rate/);
    assert.equal(await count(), 0);

    const denied = await post(xml, {});
    assert.equal(denied.status, 401, denied.text);

    const res = await post(xml);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      fx_rates: { rates: 48, changed: 48, reconverted: 0, last_day: "2026-11-06" },
    });
    assert.equal(await count(), 48);
    const again = await post(xml);
    assert.deepEqual(again.body.fx_rates.changed, 0);

    // A body over the limit, of unknown length: refused once the bytes read pass it.
    const chunk = new Uint8Array(1024 * 1024).fill(32);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 17) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const big = await fetch(`${srv.url}/api/v1/admin/fx_rates`, {
      method: "POST",
      headers: { ...adminHeaders, "Content-Type": "application/xml" },
      body: stream,
    });
    assert.equal(big.status, 413);
    assert.equal((await big.json()).error.code, "payload_too_large");
  } finally {
    await srv.close();
  }
});

Deno.test("deno task fx -- FILE loads the file into the configured database", async () => {
  const db = await createTestDatabase();
  try {
    const run = async (...args: string[]) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--allow-net",
          "--allow-env",
          "--allow-read",
          "--allow-write",
          "cli/fx.ts",
          "--",
          ...args,
        ],
        env: { DATABASE_URL: db.url },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = (b: Uint8Array) => new TextDecoder().decode(b);
      return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
    };
    const file = new URL("eurofxref-daily.xml", FIXTURES).pathname;
    const ok = await run(file);
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(JSON.parse(ok.stdout), {
      fx_rates: { rates: 4, changed: 4, reconverted: 0, last_day: "2026-10-20" },
    });
    const bad = await run(new URL("../../fx_test.ts", FIXTURES).pathname);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /not well-formed XML|not an ECB/);
    const [{ n }] = await db.pool(1)<[{ n: number }]>`select count(*)::int as n from fx_rates`;
    assert.equal(n, 4);
  } finally {
    await db.close();
  }
});

Deno.test("the daily fetch: one instance fetches when due; a failure is retried in an hour", async () => {
  const db = await createTestDatabase();
  const sql = db.pool(4);
  let hits = 0;
  let status = 200;
  const daily = await Deno.readTextFile(new URL("eurofxref-daily.xml", FIXTURES));
  const ecb = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    hits++;
    // Slow enough that concurrent passes overlap.
    await new Promise((r) => setTimeout(r, 50));
    return new Response(status === 200 ? daily : "down", { status });
  });
  const url = `http://127.0.0.1:${ecb.addr.port}/eurofxref-daily.xml`;
  const clock = new ManualClock("2026-10-20T09:00:00Z");
  const deps = { sql, clock, logger: silentLogger };
  try {
    const outcomes = await Promise.all(
      ["a", "b", "c"].map((instanceId) => fetchRatesIfDue(deps, { url, instanceId })),
    );
    assert.equal(outcomes.filter((o) => o.fetched).length, 1);
    assert.equal(hits, 1);
    const [state] = await sql<[{ next_at: Date; last_day: string; lease_owner: string | null }]>`
      select next_at, last_day::text, lease_owner from fx_fetch`;
    // The 20th's rates fetched in the morning: next after today's publication.
    assert.deepEqual(state, {
      next_at: new Date("2026-10-20T16:00:00Z"),
      last_day: "2026-10-20",
      lease_owner: null,
    });
    assert.equal((await fetchRatesIfDue(deps, { url, instanceId: "a" })).fetched, false);
    clock.set("2026-10-20T16:00:00Z");
    status = 503;
    const failed = await fetchRatesIfDue(deps, { url, instanceId: "b" });
    assert.ok(failed.fetched && failed.error, JSON.stringify(failed));
    const [after] = await sql<[{ next_at: Date }]>`select next_at from fx_fetch`;
    assert.deepEqual(after.next_at, new Date("2026-10-20T17:00:00Z"));
    // A lease left by an instance that died mid-way lapses.
    clock.set("2026-10-21T16:30:00Z");
    await sql`update fx_fetch set lease_owner = 'dead', lease_expires_at = ${new Date(
      "2026-10-21T16:32:00Z",
    )}`;
    status = 200;
    assert.equal((await fetchRatesIfDue(deps, { url, instanceId: "a" })).fetched, false);
    clock.set("2026-10-21T16:33:00Z");
    const retried = await fetchRatesIfDue(deps, { url, instanceId: "a" });
    assert.ok(retried.fetched && !retried.error, JSON.stringify(retried));
    assert.equal(hits, 3);
  } finally {
    await ecb.shutdown();
    await db.close();
  }
});

Deno.test({
  name:
    "the daily fetch loses its connection while storing: nothing of it is kept; the next fetch stores it whole",
  // PGlite serves one connection: nothing can hold a lock beside the fetch, nor end its backend.
  ignore: !Deno.env.get("DATABASE_URL"),
  async fn() {
    const clock = new ManualClock("2026-10-20T17:00:00Z");
    const srv = await startTestServer({ clock });
    const daily = await Deno.readTextFile(new URL("eurofxref-daily.xml", FIXTURES));
    const ecb = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => new Response(daily),
    );
    const url = `http://127.0.0.1:${ecb.addr.port}/eurofxref-daily.xml`;
    const worker = srv.db.pool(2);
    const blocker = srv.db.pool(1);
    const probe = srv.db.pool(1);
    // As in the service's process (main.ts, db/closed_write.ts): a query nobody awaits, failed
    // because its connection was ended, does not end the process (on Citus the transaction's
    // connection leaves one behind).
    const lostQueries: unknown[] = [];
    const survive = (event: PromiseRejectionEvent) => {
      if (!isLostConnection(event.reason)) return;
      event.preventDefault();
      lostQueries.push(event.reason);
    };
    globalThis.addEventListener("unhandledrejection", survive);
    try {
      const project = await createProject(srv.url);
      const path = await generateLink(srv.url, project.key, "production");
      // A purchase in euros, reported in dollars: no rate yet, so it counts nowhere.
      await ingest(srv.url, project.key, "production", [{
        type: "purchase",
        name: "buy",
        link_path: path,
        occurred_at: "2026-10-20T10:00:00Z",
        purchase: {
          transaction_id: "t1",
          version: 1,
          amount: 1000,
          currency: "EUR",
          product_id: "p",
          store: "s",
        },
      }]);
      const total = async () =>
        (await metrics(srv.url, project.key, "production"))[0]!.total_revenue;
      assert.equal(await total(), 0);

      // The purchases are held, so the fetch's transaction stops once it has written the rates,
      // at reconverting; its connection is then ended, as when the instance or the database
      // goes away mid-way.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holding = blocker.begin(async (tx) => {
        await tx`lock table purchase_versions in exclusive mode`;
        locked();
        await held;
      });
      await isLocked;
      const deps = { sql: worker, clock, logger: silentLogger };
      const fetching = fetchRatesIfDue(deps, { url, instanceId: "a" });
      let waiting: { pid: number; rates: boolean }[] = [];
      for (let i = 0; i < 200 && waiting.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 50));
        waiting = await probe<{ pid: number; rates: boolean }[]>`
          select pid, exists (select from pg_locks l where l.pid = a.pid
              and l.relation = 'fx_rates'::regclass and l.mode = 'RowExclusiveLock') as rates
          from pg_stat_activity a
          where datname = current_database() and wait_event_type = 'Lock'`;
      }
      assert.equal(waiting.length, 1, "the fetch's transaction never waited on the purchases");
      assert.ok(waiting[0]!.rates, "the fetch waited before it had written the rates");
      await probe`select pg_terminate_backend(${waiting[0]!.pid}::int)`;
      const lost = await fetching;
      assert.ok(lost.fetched && lost.error, JSON.stringify(lost));
      release();
      await holding;

      const [kept] = await worker<[{ n: number }]>`select count(*)::int as n from fx_rates`;
      assert.equal(kept.n, 0, "rates of the lost fetch were kept");
      assert.equal(await total(), 0);
      const [state] = await worker<[{ next_at: Date; lease_owner: string | null }]>`
        select next_at, lease_owner from fx_fetch`;
      // Released, and due again in an hour.
      assert.deepEqual(state, { next_at: new Date("2026-10-20T18:00:00Z"), lease_owner: null });

      clock.set("2026-10-20T18:00:00Z");
      const again = await fetchRatesIfDue(deps, { url, instanceId: "b" });
      assert.ok(again.fetched && !again.error, JSON.stringify(again));
      const rates = parseEcbRates(daily);
      const [stored] = await worker<[{ n: number }]>`select count(*)::int as n from fx_rates`;
      assert.equal(stored.n, rates.length);
      const usd = rates.find((r) => r.currency === "USD")!.rate;
      assert.equal(await total(), Number(convertMinor(1000, "EUR", "USD", "1", usd)));
    } finally {
      await ecb.shutdown();
      // A pool one of whose connections was terminated waited out end()'s whole timeout
      // (5 s) in srv.close(); nothing of it is needed any more.
      await worker.end({ timeout: 0 });
      await srv.close();
      globalThis.removeEventListener("unhandledrejection", survive);
    }
  },
});

Deno.test("nextFetchAt: after the day's publication, tomorrow's; without the day's rates, an hour later", () => {
  const at = (s: string) => new Date(s);
  assert.deepEqual(
    nextFetchAt(at("2026-10-20T09:00:00Z"), "2026-10-19"),
    at("2026-10-20T16:00:00Z"),
  );
  assert.deepEqual(
    nextFetchAt(at("2026-10-20T16:05:00Z"), "2026-10-20"),
    at("2026-10-21T16:00:00Z"),
  );
  assert.deepEqual(
    nextFetchAt(at("2026-10-24T16:05:00Z"), "2026-10-23"),
    at("2026-10-24T17:05:00Z"),
  );
});

Deno.test("reporting_currency: the admin API, GraphQL and the dashboard set it, and every total follows", async () => {
  const srv = await startTestServer();
  try {
    const project = await createProject(srv.url);
    const path = await generateLink(srv.url, project.key, "production");
    const rates = parseEcbRates(await Deno.readTextFile(new URL("eurofxref-hist.xml", FIXTURES)));
    await storeRates(srv.sql, rates);
    const sent: [string, number, string, string][] = [
      ["t1", 1000, "EUR", "2026-11-02T10:00:00Z"],
      ["t2", 2500, "USD", "2026-11-03T10:00:00Z"],
      // A Saturday: Friday's rate.
      ["t3", 30000, "JPY", "2026-10-31T10:00:00Z"],
      ["t4", 700, "XYZ", "2026-11-03T10:00:00Z"],
    ];
    await ingest(
      srv.url,
      project.key,
      "production",
      sent.map(([tx, amount, currency, at]) => ({
        type: "purchase",
        name: "buy",
        link_path: path,
        occurred_at: at,
        purchase: { transaction_id: tx, version: 1, amount, currency, product_id: "p", store: "s" },
      })),
    );
    const rate = (c: string, day: string) =>
      c === "EUR" ? "1" : rates.filter((r) => r.currency === c && r.day <= day)
        .sort((a, b) => (a.day < b.day ? 1 : -1))[0]!.rate;
    const expected = (to: string) =>
      sent.filter(([, , c]) => c !== "XYZ").reduce((n, [, amount, c, at]) => {
        const day = at.slice(0, 10);
        return n + Number(convertMinor(amount, c, to, rate(c, day), rate(to, day)));
      }, 0);
    const total = async () => (await metrics(srv.url, project.key, "production"))[0]!.total_revenue;
    // A new project reports in USD.
    assert.equal(await total(), expected("USD"));

    const patch = (body: unknown) =>
      call(srv.url, "PATCH", `/api/v1/admin/projects/${project.hashid}`, {
        headers: adminHeaders,
        body,
      });
    const res = await patch({ reporting_currency: "eur" });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.project.reporting_currency, "EUR");
    assert.equal(await total(), expected("EUR"));
    const bad = await patch({ reporting_currency: "EURO" });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, "invalid_field");
    assert.match(bad.body.error.message, /^reporting_currency: /);

    const set = await gql(
      srv.url,
      `mutation($id: ID!) { setReportingCurrency(projectId: $id, currency: "JPY") {
        reportingCurrency } }`,
      { variables: { id: String(project.productionId) }, headers: adminHeaders },
    );
    assert.deepEqual(set.errors, undefined);
    assert.equal(set.data.setReportingCurrency.reportingCurrency, "JPY");
    assert.equal(await total(), expected("JPY"));

    const client = await signInOverHttp(srv.url);
    const page = await getPage(srv.url, `/dashboard/projects/${project.hashid}`, client);
    assert.match(page.text, /<option value="JPY" selected[ >]/);
    const posted = await postForm(
      srv.url,
      `/dashboard/projects/${project.hashid}/reporting_currency`,
      client,
      { _csrf: client.csrf, reporting_currency: "GBP" },
    );
    assert.equal(posted.status, 303, posted.text);
    assert.equal(await total(), expected("GBP"));
    const refused = await postForm(
      srv.url,
      `/dashboard/projects/${project.hashid}/reporting_currency`,
      client,
      { _csrf: client.csrf, reporting_currency: "QQQ" },
    );
    assert.equal(refused.status, 400);
    assert.match(refused.text, /ISO 4217/);
  } finally {
    await srv.close();
  }
});
