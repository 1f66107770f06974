// GET /api/v1/projects/:project_id/analytics (services/analytics/): random events (every type,
// links with campaigns, countries, platforms, duplicates by id, purchase corrections, times
// across the autumn daylight-saving change of Europe and of the United States) ingested and
// viewed; every query shape (totals, each interval, each zone, each group-by, filters) equals
// the same figures computed from the raw rows in SQL (tests/helpers/analytics_reference.ts),
// before and after the rollups are merged; lifetime sums equal metrics_for_project; every bad
// parameter is a 400 naming it.
import assert from "node:assert/strict";
import { mergeRollups } from "../services/analytics/rollups.ts";
import { DIMENSIONS, INTERVALS, METRICS } from "../services/analytics/query.ts";
import { referenceFigures, type ReferenceRow } from "./helpers/analytics_reference.ts";
import { parseEcbRates } from "../services/fx/ecb.ts";
import { setReportingCurrency, storeRates } from "../services/fx/rates.ts";
import { ManualClock } from "./helpers/clock.ts";
import { generateLink, ingest, type Json, metrics } from "./helpers/sdk.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const clock = new ManualClock("2026-11-10T12:00:00Z");
const srv = await startTestServer({ clock });
Deno.test.afterAll(() => srv.close());
const project = await createProject(srv.url);

/** A small deterministic generator (mulberry32): a failure is reproducible from its seed. */
function random(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!,
  };
}

const SEED = 24;
const rnd = random(SEED);
// 2026-10-20 to 2026-11-06 (UTC): Europe leaves summer time on 25 October, the United States
// on 1 November.
const START = Date.parse("2026-10-20T00:00:00Z");
const SPAN = 17 * 24 * 60 * 60 * 1000;
const paths: string[] = [];
for (const [i, campaign] of ["spring", "spring", "autumn", null].entries()) {
  paths.push(
    await generateLink(srv.url, project.key, "production", {
      title: `Link ${i}`,
      ...(campaign ? { tracking_campaign: campaign, tracking_source: `src${i % 2}` } : {}),
      ...(i === 1 ? { tracking_medium: "email" } : {}),
    }),
  );
}

function randomEvent(i: number): Record<string, unknown> {
  const type = rnd.pick(
    ["open", "install", "reinstall", "reactivation", "app_open", "user_referred", "session"]
      .concat(["purchase", "purchase", "custom"]),
  );
  const event: Record<string, unknown> = {
    id: `e${i}`,
    type,
    occurred_at: new Date(START + rnd.int(SPAN)).toISOString(),
  };
  const path = rnd.pick([...paths, null, "no-such-link"]);
  if (path) event.link_path = path;
  const country = rnd.pick(["DE", "FR", "US", null]);
  if (country) event.geo = { country };
  const platform = rnd.pick(["ios", "android", 7, null]);
  const os = rnd.pick(["iOS 18", "Android 15", null]);
  if (platform !== null || os !== null) event.device = { platform, os };
  // Some come from a link's rule or split variant (the app passing them on), some malformed.
  const decided = rnd.pick([null, null, { rule: "eu", variant: 2 }, { rule: 3 }, { variant: 1 }, {
    rule: "",
    variant: 11,
  }]);
  if (decided) event.attribution = decided;
  if (type === "session") event.time_spent = rnd.int(600);
  if (type === "custom") event.name = rnd.pick(["signup", "share"]);
  if (type === "purchase") {
    event.name = rnd.pick(["buy", "renew"]);
    event.purchase = {
      transaction_id: `t${rnd.int(12)}`,
      // Corrections, late older versions and repeated versions alike.
      version: 1 + rnd.int(4),
      amount: rnd.int(5000) - 500,
      // The reporting currency (USD) as sent in either case, currencies with rates from some
      // day on, and one the ECB has none for.
      currency: rnd.pick(["EUR", "EUR", "USD", "usd", "JPY", "GBP", "KWD", "XYZ"]),
      product_id: "p",
      store: "app_store",
    };
  }
  return event;
}

