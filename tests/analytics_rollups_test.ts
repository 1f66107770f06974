// The analytics rollups and their margins (services/analytics/rollups.ts, migrations 00013 and
// 00015): a process killed while it stores events and merges rollups leaves every figure equal
// to the raw events (none counted twice or never), by link from the rollups and by country from
// the margins, and each hour's margins equal to its merged rollups; so does sending its batches
// again; the migrations fill the rollups from the history kept and the margins from the
// rollups; retention drops whole months of both after ANALYTICS_ROLLUP_DAYS.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { resolveConfig } from "../config.ts";
import { onCitus } from "../db/cluster.ts";
import { recordEvents } from "../services/events/record.ts";
import { purgeExpired } from "../services/feed/retention.ts";
import { ensurePartitions, listPartitions } from "../services/maintenance/partitions.ts";
import { getEnvironmentOrThrow } from "../services/projects/projects.ts";
import { type Dimension, METRICS } from "../services/analytics/query.ts";
import { setReportingCurrency } from "../services/fx/rates.ts";
import { MARGIN_DIMENSIONS, mergeRollups, ROLLUP_METRICS } from "../services/analytics/rollups.ts";
import { referenceFigures } from "./helpers/analytics_reference.ts";
import { ManualClock } from "./helpers/clock.ts";
import { writerBatch } from "./helpers/rollup_writer.ts";
import { generateLink } from "./helpers/sdk.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const WRITER = fileURLToPath(new URL("./helpers/rollup_writer.ts", import.meta.url));
const clock = new ManualClock("2030-05-01T12:00:00Z");
const srv = await startTestServer({ clock });
Deno.test.afterAll(() => srv.close());

const ALL = { from: "2029-06-01T00:00:00Z", to: "2030-06-01T00:00:00Z" };

/**
 * Every metric per link (from the rollups) and per country (from the margins) over the whole
 * range, as the service answers and from the raw rows.
 */
async function figures(projectId: number) {
  const byLink = await figuresBy(projectId, "link");
  const byCountry = await figuresBy(projectId, "country");
  return {
    answered: [...byLink.answered, ...byCountry.answered],
    expected: [...byLink.expected, ...byCountry.expected],
  };
}

/**
 * The hourly margins that differ from the sums of the merged rollup rows of their hour (per
 * dimension value, all-zero sums left out), the daily margins that differ from the sums of
 * their day's hourly margins, and the links' days that differ from the views of their merged
 * rollup rows (services/analytics/link_days.ts): none, at every moment.
 */
async function marginsOffMergedRollups(): Promise<unknown[]> {
  const metrics = ROLLUP_METRICS.join(", ");
  const sums = ROLLUP_METRICS.map((m) => `sum(${m})::bigint`).join(", ");
  const values = ["('total', null::text)", ...MARGIN_DIMENSIONS.map((d) => `('${d}', r.${d})`)]
    .join(", ");
  const expected = `
    select r.environment_id, r.hour, d.dimension, d.value, ${sums}
    from analytics_rollups r cross join lateral (values ${values}) as d(dimension, value)
    where r.merged
    group by 1, 2, 3, 4
    having ${ROLLUP_METRICS.map((m) => `sum(${m}) <> 0`).join(" or ")}`;
  const margins = (daily: boolean) =>
    `select environment_id, hour, dimension, value, ${metrics} from analytics_margins
    where ${daily ? "" : "not"} daily`;
  const days = `
    select environment_id, date_trunc('day', hour, 'UTC'), dimension, value, ${sums}
    from analytics_margins where not daily
    group by 1, 2, 3, 4
    having ${ROLLUP_METRICS.map((m) => `sum(${m}) <> 0`).join(" or ")}`;
  const differ = (a: string, b: string) =>
    `(${a} except all ${b}) union all (${b} except all ${a})`;
  const linkDays = `
    select environment_id, link_id, date_trunc('day', hour, 'UTC'), sum(views)::bigint
    from analytics_rollups where merged and link_id is not null
    group by 1, 2, 3 having sum(views) <> 0`;
  const storedLinkDays = `select environment_id, link_id, day, views from analytics_link_days`;
  return [
    ...await srv.sql.unsafe(
      `${differ(expected, margins(false))} union all ${differ(days, margins(true))}`,
    ),
    ...await srv.sql.unsafe(differ(linkDays, storedLinkDays)),
  ];
}

async function figuresBy(projectId: number, groupBy: Dimension) {
  const res = await call(
    srv.url,
    "GET",
    `/api/v1/projects/${projectId}/analytics?${new URLSearchParams({
      ...ALL,
      metrics: METRICS.join(","),
      group_by: groupBy,
      limit: "1000",
    })}`,
    { headers: adminHeaders },
  );
  assert.equal(res.status, 200, res.text);
  const raw = await referenceFigures(srv.sql, {
    environmentId: projectId,
    from: new Date(ALL.from),
    to: new Date(ALL.to),
    tz: "UTC",
    interval: null,
    metrics: [...METRICS],
    groupBy,
    filters: {},
  });
  const expected = raw
    .map((r) => ({
      key: `${groupBy} ${r.key}`,
      totals: Object.fromEntries(METRICS.map((m) => [m, Number(r[m])])),
    }))
    .sort((a, b) => (a.key ?? "~").localeCompare(b.key ?? "~"));
  const answered = res.body.groups
    .map((g: { key: string | null; totals: Record<string, number> }) => ({
      key: `${groupBy} ${g.key}`,
      totals: g.totals,
    }))
    .sort((a: { key: string | null }, b: { key: string | null }) =>
      (a.key ?? "~").localeCompare(b.key ?? "~")
    );
  return { answered, expected };
}

