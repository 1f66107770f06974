// The analytics history's daily partitions (services/maintenance/partitions.ts): created ahead by the job,
// rows of other days caught by the default partition and moved out, whole days dropped by
// retention, client ids unique across days, the lock_timeout, and migration 00009 moving
// existing rows. Time moves through the injected clock only.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { onCitus } from "../db/cluster.ts";
import { connect } from "../db/connect.ts";
import { migrate } from "../db/migrate.ts";
import { purgeExpired } from "../services/feed/retention.ts";
import { maintainPartitions } from "../services/maintenance/jobs.ts";
import { createLogger } from "../infra/log.ts";
import {
  dropPartitionsBefore,
  ensurePartitions,
  listPartitions,
  PARTITIONED_TABLES,
} from "../services/maintenance/partitions.ts";
import { ManualClock } from "./helpers/clock.ts";
import { createTestDatabase, migrateUpTo } from "./helpers/database.ts";
import { listening, startService } from "./helpers/process.ts";
import { ingest } from "./helpers/sdk.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const DAY = 24 * 60 * 60 * 1000;
const PARTITION_PASS = fileURLToPath(new URL("./helpers/partition_pass.ts", import.meta.url));
const TABLE = "analytics_events";
const clock = new ManualClock("2031-05-17T13:00:00Z");
// A one-day analytics window, so that the export's window is the one the retention test purges.
const srv = await startTestServer({ clock, config: { ANALYTICS_RETENTION_DAYS: "1" } });
Deno.test.afterAll(() => srv.close());
const project = await createProject(srv.url);

/**
 * Each test starts from an empty history without day partitions; the captured feed and the
 * analytics rollups, margins and links' days, kept by the same job and purge, too (these tests
 * look at the history).
 */
async function resetHistory() {
  for (const table of PARTITIONED_TABLES) {
    for (const p of await listPartitions(srv.sql, table)) {
      if (!p.isDefault) await srv.sql.unsafe(`drop table "${p.name}"`);
    }
  }
  await srv.sql`delete from analytics_event_keys`;
  for (const table of PARTITIONED_TABLES) await srv.sql.unsafe(`delete from ${table}`);
}

async function partitionNames(): Promise<string[]> {
  return (await listPartitions(srv.sql, TABLE)).map((p) => p.name);
}

/**
 * The partition a row is in, by name. On Citus the row is read on a shard, whose name is the
 * partition's with the shard's id after it: that suffix is left out.
 */
const PARTITION_OF_ROW = "regexp_replace(tableoid::regclass::text, '_[0-9]+$', '')";

/** Where each stored event is, by client id (or type when it has none). */
async function placement(): Promise<Record<string, string>> {
  const rows = await srv.sql<{ key: string; partition: string }[]>`
    select coalesce(client_id, type) as key, ${srv.sql.unsafe(PARTITION_OF_ROW)} as partition
    from analytics_events order by 1
  `;
  return Object.fromEntries(rows.map((r) => [r.key, r.partition]));
}

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger("info", (line) => lines.push(JSON.parse(line))) };
}

const send = (events: Record<string, unknown>[]) =>
  ingest(
    srv.url,
    project.key,
    "production",
    events.map((e) => ({ type: "open", occurred_at: clock.now().toISOString(), ...e })),
  );

async function exportIds(from: string, to: string): Promise<string[]> {
  const q = new URLSearchParams({ from, to });
  const res = await call(srv.url, "GET", `/api/v1/projects/${project.productionId}/export?${q}`, {
    headers: adminHeaders,
  });
  assert.equal(res.status, 200, res.text);
  return res.text.split("\n").filter((l) => l).map((l) => JSON.parse(l).id);
}