async function sendRandomEvents(count: number, from: number) {
  const events = Array.from({ length: count }, (_, i) => {
    const event = randomEvent(from + i);
    // A tenth reuse an earlier id (with other content): duplicates, never counted.
    if (from + i > 0 && rnd.next() < 0.1) event.id = `e${rnd.int(from + i)}`;
    return event;
  });
  for (let i = 0; i < events.length; i += 40) {
    await ingest(srv.url, project.key, "production", events.slice(i, i + 40));
  }
}

/** Views through the link host at random moments of the range (the view's time is the hit's). */
async function sendViews(count: number) {
  for (let i = 0; i < count; i++) {
    clock.set(new Date(START + rnd.int(SPAN)));
    const path = rnd.pick(paths);
    const ua = rnd.pick([
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)",
      "Mozilla/5.0 (Linux; Android 14) Chrome/120.0",
      "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0",
    ]);
    // Every other view from a page elsewhere (a referrer to filter by).
    const headers: Record<string, string> = { "User-Agent": ua };
    if (i % 2 === 0) headers.Referer = "https://news.example.org/story";
    const res = await call(srv.url, "GET", `/${path}`, { headers });
    assert.ok(res.status === 200 || res.status === 302, res.text);
    // One at a time: each view is stored with its own time.
    await srv.views.flush();
  }
  clock.set("2026-11-10T12:00:00Z");
}

function analytics(params: Record<string, string>) {
  const qs = new URLSearchParams(params).toString();
  return call(srv.url, "GET", `/api/v1/projects/${project.productionId}/analytics?${qs}`, {
    headers: adminHeaders,
  });
}

const byKey = (rows: ReferenceRow[], kind: "bucket" | "key") => Map.groupBy(rows, (r) => r[kind]);

/** The rows' sums; `byCurrency`: revenue is each currency's own amounts (group_by=currency). */
function sumRows(rows: readonly ReferenceRow[], metricNames: string[], byCurrency = false) {
  const column = (m: string) => (byCurrency && m === "revenue" ? "own_revenue" : m);
  return Object.fromEntries(
    metricNames.map((m) => [m, rows.reduce((n, r) => n + Number(r[column(m)] ?? 0), 0)]),
  );
}

/** The answer equals the raw rows' figures for the same range, zone, filters and grouping. */
async function assertMatchesRaw(params: Record<string, string>) {
  const res = await analytics(params);
  assert.equal(res.status, 200, `${JSON.stringify(params)}: ${res.text}`);
  const answer: Json = res.body;
  const metricNames = (params.metrics ?? "views,installs").split(",");
  const filters = Object.fromEntries(
    Object.entries(params).flatMap(([k, v]) => {
      const m = /^filter\[(.+)\]$/.exec(k);
      return m ? [[m[1]!, v]] : [];
    }),
  );
  const rows = await referenceFigures(srv.sql, {
    environmentId: project.productionId,
    from: new Date(answer.from),
    to: new Date(answer.to),
    tz: params.tz ?? "UTC",
    interval: params.interval ?? null,
    metrics: metricNames,
    groupBy: params.group_by ?? null,
    filters,
  });
  const label = JSON.stringify(params);
  assert.deepEqual(answer.totals, sumRows(rows, metricNames), `totals of ${label}`);
  const byCurrency = params.group_by === "currency";
  const seriesOf = (of: ReferenceRow[], starts: string[], group = false) => {
    const buckets = byKey(of, "bucket");
    return starts.map((start) => ({
      start,
      ...sumRows(buckets.get(start) ?? [], metricNames, group && byCurrency),
    }));
  };
  if (params.interval) {
    const starts: string[] = answer.series.map((p: Json) => p.start);
    // Every bucket, in order, each one interval after the previous in the zone.
    assert.ok(starts.length > 0 && starts[0] === answer.from, label);
    for (const b of byKey(rows, "bucket").keys()) assert.ok(starts.includes(b!), `${b} missing`);
    assert.deepEqual(answer.series, seriesOf(rows, starts), `series of ${label}`);
  } else {
    assert.equal(answer.series, undefined);
  }
  if (params.group_by) {
    const first = metricNames[0]!;
    const groups = [...byKey(rows, "key").entries()]
      .map(([key, of]) => ({ key, of, totals: sumRows(of, metricNames, byCurrency) }))
      // Groups whose every figure is zero are left out.
      .filter((g) => Object.values(g.totals).some((v) => v !== 0))
      .sort((a, b) =>
        b.totals[first]! - a.totals[first]! ||
        (a.key === b.key ? 0 : a.key === null ? 1 : b.key === null ? -1 : a.key < b.key ? -1 : 1)
      )
      .slice(0, Number(params.limit ?? 10));
    assert.deepEqual(
      answer.groups.map((g: Json) => [g.key, g.totals]),
      groups.map((g) => [g.key, g.totals]),
      `groups of ${label}`,
    );
    if (params.interval) {
      const starts = answer.series.map((p: Json) => p.start);
      for (const [i, g] of groups.entries()) {
        assert.deepEqual(
          answer.groups[i].series,
          seriesOf(g.of, starts, true),
          `${g.key} in ${label}`,
        );
      }
    }
  }
  return answer;
}

