// deno run -A bench/drops.ts [--rows N] [--rounds N]: what drop accounting
// (services/destinations/drops.ts) costs before a batch, in the day the retention cutoff falls
// in. Seeds N expired events (default 1,000,000) into the partition of the cutoff's day
// (received from that day's start to the cutoff), then ten destinations with nothing expired
// pending, and times the statement (EXPLAIN (ANALYZE, BUFFERS)) for one destination, as the
// deliverer runs it, and for all of them, as the purge does: the statement before the change
// (every expired event of the table read first) and the one from each destination's position,
// in alternating rounds. Both run inside a transaction rolled back, so neither sees the
// other's writes.
import { parseArgs } from "node:util";
import { CLI_AUDIT } from "../services/access/audit.ts";
import type { Db } from "../db/connect.ts";
import { dropAccounting } from "../services/destinations/drops.ts";
import { ensurePartitions } from "../services/maintenance/partitions.ts";
import { createProject } from "../services/projects/projects.ts";
import { benchDatabase, fmt, median } from "./lib.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rows: { type: "string", default: "1000000" },
    rounds: { type: "string", default: "5" },
  },
});
const ROWS = Number(values.rows);
const ROUNDS = Number(values.rounds);
// deno-lint-ignore no-console
const print = (s: string) => console.log(s);

/** The statement before the change, as it was (services/destinations/drops.ts at 67089cc). */
function oldAccounting(db: Db, cutoff: Date, destinationId: number | null) {
  return db`
    with old as materialized (
      select environment_id, xid, seq, type from feed_events
      where received_at < ${cutoff}
        and xid < feed_horizon()
    ), expired as (
      select d.id, last.xid, last.seq
      from destinations d
      cross join lateral (
        select f.xid, f.seq from old f
        where f.environment_id = d.environment_id
          and (f.xid, f.seq) > (d.cursor_xid, d.cursor_seq)
          and (cardinality(d.event_types) = 0 or f.type = any(d.event_types))
        order by f.xid desc, f.seq desc
        limit 1
      ) last
      where ${destinationId}::int is null or d.id = ${destinationId}
    ), counted as (
      select x.id, x.xid, x.seq, (
        select count(*) from feed_events f
        where f.environment_id = d.environment_id
          and (f.xid, f.seq) > (d.cursor_xid, d.cursor_seq)
          and (f.xid, f.seq) <= (x.xid, x.seq)
          and (cardinality(d.event_types) = 0 or f.type = any(d.event_types))
      ) as n
      from expired x join destinations d on d.id = x.id
    )
    update destinations d set
      dropped = d.dropped + c.n,
      cursor_xid = c.xid,
      cursor_seq = c.seq,
      batch_id = null,
      batch_last_xid = null,
      batch_last_seq = null
    from counted c
    where d.id = c.id
    returning d.id
  `;
}

const db = await benchDatabase();
const { sql } = db;
try {
  const now = new Date();
  const cutoff = new Date(now.getTime() - 7 * 24 * 3600_000);
  const dayStart = new Date(
    Date.UTC(cutoff.getUTCFullYear(), cutoff.getUTCMonth(), cutoff.getUTCDate()),
  );
  await ensurePartitions(sql, "feed_events", cutoff, { behindDays: 1, aheadDays: 1 });
  await ensurePartitions(sql, "feed_events", now, { behindDays: 1, aheadDays: 1 });
  const { project } = await createProject(sql, { name: "drops", enterprise: true }, CLI_AUDIT);
  const env = project.environments.production.project_id;
  const span = cutoff.getTime() - dayStart.getTime();
  const t0 = performance.now();
  const CHUNK = 100_000;
  for (let from = 0; from < ROWS; from += CHUNK) {
    const n = Math.min(CHUNK, ROWS - from);
    await sql`
      insert into feed_events (environment_id, type, received_at, body)
      select ${env}, case when i % 3 = 0 then 'open' else 'install' end,
        ${dayStart}::timestamptz + ((i::float8 / ${ROWS}) * ${span}) * interval '1 millisecond',
        repeat('x', 400)
      from generate_series(${from}::int, ${from + n - 1}::int) i
      order by i
    `;
  }
  // Today's events after them, as a live feed has.
  await sql`
    insert into feed_events (environment_id, type, received_at, body)
    select ${env}, 'open', ${now}::timestamptz - i * interval '1 second', repeat('x', 400)
    from generate_series(1, 10000) i
  `;
  await sql`vacuum analyze feed_events`;
  print(
    `seeded ${ROWS} expired events in one day's partition in ${
      fmt((performance.now() - t0) / 1000)
    } s`,
  );
  const ids: number[] = [];
  for (let i = 0; i < 10; i++) {
    const [d] = await sql<{ id: number }[]>`
      insert into destinations (environment_id, url, event_types, secret_sealed, created_at,
        cursor_xid, cursor_seq)
      values (${env}, 'https://receiver.example.test/in', ${i % 2 ? ["open"] : []}::text[],
        'bench', now(), feed_horizon(), 0)
      returning id
    `;
    ids.push(d!.id);
  }
  const one = ids[0]!;

  interface Explained {
    ms: number;
    blocks: number;
  }
  const explain = async (
    stmt: (tx: Db, cutoff: Date, id: number | null) => unknown,
    id: number | null,
    warm = false,
  ): Promise<Explained> => {
    let out: Explained = { ms: 0, blocks: 0 };
    await sql.begin(async (tx) => {
      // The destinations' records of their last accounting, as the deliverer leaves them
      // (measured again in each round, from the same state).
      if (warm) await dropAccounting(tx, new Date(Date.now() - 7 * 24 * 3600_000 - 5000), null);
      // As accountDrops runs it (without JIT), and the statement before as it ran.
      if (stmt === dropAccounting) await tx`select set_config('jit', 'off', true)`;
      const c = new Date(Date.now() - 7 * 24 * 3600_000);
      const [row] = await tx<
        { "QUERY PLAN": [{ "Execution Time": number; Plan: Record<string, number> }] }[]
      >`
        explain (analyze, buffers, format json) ${stmt(tx, c, id) as never}
      `;
      const plan = row!["QUERY PLAN"][0];
      out = {
        ms: plan["Execution Time"],
        blocks: (plan.Plan["Shared Hit Blocks"] ?? 0) + (plan.Plan["Shared Read Blocks"] ?? 0),
      };
      throw new Rollback();
    }).catch((e) => {
      if (!(e instanceof Rollback)) throw e;
    });
    return out;
  };
  class Rollback extends Error {}

  const cases: [string, () => Promise<Explained>][] = [
    ["before, one destination (each batch)", () => explain(oldAccounting, one)],
    [
      "now, one destination, its record made (each batch)",
      () => explain(dropAccounting, one, true),
    ],
    ["now, one destination, first accounting (no record)", () => explain(dropAccounting, one)],
    ["before, all 10 destinations (the purge)", () => explain(oldAccounting, null)],
    [
      "now, all 10 destinations, records made (the purge)",
      () => explain(dropAccounting, null, true),
    ],
  ];
  const results = new Map<string, Explained[]>(cases.map(([l]) => [l, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const [label, run] of cases) results.get(label)!.push(await run());
  }
  print(
    `| ${ROWS} expired events in the cutoff's day | statement time (median of ${ROUNDS}) | buffers |`,
  );
  print("| --- | --- | --- |");
  for (const [label, xs] of results) {
    print(
      `| ${label} | ${fmt(median(xs.map((x) => x.ms)), 3)} ms | ${
        median(xs.map((x) => x.blocks))
      } |`,
    );
  }
} finally {
  await db.close();
}