Deno.test("a pass creates the days from yesterday to the day after tomorrow (UTC), once", async () => {
  await resetHistory();
  clock.set("2031-05-17T23:30:00Z");
  const { lines, logger } = capturingLogger();
  await maintainPartitions({ sql: srv.sql, clock, logger });
  assert.deepEqual(await partitionNames(), [
    "analytics_events_default",
    "analytics_events_p20310516",
    "analytics_events_p20310517",
    "analytics_events_p20310518",
    "analytics_events_p20310519",
  ]);
  const [first] = await listPartitions(srv.sql, TABLE).then((ps) => ps.filter((p) => !p.isDefault));
  assert.equal(first!.from!.toISOString(), "2031-05-16T00:00:00.000Z");
  assert.equal(first!.to!.toISOString(), "2031-05-17T00:00:00.000Z");
  assert.deepEqual(
    lines.filter((l) => l.msg === "history partition created" && l.table === TABLE)
      .map((l) => l.partition),
    [
      "analytics_events_p20310516",
      "analytics_events_p20310517",
      "analytics_events_p20310518",
      "analytics_events_p20310519",
    ],
  );

  // Idempotent: the same instant again creates nothing; the next day adds one.
  assert.deepEqual(await ensurePartitions(srv.sql, TABLE, clock.now()), {
    ran: true,
    created: [],
    deferred: [],
  });
  clock.advance(DAY);
  const next = await ensurePartitions(srv.sql, TABLE, clock.now());
  assert.deepEqual(next.created.map((c) => c.partition), ["analytics_events_p20310520"]);

  // Partitioned on received_at with the same indexes on every day; \d+ shows the days.
  const indexes = await srv.sql<{ indexdef: string }[]>`
    select indexdef from pg_indexes where tablename = 'analytics_events_p20310520' order by 1`;
  assert.deepEqual(indexes.map((i) => i.indexdef.replace(/^.* USING /, "")), [
    "btree (environment_id, occurred_at)",
    // On Citus the key leads with the distribution column (migration 00018).
    onCitus() ? "btree (environment_id, id, received_at)" : "btree (id, received_at)",
  ]);
});

Deno.test("an event of a day without its partition lands in the default partition; the next pass moves it into its day", async () => {
  await resetHistory();
  clock.set("2029-02-03T10:00:00Z");
  assert.deepEqual(await send([{ id: "early" }, { id: "late", type: "install" }]), {
    accepted: 2,
    duplicates: 0,
  });
  assert.deepEqual(await placement(), {
    early: "analytics_events_default",
    late: "analytics_events_default",
  });
  const before = await exportIds("2029-02-01T00:00:00Z", "2029-02-05T00:00:00Z");
  assert.equal(before.length, 2);

  const result = await ensurePartitions(srv.sql, TABLE, clock.now());
  const moved = result.created.find((c) => c.partition === "analytics_events_p20290203");
  assert.equal(moved?.movedRows, 2);
  assert.deepEqual(await placement(), {
    early: "analytics_events_p20290203",
    late: "analytics_events_p20290203",
  });
  // The same rows (ids included), exported in the same order; new events go straight in.
  assert.deepEqual(await exportIds("2029-02-01T00:00:00Z", "2029-02-05T00:00:00Z"), before);
  await send([{ id: "after" }]);
  assert.equal((await placement()).after, "analytics_events_p20290203");
  const [{ n }] = await srv.sql<[{ n: number }]>`
    select count(*)::int as n from analytics_events_default`;
  assert.equal(n, 0);
});