const RANGE = { from: "2026-10-19T00:00:00Z", to: "2026-11-08T00:00:00Z" };
const ZONES = ["UTC", "Europe/Berlin", "America/New_York"];

/** Every interval in every zone, each with a breakdown and a filter drawn at random. */
async function assertEveryShape() {
  for (const tz of ZONES) {
    for (const interval of [undefined, ...INTERVALS]) {
      const params: Record<string, string> = { ...RANGE, tz };
      if (interval) params.interval = interval;
      params.metrics = [...METRICS].sort(() => rnd.next() - 0.5).slice(0, 1 + rnd.int(4)).join(",");
      params.group_by = rnd.pick(DIMENSIONS);
      params.limit = String(1 + rnd.int(4));
      const filter = rnd.pick(
        [
          null,
          ["country", "DE"],
          ["platform", "ios"],
          ["campaign", "spring"],
          ["event_name", "buy"],
          ["link", paths[0]!],
        ] as const,
      );
      if (filter) params[`filter[${filter[0]}]`] = filter[1];
      // A rule or a variant means something within one link only: asked for with link=.
      if (params.group_by === "rule" || params.group_by === "variant") {
        params["filter[link]"] = paths[0]!;
      }
      await assertMatchesRaw(params);
    }
  }
  // Filtered by one value of a dimension the margins keep, without a breakdown or broken down
  // by that same dimension (answered from the margins), in every zone.
  const marginFilters = [
    ["country", "DE"],
    ["platform", "ios"],
    ["os", "iOS 18"],
    ["browser", "Firefox"],
    ["referrer", "news.example.org"],
    ["event_name", "buy"],
  ] as const;
  for (const [dimension, value] of marginFilters) {
    for (const tz of ZONES) {
      for (const group_by of [null, dimension]) {
        const params: Record<string, string> = { ...RANGE, tz, [`filter[${dimension}]`]: value };
        const interval = rnd.pick([undefined, ...INTERVALS]);
        if (interval) params.interval = interval;
        params.metrics = [...METRICS].sort(() => rnd.next() - 0.5).slice(0, 1 + rnd.int(4))
          .join(",");
        if (group_by) params.group_by = group_by;
        await assertMatchesRaw(params);
      }
    }
    // Something to compare: the value is counted in the range.
    const all = await assertMatchesRaw({
      ...RANGE,
      metrics: METRICS.join(","),
      [`filter[${dimension}]`]: value,
    });
    assert.ok(Object.values(all.totals).some((v) => v !== 0), `${dimension}=${value}`);
  }
  // Two filters at once: both hold, whether or not each alone could be answered from the
  // margins, broken down by neither, by one of them, or by another dimension.
  const pairs = [
    [["country", "DE"], ["platform", "ios"]],
    [["os", "iOS 18"], ["event_name", "buy"]],
    [["country", "DE"], ["campaign", "spring"]],
    [["platform", "ios"], ["link", paths[0]!]],
  ] as const;
  for (const [[d1, v1], [d2, v2]] of pairs) {
    for (const group_by of [null, d1, "browser"]) {
      const params: Record<string, string> = {
        ...RANGE,
        tz: rnd.pick(ZONES),
        metrics: METRICS.join(","),
        [`filter[${d1}]`]: v1,
        [`filter[${d2}]`]: v2,
      };
      if (group_by) params.group_by = group_by;
      const both = await assertMatchesRaw(params);
      // Something to tell the two apart: each filter alone counts more than both together.
      const first = await assertMatchesRaw({
        ...RANGE,
        metrics: METRICS.join(","),
        [`filter[${d1}]`]: v1,
      });
      if (group_by === null) {
        assert.ok(
          Object.keys(first.totals).some((m) => first.totals[m] !== both.totals[m]),
          `${d1}=${v1} and ${d2}=${v2}`,
        );
      }
    }
  }
  for (const group_by of DIMENSIONS) {
    await assertMatchesRaw({
      ...RANGE,
      tz: "Europe/Berlin",
      interval: "day",
      metrics: "installs,revenue,purchases,time_spent,views",
      group_by,
      limit: "3",
      ...(group_by === "rule" || group_by === "variant" ? { "filter[link]": paths[0]! } : {}),
    });
  }
}

