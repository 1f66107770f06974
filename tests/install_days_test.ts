// The attributed installs per UTC day (services/attribution/install_days.ts): the environment's
// funnel counts its installs and their median from the days, the queue and the range's edge
// hours, and must answer what a count over the stored history answers, in any zone, before and
// after the fold, with late installs arriving into days already folded; a fold that dies
// mid-way changes nothing.
import assert from "node:assert/strict";
import { rangesOfWholeHours } from "./helpers/ranges.ts";
import { ManualClock, silentLogger } from "./helpers/clock.ts";
import { maintainRollups } from "../services/maintenance/jobs.ts";
import { generateLink, ingest } from "./helpers/sdk.ts";
import {
  adminHeaders,
  call,
  createProject,
  CURSOR_SECRET,
  startTestServer,
} from "./helpers/server.ts";
import { ClickIds } from "../services/attribution/click_ids.ts";
import { foldInstalls } from "../services/attribution/install_days.ts";
import { seededRandom } from "../services/links/bayes.ts";
import { onCitus } from "../db/cluster.ts";
import { isClosedConnectionWrite, isLostConnection } from "../db/closed_write.ts";
import { connect } from "../db/connect.ts";
import { migrate } from "../db/migrate.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { serveApp } from "./helpers/server.ts";

const NOW = "2026-06-20T12:00:00.000Z";
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const clock = new ManualClock(NOW);
const srv = await startTestServer({ clock });
Deno.test.afterAll(() => srv.close());
const clickIds = new ClickIds(CURSOR_SECRET);

// deno-lint-ignore no-explicit-any
type Json = any;

// The service's seeded generator (mulberry32): a failure can be replayed from its seed.
const prng = seededRandom;

const p = await createProject(srv.url);
const env = p.productionId;
const paths = [
  await generateLink(srv.url, p.key, "production"),
  await generateLink(srv.url, p.key, "production"),
];
const linkIds = (await srv.sql<{ id: number }[]>`
  select id from links where environment_id = ${env} order by id`).map((r) => r.id);

let sent = 0;
/**
 * `n` installs over the `days` days before NOW, as the app sends them: most through a click id
 * (seconds from one second to about 20 days, many below two minutes, some repeated), the rest by
 * the link's path (no click, no seconds).
 */
async function sendInstalls(random: () => number, n: number, days: number) {
  const events = [];
  for (let i = 0; i < n; i++) {
    const at = Date.parse(NOW) - Math.floor(random() * days * DAY);
    const r = random();
    const seconds = r < 0.3
      ? Math.floor(random() * 120)
      : r < 0.4
      ? 3_600
      : Math.floor(120 + random() ** 3 * 20 * 86_400);
    const link = Math.floor(random() * 2);
    const occurred_at = new Date(at).toISOString();
    events.push(
      random() < 0.85
        ? {
          id: `i${++sent}`,
          type: "install",
          occurred_at,
          attribution: {
            click_id: clickIds.mint({
              environmentId: env,
              linkId: linkIds[link]!,
              clickedAt: new Date(at - seconds * 1000),
            }),
          },
        }
        : { id: `i${++sent}`, type: "install", occurred_at, link_path: paths[link]! },
    );
  }
  for (let i = 0; i < events.length; i += 100) {
    await ingest(srv.url, p.key, "production", events.slice(i, i + 100));
  }
}

/**
 * The installs of [from, to) and their median seconds, counted over the stored history: the
 * envelopes of the environment's attributed installs, the seconds from their click (at least 0).
 */
async function fromHistory(from: Date, to: Date) {
  const [row] = await srv.sql<{ installs: number; median: number | null }[]>`
    with i as (
      select occurred_at, body::json -> 'attribution' ->> 'clicked_at' as clicked
      from analytics_events
      where environment_id = ${env} and type = 'install' and body::json -> 'link' is not null
        and occurred_at >= ${from} and occurred_at < ${to}
    )
    select count(*)::int as installs,
      -- greatest() ignores a null: installs without a click stay null, out of the median.
      percentile_cont(0.5) within group (order by case when clicked is not null
        then greatest(0, floor(extract(epoch from occurred_at - clicked::timestamptz))) end)
        as median
    from i`;
  return { installs: row!.installs, median: row!.median };
}