Deno.test("retention drops every day that ended before the cutoff whole, deletes the default partition's expired rows, and keeps the rest", async () => {
  await resetHistory();
  // An old event in the default partition (no partition for its day).
  clock.set("2030-01-01T08:00:00Z");
  await send([{ id: "ancient" }]);
  clock.set("2030-03-10T12:00:00Z");
  await ensurePartitions(srv.sql, TABLE, clock.now());
  await send([{ id: "a" }, { id: "b" }, { type: "install" }]);
  clock.set("2030-03-11T00:10:00Z");
  await ensurePartitions(srv.sql, TABLE, clock.now());
  await send([{ id: "just-after-midnight" }]);
  clock.set("2030-03-11T12:00:00Z");
  await send([{ id: "kept" }]);
  assert.equal((await placement()).a, "analytics_events_p20300310");

  // A one-day window at 00:30 on the 12th: the cutoff is 00:30 on the 11th.
  clock.set("2030-03-12T00:30:00Z");
  const result = await purgeExpired(srv.sql, clock.now(), 1);
  assert.deepEqual(
    result.droppedPartitions?.map((d) => [d.partition, d.rows, d.from, d.to]),
    [
      ["analytics_events_p20300309", 0, "2030-03-09T00:00:00.000Z", "2030-03-10T00:00:00.000Z"],
      ["analytics_events_p20300310", 3, "2030-03-10T00:00:00.000Z", "2030-03-11T00:00:00.000Z"],
    ],
  );
  assert.ok(result.droppedPartitions!.every((d) => d.bytes > 0 && d.ms >= 0));
  // The dropped rows and the default partition's one.
  assert.equal(result.analyticsEvents, 4);
  // The client ids received before the cutoff: "a", "b", "ancient", "just-after-midnight".
  assert.equal(result.analyticsKeys, 4);
  assert.equal(result.deferredPartitions, undefined);
  assert.deepEqual(await partitionNames(), [
    "analytics_events_default",
    "analytics_events_p20300311",
    "analytics_events_p20300312",
    "analytics_events_p20300313",
  ]);
  // The 11th is not over in the window's terms: its early event stays stored until the day
  // goes, but it is outside the window, so no longer exported.
  assert.deepEqual(await placement(), {
    "just-after-midnight": "analytics_events_p20300311",
    kept: "analytics_events_p20300311",
  });
  assert.equal((await exportIds("2030-03-01T00:00:00Z", "2030-03-20T00:00:00Z")).length, 1);

  // Nothing left to do: a second pass drops nothing and reports only the plain counts.
  assert.deepEqual(await purgeExpired(srv.sql, clock.now(), 1), {
    ran: true,
    feedEvents: 0,
    analyticsEvents: 0,
    rateHits: 0,
  });
  // A purged client id may be sent again, as before partitions.
  assert.deepEqual(await send([{ id: "a" }]), { accepted: 1, duplicates: 0 });
});

Deno.test("a client id is stored once, within a day, across a day boundary and out of the default partition", async () => {
  await resetHistory();
  clock.set("2032-06-01T23:59:59Z");
  await ensurePartitions(srv.sql, TABLE, clock.now());
  assert.deepEqual(await send([{ id: "x" }, { id: "x" }]), { accepted: 1, duplicates: 1 });
  clock.set("2032-06-02T00:00:01Z");
  assert.deepEqual(await send([{ id: "x" }, { id: "y" }]), { accepted: 1, duplicates: 1 });
  assert.deepEqual(await placement(), {
    x: "analytics_events_p20320601",
    y: "analytics_events_p20320602",
  });

  // Far from any partition: in the default partition, then moved; still once.
  clock.set("2040-01-01T00:00:00Z");
  assert.deepEqual(await send([{ id: "z" }]), { accepted: 1, duplicates: 0 });
  assert.deepEqual(await send([{ id: "z" }, { id: "x" }]), { accepted: 0, duplicates: 2 });
  await ensurePartitions(srv.sql, TABLE, clock.now());
  assert.deepEqual(await send([{ id: "z" }]), { accepted: 0, duplicates: 1 });
  assert.equal((await placement()).z, "analytics_events_p20400101");
  const [{ n }] = await srv.sql<[{ n: number }]>`
    select count(*)::int as n from analytics_events where client_id in ('x', 'y', 'z')`;
  assert.equal(n, 3);
});

Deno.test({
  name: "concurrent batches with the same ids in either order store each id once",
  async fn() {
    await resetHistory();
    clock.set("2032-07-01T12:00:00Z");
    await ensurePartitions(srv.sql, TABLE, clock.now());
    const ids = Array.from({ length: 40 }, (_, i) => ({ id: `c${i}` }));
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => send(i % 2 ? ids : ids.toReversed())),
    );
    assert.equal(results.reduce((n, r) => n + r.accepted, 0), 40);
    const [{ n }] = await srv.sql<[{ n: number }]>`select count(*)::int as n from analytics_events`;
    assert.equal(n, 40);
  },
});