/** Stores an ECB file of tests/fixtures/ecb/ as `deno task fx` does. */
async function loadRates(file: string) {
  const xml = await Deno.readTextFile(new URL(`./fixtures/ecb/${file}`, import.meta.url));
  return await storeRates(srv.sql, parseEcbRates(xml));
}

Deno.test("analytics: every query shape equals the raw events' figures, before and after rollups merge", async () => {
  // Rates from 22 October on: earlier purchases in another currency than USD have none yet.
  await loadRates("eurofxref-hist.xml");
  await sendRandomEvents(500, 0);
  await sendViews(25);
  // Appended rows, then some merged, then more appended: the figures never depend on which.
  await assertEveryShape();
  await mergeRollups(srv.sql, new Date(START + SPAN / 2));
  // 20 October's rates convert the purchases of the 20th and 21st (the latest earlier day).
  const loaded = await loadRates("eurofxref-daily.xml");
  assert.ok(loaded.reconverted > 0, JSON.stringify(loaded));
  await sendRandomEvents(300, 500);
  await assertEveryShape();
  // Another reporting currency reconverts every purchase of the project.
  const [{ id }] = await srv.sql<[{ id: number }]>`
    select project_id as id from environments where id = ${project.productionId}`;
  await srv.sql.begin((tx) => setReportingCurrency(tx, id, "JPY"));
  await assertEveryShape();
  await srv.sql.begin((tx) => setReportingCurrency(tx, id, "EUR"));
  const merged = await mergeRollups(srv.sql, new Date("2030-01-01T00:00:00Z"));
  assert.ok(merged.rows > 0);
  const [{ unmerged }] = await srv.sql<[{ unmerged: number }]>`
    select count(*)::int as unmerged from analytics_rollups where not merged`;
  assert.equal(unmerged, 0);
  await assertEveryShape();
});

