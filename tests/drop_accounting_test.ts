// Drop accounting's cost (services/destinations/drops.ts): before every batch it must read what
// the destination has to drop, not every expired event of the day the retention cutoff falls
// in (a day's partition keeps its expired events until the whole day is dropped). The rows the
// statement reads are counted in its EXPLAIN ANALYZE; it stays exact meanwhile.
import assert from "node:assert/strict";
import { onCitus } from "../db/cluster.ts";
import { accountDrops, dropAccounting } from "../services/destinations/drops.ts";
import { waitForHorizon } from "../services/feed/feed.ts";
import { ensurePartitions } from "../services/maintenance/partitions.ts";
import { ManualClock } from "./helpers/clock.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const DAY_MS = 24 * 3600_000;
// Noon: the cutoff falls in the middle of its day, whose partition holds events on both sides.
const now = new Date("2026-11-20T12:00:00.000Z");
const clock = new ManualClock(now);
const srv = await startTestServer({ clock, config: { DESTINATIONS_ALLOW_PRIVATE: "true" } });

const api = (method: string, path: string, body?: unknown) =>
  call(srv.url, method, `/api/v1${path}`, { headers: adminHeaders, body });

async function destination(projectId: number, eventTypes?: string[]): Promise<number> {
  const res = await api("POST", `/projects/${projectId}/destinations`, {
    url: "http://127.0.0.1:9/in",
    ...(eventTypes ? { event_types: eventTypes } : {}),
  });
  assert.equal(res.status, 201, res.text);
  return res.body.destination.id;
}

interface PlanNode {
  "Relation Name"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Rows Removed by Filter"?: number;
  "Rows Removed by Index Recheck"?: number;
  Plans?: PlanNode[];
}

/** Rows read from feed_events by the plan's scans (returned or filtered out, every loop). */
function feedRowsRead(node: PlanNode): number {
  let n = 0;
  if (node["Relation Name"]?.startsWith("feed_events")) {
    n += ((node["Actual Rows"] ?? 0) + (node["Rows Removed by Filter"] ?? 0) +
      (node["Rows Removed by Index Recheck"] ?? 0)) * (node["Actual Loops"] ?? 1);
  }
  for (const child of node.Plans ?? []) n += feedRowsRead(child);
  return n;
}

/**
 * Runs the accounting as of `cutoff` for every destination; the rows it read. On Citus the
 * accounting is another path (accountDrops' per-destination statements, without the record of
 * the last accounting: docs/SCALING.md): run as such, its counts are checked, and its reads are
 * not measured (0 is answered).
 */
async function accountExplained(cutoff: Date): Promise<number> {
  if (onCitus()) {
    await accountDrops(srv.sql, cutoff, null);
    return 0;
  }
  const [row] = await srv.sql<{ "QUERY PLAN": [{ Plan: PlanNode }] }[]>`
    explain (analyze, format json) ${dropAccounting(srv.sql, cutoff, null)}
  `;
  return feedRowsRead(row!["QUERY PLAN"][0].Plan);
}

async function destinations(ids: number[]) {
  const rows = await srv.sql<
    { id: number; dropped: number; cursor: string; batch: string | null }[]
  >`
    select id, dropped::int, cursor_xid || ':' || cursor_seq as cursor, batch_id as batch
    from destinations where id in ${srv.sql(ids)}
  `;
  return new Map(rows.map((r) => [r.id, r]));
}

/** Inserts `count` events received `from` onwards one ms apart, in one transaction. */
async function seed(environmentId: number, type: string, count: number, from: Date) {
  const [last] = await srv.sql<{ position: string }[]>`
    insert into feed_events (environment_id, type, received_at, body)
    select ${environmentId}, ${type}, ${from}::timestamptz + i * interval '1 millisecond', '{}'
    from generate_series(0, ${count - 1}) i
    order by i
    returning xid || ':' || seq as position
  `.then((rows) => rows.slice(-1));
  return last!.position;
}

/**
 * Waits until the feed's horizon is past `position` (xid:seq): accounting, like a page, goes no
 * further than the horizon, and the horizon is the whole server's, so a transaction of another
 * test's database running beside this one can hold it back for a moment.
 */