Deno.test({
  name: "a process killed while storing events and merging rollups leaves every figure exact",
  // PGlite serves one connection: no second process can write to it.
  ignore: srv.db.embedded,
  async fn() {
    const project = await createProject(srv.url);
    const paths: string[] = [];
    for (let i = 0; i < 3; i++) {
      paths.push(await generateLink(srv.url, project.key, "production", { title: `L${i}` }));
    }
    let sent = 0;
    for (const [round, first] of [0, 1000, 2000].entries()) {
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          WRITER,
          srv.db.url,
          String(project.productionId),
          paths.join(","),
          String(first),
        ],
        stdout: "piped",
        stderr: "null",
      }).spawn();
      // Killed at a different moment each round, while batches and merges are under way.
      let out = "";
      const reader = child.stdout.getReader();
      while ((out.match(/stored/g) ?? []).length < 4 + round * 3) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the writer stopped: ${out}`);
        out += new TextDecoder().decode(value);
      }
      await new Promise((r) => setTimeout(r, 7 * round));
      child.kill("SIGKILL");
      await child.status;
      reader.releaseLock();
      await child.stdout.cancel().catch(() => {});
      const last = Math.max(...[...out.matchAll(/stored (\d+)/g)].map((m) => Number(m[1])));
      sent = Math.max(sent, last + 3);
      const { answered, expected } = await figures(project.productionId);
      assert.ok(answered.length > 0);
      assert.deepEqual(answered, expected, `after kill ${round}`);
      assert.deepEqual(await marginsOffMergedRollups(), [], `margins after kill ${round}`);
    }

    // The client sends every batch again (it never heard back about some): duplicates count
    // nothing, and what the killed process had not stored is counted once.
    const env = await getEnvironmentOrThrow(srv.sql, project.productionId);
    const ctx = { environment: env, clock, linkBaseUrl: "https://lnk.example.test" };
    for (const first of [0, 1000, 2000]) {
      for (let n = first; n < first + 15; n++) {
        await recordEvents(srv.sql, ctx, writerBatch(n, paths));
      }
    }
    assert.ok(sent > 0);
    const { answered, expected } = await figures(project.productionId);
    assert.deepEqual(answered, expected);
    // Every event of those batches, once.
    const batches = [0, 1000, 2000].flatMap((first) =>
      Array.from({ length: 15 }, (_, i) => writerBatch(first + i, paths))
    );
    for (const type of ["install", "view"] as const) {
      let counted = 0;
      for (const g of answered) if (g.key.startsWith("link ")) counted += g.totals[`${type}s`]!;
      assert.equal(counted, batches.flat().filter((e) => e.type === type).length, type);
    }
  },
});

// On a Citus cluster this test cannot apply: it takes the database back to before 00013 by
// dropping tables that 00018 distributed, and runs 00013 and 00015 again, which would create
// them as tables of the coordinator alone, after the migration that distributes them. On Citus
// every migration runs on a fresh database, in one transaction (docs/SCALING.md, "What the
// migrations do there"); upgrading a database made before 00013 there is not supported.
const upgradeOnCitus = "skipped on Citus: upgrading a database from before 00013 is not " +
  "supported there (the test re-creates tables that 00018 already distributed)";
// deno-lint-ignore no-console
if (onCitus()) console.log(upgradeOnCitus);

Deno.test({
  name: "the migrations fill the rollups from the history still kept, and their margins",
  ignore: onCitus(),
  fn: async () => {
    const project = await createProject(srv.url);
    const paths = [
      await generateLink(srv.url, project.key, "production", { tracking_campaign: "c" }),
      await generateLink(srv.url, project.key, "production"),
    ];
    const env = await getEnvironmentOrThrow(srv.sql, project.productionId);
    const ctx = { environment: env, clock, linkBaseUrl: "https://lnk.example.test" };
    for (let n = 0; n < 6; n++) await recordEvents(srv.sql, ctx, writerBatch(n, paths));
    await mergeRollups(srv.sql, new Date("2031-01-01T00:00:00Z"));
    // The project sold in euros: the upgrade (00027) makes that its reporting currency.
    const [{ id }] = await srv.sql<[{ id: number }]>`
      select project_id as id from environments where id = ${project.productionId}`;
    await srv.sql.begin((tx) => setReportingCurrency(tx, id, "EUR"));
    const before = await figures(project.productionId);
    assert.deepEqual(before.answered, before.expected);

    // As before the upgrade: no rollups nor margins, purchase versions without their bucket.
    // Then the migrations' own text.
    await srv.sql`drop table analytics_link_days`;
    await srv.sql`drop table analytics_margins`;
    await srv.sql`drop table analytics_rollups`;
    await srv.sql`alter table purchase_versions drop column hour, drop column country,
    drop column platform, drop column os`;
    const run = async (name: string) => {
      const migration = fileURLToPath(
        new URL(`../db/migrations/${name}/index.sql`, import.meta.url),
      );
      await srv.sql.begin((tx) => tx.file(migration));
    };
    await run("00013_analytics_rollups");
    await run("00015_analytics_margins");
    // The later migrations' columns of the re-created tables (00023's rule and variant), then
    // 00027's own text: it moves each current purchase version to its currency's row.
    await srv.sql`alter table analytics_rollups add column rule text, add column variant smallint`;
    await run("00027_fx");
    // And 00033's: the links' days of the merged rollups, in the rollups' months.
    await run("00033_link_view_days");
    const after = await figures(project.productionId);
    assert.deepEqual(after.answered, before.expected);
    assert.deepEqual(await marginsOffMergedRollups(), []);
    const [{ margins }] = await srv.sql<[{ margins: number }]>`
    select count(*)::int as margins from analytics_margins`;
    assert.ok(margins > 0, "the merged rollups have their margins");
    const [{ linkDays }] = await srv.sql<[{ linkDays: number }]>`
    select count(*)::int as "linkDays" from analytics_link_days`;
    assert.ok(linkDays > 0, "the merged rollups' links have their days");
    // Months of their own: the default partitions start empty.
    const [{ n }] = await srv.sql<[{ n: number }]>`
    select (select count(*) from analytics_rollups_default)
      + (select count(*) from analytics_margins_default)
      + (select count(*) from analytics_link_days_default) as n`;
    assert.equal(Number(n), 0);
    for (const table of ["analytics_rollups", "analytics_margins", "analytics_link_days"]) {
      assert.ok((await listPartitions(srv.sql, table)).some((p) => !p.isDefault), table);
    }
  },
});

Deno.test("rollups are kept ANALYTICS_ROLLUP_DAYS and dropped by whole months", async () => {
  // The rollups, their margins and their links' days go by the same months.
  const TABLES = ["analytics_rollups", "analytics_margins", "analytics_link_days"];
  assert.equal(resolveConfig({}).analyticsRollupDays, 400);
  assert.equal(resolveConfig({ ANALYTICS_ROLLUP_DAYS: "30" }).analyticsRollupDays, 30);
  assert.throws(
    () => resolveConfig({ ANALYTICS_ROLLUP_DAYS: "0" }),
    /^ConfigError: ANALYTICS_ROLLUP_DAYS: /,
  );

  const now = new Date("2031-08-15T00:00:00Z");
  for (const at of ["2031-05-10T00:00:00Z", "2031-06-10T00:00:00Z", "2031-08-10T00:00:00Z"]) {
    for (const table of TABLES) {
      await ensurePartitions(srv.sql, table, new Date(at), { behindDays: 0, aheadDays: 0 });
    }
  }
  const insert = async (hour: string) => {
    await srv.sql`insert into analytics_rollups (environment_id, hour, views, merged)
      values (1, ${hour}, 1, true)`;
    await srv.sql`insert into analytics_margins (environment_id, hour, dimension, views)
      values (1, ${hour}, 'total', 1)`;
    // A link's day: its midnight (each of these hours is the only one of its day).
    await srv.sql`insert into analytics_link_days (environment_id, link_id, day, views)
      values (1, 1, date_trunc('day', ${hour}::timestamptz, 'UTC'), 1)`;
  };
  // June 30 is 46 days before now, in June's partition; March's row waits in the default.
  for (
    const hour of [
      "2031-03-01T00:00:00Z",
      "2031-05-20T00:00:00Z",
      "2031-06-30T23:00:00Z",
      "2031-08-01T00:00:00Z",
    ]
  ) await insert(hour);
  const result = await purgeExpired(srv.sql, now, 90, { rollupDays: 60 });
  // Cutoff 2031-06-16: May goes whole, June stays (it ends after the cutoff), March's row goes
  // (earlier tests' months, all before the cutoff, go too).
  const dropped = (result.droppedPartitions ?? []).map((p) => p.partition);
  for (const table of TABLES) {
    assert.ok(dropped.includes(`${table}_p203105`), String(dropped));
    assert.ok(
      !dropped.some((p) => p.startsWith(table) && p >= `${table}_p203106`),
      String(dropped),
    );
  }
  assert.ok(result.analyticsRollups! >= 6);
  for (
    const [table, column] of [...TABLES.slice(0, 2).map((t) => [t, "hour"]), [TABLES[2], "day"]]
  ) {
    const left = await srv.sql.unsafe<{ at: Date }[]>(
      `select ${column} as at from ${table}
      where environment_id = 1 and ${column} >= '2031-01-01' order by 1`,
    );
    assert.deepEqual(left.map((r) => r.at.toISOString()), [
      column === "day" ? "2031-06-30T00:00:00.000Z" : "2031-06-30T23:00:00.000Z",
      "2031-08-01T00:00:00.000Z",
    ], table);
  }
});