Deno.test("analytics: a day of the zone has 23 or 25 hours across daylight saving", async () => {
  const answer = await assertMatchesRaw({
    from: "2026-10-24T00:00:00+02:00",
    to: "2026-10-27T00:00:00+01:00",
    tz: "Europe/Berlin",
    interval: "hour",
    metrics: "installs",
  });
  const day = (d: string) => answer.series.filter((p: Json) => p.start.startsWith(d)).length;
  assert.deepEqual([day("2026-10-24"), day("2026-10-25"), day("2026-10-26")], [24, 25, 24]);
  const days = await assertMatchesRaw({ ...RANGE, tz: "Europe/Berlin", interval: "day" });
  assert.ok(days.series.some((p: Json) => p.start === "2026-10-25T00:00:00+02:00"));
  assert.ok(days.series.some((p: Json) => p.start === "2026-10-26T00:00:00+01:00"));
  const weeks = await assertMatchesRaw({ ...RANGE, tz: "America/New_York", interval: "week" });
  // ISO weeks start on Monday.
  for (const p of weeks.series) assert.equal(new Date(p.start).getUTCDay(), 1, p.start);
});

Deno.test("analytics: a date is the start of that day in the query's zone", async () => {
  // New York leaves summer time on 1 November 2026: that day has 25 hours.
  const answer = await assertMatchesRaw({
    from: "2026-11-01",
    to: "2026-11-03",
    tz: "America/New_York",
    interval: "day",
    metrics: "installs,views",
  });
  assert.equal(answer.from, "2026-11-01T00:00:00-04:00");
  assert.equal(answer.to, "2026-11-03T00:00:00-05:00");
  assert.deepEqual(answer.series.map((p: Json) => p.start), [
    "2026-11-01T00:00:00-04:00",
    "2026-11-02T00:00:00-05:00",
  ]);
  const utc = await analytics({ from: "2026-11-01", to: "2026-11-02" });
  assert.equal(utc.status, 200, utc.text);
  assert.equal(utc.body.from, "2026-11-01T00:00:00+00:00");
});

Deno.test("analytics: lifetime sums per link equal metrics_for_project", async () => {
  const answer = await analytics({
    from: "2026-01-01T00:00:00Z",
    to: "2026-12-31T00:00:00Z",
    metrics: "views,opens,installs,reinstalls,reactivations,app_opens,user_referred,time_spent," +
      "revenue",
    group_by: "link",
    limit: "1000",
  });
  assert.equal(answer.status, 200, answer.text);
  const items = await metrics(srv.url, project.key, "production");
  assert.equal(items.length, paths.length);
  for (const item of items) {
    const group = answer.body.groups.find((g: Json) => g.key === item.path);
    const t = group?.totals ?? {};
    assert.deepEqual(
      [t.views, t.opens, t.installs, t.reinstalls, t.reactivations, t.app_opens, t.user_referred],
      [
        item.total_views,
        item.total_opens,
        item.total_installs,
        item.total_reinstalls,
        item.total_reactivations,
        item.total_app_opens,
        item.total_user_referred,
      ],
      item.path,
    );
    assert.equal(t.time_spent, item.total_time_spent, item.path);
    assert.equal(t.revenue, item.total_revenue, item.path);
  }
});

Deno.test("analytics: the range takes `from`'s hour and leaves out `to`'s; 400 days at most", async () => {
  const p = await createProject(srv.url, { name: "Edges" });
  await ingest(srv.url, p.key, "production", [
    { type: "install", occurred_at: "2026-11-05T09:59:59.999Z" },
    { type: "install", occurred_at: "2026-11-05T10:00:00Z" },
    { type: "install", occurred_at: "2026-11-05T10:30:00Z" },
    { type: "install", occurred_at: "2026-11-05T11:00:00Z" },
    { type: "install", occurred_at: "2026-11-05T11:59:00Z" },
  ]);
  // Each range read twice: from the margins (no breakdown) and from the rollups (a breakdown the
  // margins do not keep); both must count the same.
  const installs = async (from: string, to: string) => {
    const counts = [];
    for (const extra of [{}, { group_by: "campaign" }] as Record<string, string>[]) {
      const qs = new URLSearchParams({ from, to, metrics: "installs", ...extra });
      const res = await call(
        srv.url,
        "GET",
        `/api/v1/projects/${p.productionId}/analytics?${qs}`,
        { headers: adminHeaders },
      );
      assert.equal(res.status, 200, res.text);
      counts.push(res.body.totals.installs);
    }
    assert.equal(counts[0], counts[1], `${from} to ${to}: margins and rollups`);
    return counts[0];
  };
  assert.equal(await installs("2026-11-05T10:00:00Z", "2026-11-05T11:00:00Z"), 2);
  assert.equal(await installs("2026-11-05T11:00:00Z", "2026-11-05T12:00:00Z"), 2);
  assert.equal(await installs("2026-11-05T09:00:00Z", "2026-11-05T12:00:00Z"), 5);
  // Exactly 400 days is a range the service answers.
  assert.equal(await installs("2025-10-01T00:00:00Z", "2026-11-05T00:00:00Z"), 0);
});