async function funnelTotals(from: Date, to: Date, tz: string) {
  const qs = new URLSearchParams({ from: from.toISOString(), to: to.toISOString(), tz });
  const res = await call<Json>(srv.url, "GET", `/api/v1/projects/${env}/analytics/funnel?${qs}`, {
    headers: adminHeaders,
  });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function assertMatchesHistory(random: () => number, stage: string) {
  for (const [from, to, tz] of rangesOfWholeHours(NOW, random)) {
    const body = await funnelTotals(from, to, tz);
    // The route widens to whole hours of the zone: these already are, in every zone used here.
    assert.equal(Date.parse(body.from), from.getTime(), `${stage}: ${body.from}`);
    const expected = await fromHistory(from, to);
    const label = `${stage}: ${from.toISOString()} to ${to.toISOString()} (${tz})`;
    assert.equal(body.totals.installs, expected.installs, label);
    assert.equal(body.totals.median_seconds_to_install, expected.median, label);
  }
}

Deno.test("install days: the funnel's installs and median equal the history's, folded or not", async () => {
  const random = prng(36);
  await sendInstalls(random, 600, 14);
  await assertMatchesHistory(random, "queued");
  const folded = await foldInstalls(srv.sql);
  assert.ok(folded > 0, "nothing was folded");
  const [queue] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from attributed_install_queue where environment_id = ${env}`;
  assert.equal(queue!.n, 0);
  await assertMatchesHistory(random, "folded");
  // Late installs, into days already folded: queued beside them until the next fold.
  await sendInstalls(random, 200, 14);
  await assertMatchesHistory(random, "late");
  // The background job's pass folds them (beside the rollups' merge).
  await maintainRollups({ sql: srv.sql, clock, logger: silentLogger });
  const [left] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from attributed_install_queue where environment_id = ${env}`;
  assert.equal(left!.n, 0);
  await assertMatchesHistory(random, "folded again");
  // Every install is in its day once.
  const [sums] = await srv.sql<{ days: number; rows: number }[]>`
    select (select sum(installs)::int from attributed_install_days
        where environment_id = ${env}) as days,
      (select count(*)::int from attributed_installs where environment_id = ${env}) as rows`;
  assert.equal(sums!.days, sums!.rows);
});

Deno.test({
  name: "install days: a fold that dies before its commit leaves the queue, the next one folds it",
  // Three connections at once, which the embedded database does not serve; under Citus the
  // fold's statement waits on a worker's shard, out of the coordinator's sight.
  ignore: srv.db.embedded || onCitus(),
  fn: async () => {
    const random = prng(7);
    await foldInstalls(srv.sql);
    await sendInstalls(random, 50, 2);
    const state = async () => {
      const [row] = await srv.sql<{ queued: number; days: number }[]>`
        select (select count(*)::int from attributed_install_queue
            where environment_id = ${env}) as queued,
          (select coalesce(sum(installs), 0)::int from attributed_install_days
            where environment_id = ${env}) as days`;
      return row!;
    };
    const before = await state();
    assert.ok(before.queued > 0);
    const folder = srv.db.pool(1);
    const blocker = srv.db.pool(1);
    const probe = srv.db.pool(1);
    // postgres.js may still write to, or wait on, the terminated connection
    // (db/closed_write.ts): kept from failing the test, as the service keeps it from ending.
    const write = (event: ErrorEvent) => {
      if (isClosedConnectionWrite(event.error)) event.preventDefault();
    };
    const rejection = (event: PromiseRejectionEvent) => {
      if (isLostConnection(event.reason)) event.preventDefault();
    };
    globalThis.addEventListener("error", write);
    globalThis.addEventListener("unhandledrejection", rejection);
    try {
      // A transaction holding the days locked: the fold deletes the queue, then waits to add it.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holding = blocker.begin(async (tx) => {
        await tx`lock table attributed_install_days in exclusive mode`;
        locked();
        await held;
      });
      await isLocked;
      const folding = foldInstalls(folder).then(() => null, (err) => err);
      let waiting: { pid: number }[] = [];
      for (let i = 0; i < 200 && waiting.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 50));
        waiting = await probe<{ pid: number }[]>`
          select pid from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'
            and query like '%attributed_install_queue%'`;
      }
      assert.equal(waiting.length, 1, "the fold never waited on the days");
      await probe`select pg_terminate_backend(${waiting[0]!.pid}::int)`;
      assert.ok(await folding, "the fold did not fail with its connection");
      release();
      await holding;
      assert.deepEqual(await state(), before, "the dead fold changed the queue or the days");
      assert.equal(await foldInstalls(srv.sql), before.queued);
      assert.deepEqual(await state(), { queued: 0, days: before.days + before.queued });
      await assertMatchesHistory(random, "after the dead fold");
    } finally {
      await Promise.all([folder, blocker, probe].map((s) => s.end({ timeout: 0 })));
      globalThis.removeEventListener("error", write);
      globalThis.removeEventListener("unhandledrejection", rejection);
    }
  },
});