Deno.test({
  name:
    "a drop or an attach waiting behind a long reader gives up at its lock_timeout and the next pass does it",
  // PGlite is one session: nothing can hold a lock against it.
  ignore: srv.db.embedded,
  async fn() {
    await resetHistory();
    clock.set("2033-09-09T09:00:00Z");
    await ensurePartitions(srv.sql, TABLE, clock.now());
    await send([{ id: "r" }]);
    const other = srv.db.pool(1);
    // Released in `finally` too: a failed assertion must end the held transaction, or the
    // pool's end() would wait for it forever and the test would hang instead of failing.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    try {
      let reading!: () => void;
      const isReading = new Promise<void>((resolve) => (reading = resolve));
      // A reader over the whole table holds ACCESS SHARE on every partition until it ends.
      const reader = other.begin(async (tx) => {
        await tx`select count(*) from analytics_events`;
        reading();
        await held;
      });
      await isReading;

      clock.set("2033-09-20T09:00:00Z");
      const started = performance.now();
      const blocked = await purgeExpired(srv.sql, clock.now(), 5, { lockTimeoutMs: 200 });
      const ensured = await ensurePartitions(srv.sql, TABLE, clock.now(), { lockTimeoutMs: 200 });
      // Each gave up after its timeout, on its first partition, instead of waiting.
      assert.ok(performance.now() - started < 3000);
      assert.equal(blocked.droppedPartitions, undefined);
      assert.deepEqual(blocked.deferredPartitions, ["analytics_events_p20330908"]);
      assert.deepEqual(ensured, {
        ran: true,
        created: [],
        deferred: ["analytics_events_p20330919"],
      });
      // Writers were not queued behind the waiting DDL once it gave up.
      await send([{ id: "during" }]);

      release();
      await reader;
      const after = await purgeExpired(srv.sql, clock.now(), 5, { lockTimeoutMs: 200 });
      assert.deepEqual(after.droppedPartitions?.map((d) => d.partition), [
        "analytics_events_p20330908",
        "analytics_events_p20330909",
        "analytics_events_p20330910",
        "analytics_events_p20330911",
      ]);
      const created = await ensurePartitions(srv.sql, TABLE, clock.now(), { lockTimeoutMs: 200 });
      assert.equal(created.created.length, 4);
    } finally {
      release();
      await other.end();
    }
  },
});

Deno.test({
  name:
    "an instance that dies while creating a day leaves nothing half done; another pass redoes it",
  // On Citus the DDL's lock waits are the workers' as well as the coordinator's: the test finds
  // its waiting backend among the coordinator's sessions only.
  ignore: srv.db.embedded || onCitus(),
  async fn() {
    await resetHistory();
    clock.set("2034-04-04T04:00:00Z");
    await send([{ id: "waiting" }]);
    const reader = srv.db.pool(1);
    // Released in `finally` too (see above): a failure must not leave the holder waiting.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    try {
      let reading!: () => void;
      const isReading = new Promise<void>((resolve) => (reading = resolve));
      const holder = reader.begin(async (tx) => {
        await tx`select count(*) from analytics_events`;
        reading();
        await held;
      });
      await isReading;
      // Another instance's pass: today's partition created and the row moved into it, then
      // waiting for the default partition's lock to attach it...
      const instance = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", PARTITION_PASS, srv.db.url, clock.now().toISOString(), "0"],
        stdout: "null",
        stderr: "null",
      }).spawn();
      let pid: number | undefined;
      for (let i = 0; i < 1000 && pid === undefined; i++) {
        const [row] = await srv.sql<{ pid: number }[]>`
          select pid from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'
            and query like 'alter table "analytics_events" attach partition%'`;
        pid = row?.pid;
        if (pid === undefined) await new Promise((r) => setTimeout(r, 10));
      }
      assert.ok(pid, "the creation never waited for its lock");
      // ...when the instance dies. Its transaction never commits.
      instance.kill("SIGKILL");
      await instance.status;
      release();
      await holder;
      for (let i = 0; i < 1000; i++) {
        const [gone] = await srv.sql<[{ n: number }]>`
          select count(*)::int as n from pg_stat_activity where pid = ${pid}`;
        if (gone.n === 0) break;
        await new Promise((r) => setTimeout(r, 10));
      }

      assert.deepEqual(await partitionNames(), ["analytics_events_default"]);
      const [{ n }] = await srv.sql<[{ n: number }]>`
        select count(*)::int as n from pg_class where relname like 'analytics_events_p2034%'`;
      assert.equal(n, 0);
      assert.equal((await placement()).waiting, "analytics_events_default");
      const redo = await ensurePartitions(srv.sql, TABLE, clock.now());
      assert.equal(redo.created.length, 4);
      assert.equal((await placement()).waiting, "analytics_events_p20340404");
    } finally {
      release();
      await reader.end();
    }
  },
});