async function horizonPast(environmentId: number, position: string) {
  const passed = await waitForHorizon(srv.sql, environmentId, position.split(":")[0]!, 30_000);
  assert.ok(passed, `the feed's horizon did not pass ${position} in 30 s`);
}

Deno.test("drop accounting reads what destinations have to drop, not every expired event of the cutoff's day", async () => {
  const p = await createProject(srv.url);
  const env = p.productionId;
  const cutoff = new Date(now.getTime() - 7 * DAY_MS);
  // The cutoff's day and the day before have their partitions, as in production.
  await ensurePartitions(srv.sql, "feed_events", cutoff, { behindDays: 4, aheadDays: 1 });

  const lagging = await destination(env); // its receiver is down: all of it stays pending
  const typed = await destination(env, ["install"]);
  // A day's worth, scaled down: expired events of the cutoff's day, three that expire in the
  // next two seconds, then the rest of the day (not expired).
  const EXPIRED = 5000;
  await seed(env, "open", EXPIRED, new Date(cutoff.getTime() - 3600_000));
  const soon = await seed(env, "open", 3, new Date(cutoff.getTime() + 500));
  await horizonPast(env, await seed(env, "open", 5000, new Date(cutoff.getTime() + 3600_000)));
  const caughtUp = await destination(env); // created now: nothing of the above is pending
  await srv.sql`analyze feed_events`;
  const ids = [lagging, typed, caughtUp];

  // First accounting: the lagging destination drops the expired events of its position onwards.
  await accountExplained(cutoff);
  let d = await destinations(ids);
  assert.equal(d.get(lagging)!.dropped, EXPIRED);
  assert.equal(d.get(typed)!.dropped, 0);
  assert.equal(d.get(caughtUp)!.dropped, 0);

  // Two seconds later: three more expired, of the lagging destination only. The statement
  // reads a handful of rows, not the 5,003 expired ones (the statement before this change read
  // every one of them, before every batch of every destination).
  const read = await accountExplained(new Date(cutoff.getTime() + 2000));
  d = await destinations(ids);
  assert.equal(d.get(lagging)!.dropped, EXPIRED + 3);
  assert.equal(d.get(lagging)!.cursor, soon, "moved past the last expired event, no further");
  assert.equal(d.get(typed)!.dropped, 0);
  assert.equal(d.get(caughtUp)!.dropped, 0);
  assert.ok(read < 50, `read ${read} rows of feed_events`);

  // Nothing more expired: still a handful.
  const idle = await accountExplained(new Date(cutoff.getTime() + 2500));
  assert.ok(idle < 50, `read ${idle} rows of feed_events`);
  d = await destinations(ids);
  assert.equal(d.get(lagging)!.dropped, EXPIRED + 3);

  // received_at is not ordered with positions: an event captured now with a received_at three
  // days before the cutoff (ingestion's clock, a transaction that ran long) is after every
  // destination's place, and expired. Every one of them counts it.
  const late = await seed(env, "install", 1, new Date(cutoff.getTime() - 3 * DAY_MS));
  await horizonPast(env, late);
  const lateRead = await accountExplained(new Date(cutoff.getTime() + 3000));
  d = await destinations(ids);
  // The lagging destination moves past it too, and the rest of the cutoff's day before it in
  // the feed's order counts as dropped with it (the rule was so before: delivery is in order).
  assert.equal(d.get(lagging)!.dropped, EXPIRED + 3 + 5000 + 1);
  assert.equal(d.get(typed)!.dropped, 1);
  assert.equal(d.get(caughtUp)!.dropped, 1);
  for (const id of ids) assert.equal(d.get(id)!.cursor, late);
  // Dropping costs the count of what each destination moves past (5,001 events, 10,004
  // passed over by the typed one, 1), and finding it a handful more.
  assert.ok(lateRead <= 5001 + 10004 + 1 + 50, `read ${lateRead} rows of feed_events`);
});

Deno.test("teardown", async () => {
  await srv.close();
});