Deno.test("install days: migration 00032 buckets and folds the installs stored before it", async () => {
  const db = await createTestDatabase({ migrate: false });
  try {
    await migrate(db.url, { upTo: 31 });
    const sql = connect(db.url, 1);
    const random = prng(32);
    try {
      // The project and its link made through the API of an instance over the old schema.
      const before = serveApp(db, { sql });
      const made = await createProject(before.url);
      await generateLink(before.url, made.key, "production", { title: "Up" });
      await before.close();
      const envId = made.productionId;
      const [link] = await sql<{ id: number }[]>`
        select id from links where environment_id = ${envId}`;
      // Installs as 00028 to 00031 stored them: no bucket, no queue.
      const rows = Array.from({ length: 400 }, () => ({
        at: new Date(Date.parse(NOW) - Math.floor(random() * 10 * DAY)).toISOString(),
        seconds: random() < 0.2 ? null : Math.floor(random() ** 3 * 9 * 86_400),
      }));
      await sql`
        insert into attributed_installs (environment_id, occurred_at, link_id, seconds)
        select ${envId}, t.at, ${link!.id}, t.seconds
        from json_to_recordset((${JSON.stringify(rows)}::text)::json)
          as t(at timestamptz, seconds bigint)`;
      await sql.end();
      await migrate(db.url);
      // One connection: the embedded database serves one at a time.
      const pool = connect(db.url, 1);
      const app = serveApp(db, { sql: pool });
      try {
        const [check] = await pool<{ days: number; unbucketed: number; queued: number }[]>`
          select (select sum(installs)::int from attributed_install_days) as days,
            (select count(*)::int from attributed_installs
              where seconds is not null and bucket is null) as unbucketed,
            (select count(*)::int from attributed_install_queue) as queued`;
        assert.deepEqual({ ...check }, { days: 400, unbucketed: 0, queued: 0 });
        // The environment's funnel over every range equals the installs' own count and median.
        const end = Math.floor(Date.parse(NOW) / HOUR) * HOUR + HOUR;
        for (
          const [hours, tz] of [[5, "UTC"], [36, "Asia/Tokyo"], [
            24 * 11,
            "America/New_York",
          ]] as const
        ) {
          const from = new Date(end - hours * HOUR);
          const to = new Date(end);
          const qs = new URLSearchParams({ from: from.toISOString(), to: to.toISOString(), tz });
          const res = await call<Json>(
            app.url,
            "GET",
            `/api/v1/projects/${envId}/analytics/funnel?${qs}`,
            { headers: adminHeaders },
          );
          assert.equal(res.status, 200, res.text);
          const [expected] = await pool<{ installs: number; median: number | null }[]>`
            select count(*)::int as installs,
              percentile_cont(0.5) within group (order by seconds) as median
            from attributed_installs
            where environment_id = ${envId} and occurred_at >= ${from} and occurred_at < ${to}`;
          assert.equal(res.body.totals.installs, expected!.installs, `${hours} h`);
          assert.equal(res.body.totals.median_seconds_to_install, expected!.median, `${hours} h`);
        }
      } finally {
        await app.close();
        await pool.end({ timeout: 5 });
      }
    } finally {
      await sql.end({ timeout: 1 }).catch(() => {});
    }
  } finally {
    await db.close();
  }
});