Deno.test({
  name: "two instances maintaining at once create each day once and drop it once",
  ignore: srv.db.embedded,
  async fn() {
    await resetHistory();
    clock.set("2035-01-10T12:00:00Z");
    const a = srv.db.pool(2);
    const b = srv.db.pool(2);
    try {
      const results = await Promise.all([
        ensurePartitions(a, TABLE, clock.now()),
        ensurePartitions(b, TABLE, clock.now()),
        ensurePartitions(a, TABLE, clock.now()),
      ]);
      const created = results.flatMap((r) => r.created.map((c) => c.partition)).sort();
      // Each day by one of them; a pass that found the lock taken stopped (ran: false).
      assert.equal(new Set(created).size, created.length);
      await ensurePartitions(srv.sql, TABLE, clock.now());
      assert.equal((await partitionNames()).length, 5);
      const cutoff = new Date("2035-01-20T00:00:00Z");
      const drops = await Promise.all([
        dropPartitionsBefore(a, TABLE, cutoff),
        dropPartitionsBefore(b, TABLE, cutoff),
      ]);
      const dropped = drops.flatMap((d) => d.dropped.map((x) => x.partition));
      assert.equal(new Set(dropped).size, dropped.length);
      await dropPartitionsBefore(srv.sql, TABLE, cutoff);
      assert.deepEqual(await partitionNames(), ["analytics_events_default"]);
    } finally {
      await a.end();
      await b.end();
    }
  },
});

Deno.test({
  name:
    "EXPLAIN: the export does not open the days before the retention window; both readers have the occurred_at index of each day",
  // On Citus the coordinator's plan is the distributed one; the days' plans are the workers'.
  ignore: onCitus(),
  fn: async () => {
    await resetHistory();
    clock.set("2036-02-20T12:00:00Z");
    for (let d = 0; d < 5; d++) {
      await ensurePartitions(srv.sql, TABLE, new Date(clock.now().getTime() - d * DAY));
    }
    // Whether an index beats a scan depends on the data; that each day has a usable one does not.
    const plan = (query: string) =>
      srv.sql.begin(async (tx) => {
        await tx`set local enable_seqscan = off`;
        const rows = await tx.unsafe<{ "QUERY PLAN": string }[]>(`explain ${query}`);
        return rows.map((r) => r["QUERY PLAN"]).join("\n");
      });
    const exportPlan = await plan(`
    select id, occurred_at, body from analytics_events
    where environment_id = 1 and occurred_at >= '2036-02-01' and occurred_at < '2036-02-28'
      and received_at >= '2036-02-19T00:00:00Z'
    order by occurred_at, id limit 1000`);
    assert.doesNotMatch(exportPlan, /p2036021[4-8]/);
    for (const day of ["19", "20", "21", "22"]) {
      assert.match(exportPlan, new RegExp(`p203602${day}_environment_id_occurred_at_idx`));
    }
    assert.match(exportPlan, /analytics_events_default_environment_id_occurred_at_idx/);
    const chartPlan = await plan(`
    select (occurred_at at time zone 'UTC')::date, type, count(*) from analytics_events
    where environment_id = 1 and occurred_at >= '2036-01-20' and occurred_at < '2036-02-21'
    group by 1, 2`);
    for (const day of ["15", "16", "17", "18", "19", "20", "21", "22"]) {
      assert.match(chartPlan, new RegExp(`p203602${day}_environment_id_occurred_at_idx`));
    }
  },
});