Deno.test("analytics: every bad parameter is a 400 invalid_field naming it", async () => {
  const cases: [Record<string, string>, string][] = [
    [{ tz: "Mars/Olympus" }, "tz"],
    [{ tz: "EST5EDT+1" }, "tz"],
    [{ tz: "Asia/Kolkata" }, "tz"],
    [{ from: "2025-01-01T00:00:00Z", to: "2026-03-01T00:00:00Z" }, "to"],
    // 400 days are allowed (see below); an hour more is not.
    [{ from: "2025-01-01T00:00:00Z", to: "2026-02-05T01:00:00Z" }, "to"],
    [{ from: "2026-03-01T00:00:00Z", to: "2026-02-01T00:00:00Z" }, "to"],
    [{ from: "yesterday" }, "from"],
    [{ to: "2026-13-01T00:00:00Z" }, "to"],
    [{ interval: "minute" }, "interval"],
    [{ metrics: "views,clicks" }, "metrics"],
    [{ metrics: "" }, "metrics"],
    [{ group_by: "city" }, "group_by"],
    [{ limit: "0" }, "limit"],
    [{ limit: "1001" }, "limit"],
    [{ limit: "ten" }, "limit"],
    [{ "filter[city]": "Berlin" }, "filter[city]"],
    [{ "filter[country]": "" }, "filter[country]"],
    [
      { from: "2025-11-01T00:00:00Z", interval: "hour", group_by: "link", limit: "1000" },
      "interval",
    ],
  ];
  for (const [params, field] of cases) {
    const res = await analytics(params);
    assert.equal(res.status, 400, `${JSON.stringify(params)}: ${res.text}`);
    assert.equal(res.body.error.code, "invalid_field");
    assert.ok(res.body.error.message.startsWith(`${field}: `), res.body.error.message);
  }
  const twice = await call(
    srv.url,
    "GET",
    `/api/v1/projects/${project.productionId}/analytics?filter[country]=DE&filter[country]=FR`,
    { headers: adminHeaders },
  );
  assert.equal(twice.status, 400);
  assert.ok(twice.body.error.message.startsWith("filter[country]: "));
  const anonymous = await call(
    srv.url,
    "GET",
    `/api/v1/projects/${project.productionId}/analytics`,
  );
  assert.equal(anonymous.status, 401);
  const unknown = await call(srv.url, "GET", "/api/v1/projects/999999/analytics", {
    headers: adminHeaders,
  });
  assert.equal(unknown.status, 404);
});

Deno.test("analytics: by default the last 30 days up to now, views and installs, totals only", async () => {
  const res = await analytics({});
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body.totals), ["views", "installs"]);
  assert.equal(res.body.tz, "UTC");
  assert.equal(res.body.series, undefined);
  assert.equal(res.body.groups, undefined);
  // Whole hours around [now - 30 days, now].
  assert.equal(res.body.from, "2026-10-11T12:00:00+00:00");
  assert.equal(res.body.to, "2026-11-10T12:00:00+00:00");
});