Deno.test("migration 00009 moves the existing history into day partitions, ids, client ids and all", async () => {
  const db = await createTestDatabase({ migrate: false });
  try {
    await migrateUpTo(db.url, 8);
    // Connections of its own: PGlite serves one at a time, and migrate() opens another.
    let sql = connect(db.url, 1);
    const [env] = await sql<{ id: number }[]>`
      with p as (
        insert into projects (hashid, name, key_hash) values ('h', 'Old', 'k') returning id
      )
      insert into environments (project_id, kind) select id, 'production' from p returning id`;
    // Three days of events, every other one with a client id; a gap in the ids.
    await sql`
      insert into analytics_events (environment_id, event_id, client_id, type, occurred_at,
        received_at, body)
      select ${env!.id}, 'evt_' || g, case when g % 2 = 0 then 'c' || g end, 'open', at, at,
        '{"n":' || g || '}'
      from generate_series(1, 300) g,
        lateral (select timestamptz '2026-11-20T00:00:00Z' + g * interval '15 minutes' as at) t`;
    await sql`delete from analytics_events where id between 10 and 19`;
    const before = await sql<{ id: string; event_id: string; received_at: Date }[]>`
      select id, event_id, received_at from analytics_events order by id`;
    await sql.end();

    await migrate(db.url);
    sql = connect(db.url, 1);
    const after = await sql<{ id: string; event_id: string; received_at: Date }[]>`
      select id, event_id, received_at from analytics_events order by id`;
    assert.deepEqual(after, before);
    const byPartition = await sql<{ partition: string; n: number }[]>`
      select ${sql.unsafe(PARTITION_OF_ROW)} as partition, count(*)::int as n
      from analytics_events group by 1 order by 1`;
    assert.deepEqual([...byPartition], [
      { partition: "analytics_events_p20261120", n: 85 },
      { partition: "analytics_events_p20261121", n: 96 },
      { partition: "analytics_events_p20261122", n: 96 },
      { partition: "analytics_events_p20261123", n: 13 },
    ]);
    assert.deepEqual(
      (await listPartitions(sql, TABLE)).map((p) => p.name),
      [
        "analytics_events_default",
        "analytics_events_p20261120",
        "analytics_events_p20261121",
        "analytics_events_p20261122",
        "analytics_events_p20261123",
      ],
    );
    const [keys] = await sql<[{ n: number }]>`select count(*)::int as n from analytics_event_keys`;
    assert.equal(keys.n, 145);
    // Ids go on after the old identity's last value; a client id seen before is a duplicate.
    const inserted = await sql<{ id: string; event_id: string }[]>`
      insert into analytics_events (environment_id, event_id, type, occurred_at, received_at, body)
      values (${env!.id}, 'evt_new', 'open', now(), now(), '{}') returning id, event_id`;
    assert.equal(inserted[0]!.id, "301");
    const claimed = await sql`
      insert into analytics_event_keys (environment_id, client_id, received_at)
      values (${env!.id}, 'c20', now()), (${env!.id}, 'c21', now())
      on conflict do nothing returning client_id`;
    assert.deepEqual(claimed.map((r) => r.client_id), ["c21"]);
    await sql.end();
  } finally {
    await db.close();
  }
});

Deno.test("main.ts creates today's partitions at start-up, before the first pass of the job", async () => {
  const dataDir = await Deno.makeTempDir();
  const db = srv.db.embedded ? null : await createTestDatabase();
  const env: Record<string, string> = db
    ? { DATABASE_URL: db.url, ADMIN_TOKEN: "startup-admin-token-0123456789abcdefgh" }
    : { DATA_DIR: dataDir };
  const svc = startService(env);
  try {
    await listening(svc);
    const today = new Date().toISOString().slice(0, 10).replaceAll("-", "");
    const created = svc.stdout().split("\n").filter((l) => l.includes("history partition created"))
      .map((l) => JSON.parse(l).partition);
    assert.ok(created.includes(`analytics_events_p${today}`), svc.stdout());
  } finally {
    await svc.stop();
    await db?.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
