// Retention of a day of analytics history (--retention-rows events, 1,000,000 by default):
// dropping its partition against deleting the same rows in batches from a plain table, as
// before partitions (the baseline, same rows, same run); the history's size before and after.
// And migration 00009's time to move that many rows into partitions.
import { CLI_AUDIT } from "../services/access/audit.ts";
import postgres from "postgres";
import { connect, type Sql } from "../db/connect.ts";
import { migrate } from "../db/migrate.ts";
import { purgeExpired } from "../services/feed/retention.ts";
import { ensurePartitions } from "../services/maintenance/partitions.ts";
import { createProject } from "../services/projects/projects.ts";
import { migrateUpTo } from "../tests/helpers/database.ts";
import { type BenchDatabase, fmt } from "./lib.ts";
import { judge, report, type Row } from "./rows.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
const RETENTION_DAYS = 90;
const BATCH = 5000;

/**
 * Appends `n` events received over the day starting at `day`, ~300-byte envelopes, each with a
 * client id, as ingestion stores them (`table` is the history or the baseline's plain copy);
 * with `keys`, their client ids too.
 */
async function fillDay(
  sql: Sql,
  table: string,
  environmentId: number,
  day: Date,
  n: number,
  options: { keys?: boolean; tag: string },
) {
  for (let done = 0; done < n; done += 250_000) {
    const batch = Math.min(250_000, n - done);
    await sql.unsafe(
      `insert into ${table} (environment_id, event_id, client_id, type, occurred_at, received_at,
        body)
      select $1, e.id, 'client-' || $4 || '-' || g, e.type, e.at, e.at,
        json_build_object(
          'schema_version', 1, 'id', e.id, 'type', e.type,
          'occurred_at', to_char(e.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'project', json_build_object('id', 'Xb3kP9', 'test', false),
          'device', json_build_object('model', 'Pixel 8', 'os', 'android',
            'app_version', '3.12.' || (g % 40)),
          'attribution', json_build_object('campaign', 'spring_sale', 'source', 'mail'),
          'geo', json_build_object('country', 'DE')
        )::text
      from generate_series($2::int + 1, $2::int + $3::int) g,
        lateral (select 'evt_' || $4 || lpad(g::text, 20, '0') as id,
          (array['install','open','app_open','session','view'])[1 + g % 5] as type,
          $5::timestamptz + (g - $2::int) * ($6::float8 / $3::int) * interval '1 second' as at) e`,
      [environmentId, done, batch, options.tag, day.toISOString(), 86_399],
    );
  }
  if (options.keys) {
    await sql`
      insert into analytics_event_keys (environment_id, client_id, received_at)
      select environment_id, client_id, received_at from analytics_events
      where received_at >= ${day} and received_at < ${new Date(day.getTime() + DAY_MS)}
    `;
  }
}

const MB = 1024 * 1024;

/** Appends `n` captured feed events received over the day starting at `day` (~300 bytes). */
async function fillFeedDay(sql: Sql, environmentId: number, day: Date, n: number) {
  for (let done = 0; done < n; done += 250_000) {
    const batch = Math.min(250_000, n - done);
    await sql`
      insert into feed_events (environment_id, type, received_at, body)
      select ${environmentId}, e.type, e.at,
        json_build_object('schema_version', 1, 'id', 'evt_f' || lpad(g::text, 20, '0'),
          'type', e.type, 'occurred_at', e.at,
          'project', json_build_object('id', 'Xb3kP9', 'test', false),
          'device', json_build_object('model', 'Pixel 8', 'os', 'android'),
          'geo', json_build_object('country', 'DE'))::text
      from generate_series(${done}::int + 1, ${done}::int + ${batch}::int) g,
        lateral (select (array['install','open','app_open','session','view'])[1 + g % 5] as type,
          ${day}::timestamptz + (g - 1) * (86399.0 / ${n}::int) * interval '1 second' as at) e`;
  }
}

async function feedBytes(sql: Sql): Promise<number> {
  const [row] = await sql<[{ bytes: string }]>`
    select sum(pg_total_relation_size(relid)) as bytes from pg_partition_tree('feed_events')`;
  return Number(row.bytes);
}

async function historyBytes(sql: Sql): Promise<{ events: number; keys: number }> {
  const [row] = await sql<[{ events: string; keys: string }]>`
    select (select sum(pg_total_relation_size(relid))
      from pg_partition_tree('analytics_events')) as events,
      pg_total_relation_size('analytics_event_keys') as keys
  `;
  return { events: Number(row.events), keys: Number(row.keys) };
}

async function tableBytes(sql: Sql, table: string): Promise<number> {
  const [row] = await sql<[{ bytes: string }]>`select pg_total_relation_size(${table}) as bytes`;
  return Number(row.bytes);
}

export async function retentionBenchmarks(db: BenchDatabase, rows: number): Promise<Row[]> {
  const { sql } = db;
  const out: Row[] = [];
  const { project } = await createProject(sql, { name: "retention", enterprise: true }, CLI_AUDIT);
  const envId = project.environments.production.project_id;

  // The expiring day, and the next one (a tenth as many events) which the pass keeps.
  const now = new Date();
  const expiring = new Date(
    Math.floor(now.getTime() / DAY_MS) * DAY_MS - (RETENTION_DAYS + 2) * DAY_MS,
  );
  const kept = new Date(expiring.getTime() + DAY_MS);
  await ensurePartitions(sql, "analytics_events", kept, { behindDays: 1, aheadDays: 0 });
  const filling = performance.now();
  await fillDay(sql, "analytics_events", envId, expiring, rows, { keys: true, tag: "a" });
  await fillDay(sql, "analytics_events", envId, kept, Math.round(rows / 10), {
    keys: true,
    tag: "b",
  });
  const filled = (performance.now() - filling) / 1000;
  // The captured feed's day too (seven days kept: the pass below drops both of its days).
  await ensurePartitions(sql, "feed_events", kept, { behindDays: 1, aheadDays: 0 });
  await fillFeedDay(sql, envId, expiring, rows);
  await fillFeedDay(sql, envId, kept, Math.round(rows / 10));
  await sql`vacuum analyze feed_events`;

  // The baseline: the table as it was (migration 00002's indexes), the same rows.
  await sql`
    create table bench_plain_events (
      id bigint generated always as identity primary key,
      environment_id integer not null references environments (id) on delete cascade,
      event_id text not null unique,
      client_id text,
      type text not null,
      name text,
      occurred_at timestamptz not null,
      received_at timestamptz not null,
      link_id integer references links (id) on delete set null,
      body text not null
    )`;
  await sql`
    create unique index bench_plain_events_client_id on bench_plain_events
      (environment_id, client_id) where client_id is not null`;
  await sql`create index bench_plain_events_occurred on bench_plain_events (environment_id, occurred_at)`;
  await sql`create index bench_plain_events_received on bench_plain_events (received_at)`;
  await sql`
    insert into bench_plain_events (environment_id, event_id, client_id, type, name, occurred_at,
      received_at, link_id, body)
    select environment_id, event_id, client_id, type, name, occurred_at, received_at, link_id,
      body
    from analytics_events`;
  await sql`vacuum analyze bench_plain_events`;
  await sql`vacuum analyze analytics_event_keys`;
  await sql`vacuum analyze analytics_events`;
  await sql`checkpoint`;

  // The pass at which `expiring` has just wholly left the 90-day window: `kept` is still in it.
  const passAt = new Date(kept.getTime() + RETENTION_DAYS * DAY_MS);
  const cutoff = new Date(passAt.getTime() - RETENTION_DAYS * DAY_MS);
  const before = await historyBytes(sql);
  const feedBefore = await feedBytes(sql);
  const passes: { ms: number; dropMs: number; lockedMs: number; keys: number }[] = [];
  let firstPass: Awaited<ReturnType<typeof purgeExpired>> | undefined;
  for (;;) {
    const started = performance.now();
    const result = await purgeExpired(sql, passAt, RETENTION_DAYS);
    firstPass ??= result;
    const ms = performance.now() - started;
    const dropped = (result.droppedPartitions ?? []).filter((d) => d.table === "analytics_events");
    passes.push({
      ms,
      dropMs: dropped.reduce((n, d) => n + d.ms, 0),
      lockedMs: dropped.reduce((n, d) => n + d.dropMs, 0),
      keys: result.analyticsKeys ?? 0,
    });
    if (!result.analyticsKeys) break;
  }
  const after = await historyBytes(sql);
  const feedAfter = await feedBytes(sql);
  const feedDay = firstPass?.droppedPartitions?.find((d) =>
    d.table === "feed_events" && d.from === expiring.toISOString()
  );
  const analyticsDropped = (firstPass?.droppedPartitions ?? [])
    .filter((d) => d.table === "analytics_events" && d.from === expiring.toISOString());
  const dropMs = passes[0]!.dropMs;
  const lockedMs = passes[0]!.lockedMs;
  const keysMs = passes.reduce((n, p) => n + p.ms, 0) - dropMs;
  const keysDeleted = passes.reduce((n, p) => n + p.keys, 0);
  const keysVacuuming = performance.now();
  await sql`vacuum analytics_event_keys`;
  const keysVacuumMs = performance.now() - keysVacuuming;

  // The old way: the same rows deleted 5000 at a time, each batch its own transaction.
  const plainBefore = await tableBytes(sql, "bench_plain_events");
  const deleting = performance.now();
  let deleted = 0;
  for (;;) {
    const r = await sql`
      delete from bench_plain_events
      where id = any(array(
        select id from bench_plain_events where received_at < ${cutoff} limit ${BATCH}
      ))`;
    deleted += r.count;
    if (r.count < BATCH) break;
  }
  const deleteMs = performance.now() - deleting;
  const plainAfter = await tableBytes(sql, "bench_plain_events");
  const vacuuming = performance.now();
  await sql`vacuum bench_plain_events`;
  const vacuumMs = performance.now() - vacuuming;

  const oldMs = deleteMs + vacuumMs;
  const newMs = dropMs + keysMs + keysVacuumMs;
  const s = (ms: number) => `${fmt(ms / 1000, 2)} s`;
  const mb = (bytes: number) => `${fmt(bytes / MB, 0)} MB`;
  out.push({
    name: `retention: a day of ${rows.toLocaleString("en")} analytics events, each with a ` +
      `client id (filled in ${fmt(filled)} s)`,
    figure: `partitioned: drop ${fmt(dropMs, 0)} ms (counting its rows, emptying, dropping; ` +
      `the whole table locked ${fmt(lockedMs, 0)} ms), history ${mb(before.events)} → ` +
      `${mb(after.events)}; its ${keysDeleted.toLocaleString("en")} client ids deleted in ` +
      `batches ${s(keysMs)} over ${passes.length} passes + vacuum ${s(keysVacuumMs)}, ` +
      `${mb(before.keys)} → ${mb(after.keys)} (space reused, not returned). ` +
      `Before partitions: batched delete of the same ${deleted.toLocaleString("en")} rows ` +
      `${s(deleteMs)} + vacuum ${s(vacuumMs)}, table ${mb(plainBefore)} → ${mb(plainAfter)}. ` +
      `Drop alone ${fmt(oldMs / dropMs, 0)}× faster; with the client ids ` +
      `${fmt(oldMs / newMs, 1)}×`,
    target: "whole table locked < 100 ms; faster than the batched delete and its vacuum, " +
      "client ids included; the history shrinks by the day",
    // The kept day is a tenth of the expiring one.
    outcome: judge(lockedMs < 100 && newMs < oldMs && after.events < before.events * 0.2, [
      // Without the drop, its time would be 0 ms and "faster" by any factor.
      ...(analyticsDropped.length === 1 ? [] : ["the expiring day's partition was not dropped"]),
      ...(deleted === rows ? [] : [
        `the batched delete removed ${deleted.toLocaleString("en")} rows, not ${
          rows.toLocaleString("en")
        }`,
      ]),
      ...(keysDeleted === rows ? [] : [
        `${keysDeleted.toLocaleString("en")} client ids deleted, not ${rows.toLocaleString("en")}`,
      ]),
    ]),
  });

  out.push({
    name: `retention: a day of ${rows.toLocaleString("en")} captured feed events`,
    figure: feedDay
      ? `drop ${fmt(feedDay.ms, 0)} ms (the whole table locked ${fmt(feedDay.dropMs, 0)} ms), ` +
        `${feedDay.rows.toLocaleString("en")} rows, ${mb(feedDay.bytes)}; feed ` +
        `${mb(feedBefore)} → ${mb(feedAfter)} (its next day, a tenth as big, went too)`
      : "the day was not dropped",
    target: "whole table locked < 100 ms",
    outcome: judge(feedDay !== undefined && feedDay.dropMs < 100, [
      ...(feedDay ? [] : ["the expiring day's partition was not dropped"]),
      ...(feedDay === undefined || feedDay.rows === rows ? [] : [
        `the dropped day held ${feedDay.rows.toLocaleString("en")} rows, not ${
          rows.toLocaleString("en")
        }`,
      ]),
    ]),
  });

  out.push(await migrationBenchmark(db, rows));
  return out;
}

/** Migration 00009 on a database of the previous version holding `rows` events over 30 days. */
async function migrationBenchmark(db: BenchDatabase, rows: number): Promise<Row> {
  const base = new URL(db.url);
  const name = `bench_migration_${Date.now().toString(36)}`;
  base.pathname = "/postgres";
  const admin = postgres(base.toString(), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const u = new URL(db.url);
  u.pathname = `/${name}`;
  const url = u.toString();
  try {
    await migrateUpTo(url, 8);
    const sql = connect(url, 1);
    try {
      const { project } = await createProject(sql, { name: "old", enterprise: true }, CLI_AUDIT);
      const envId = project.environments.production.project_id;
      const first = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - 30 * DAY_MS);
      const perDay = Math.ceil(rows / 30);
      for (let d = 0, left = rows; left > 0; d++, left -= perDay) {
        await fillDay(
          sql,
          "analytics_events",
          envId,
          new Date(first.getTime() + d * DAY_MS),
          Math.min(perDay, left),
          { tag: `d${d}` },
        );
      }
      await sql`vacuum analyze analytics_events`;
      await sql`checkpoint`;
    } finally {
      await sql.end();
    }
    const started = performance.now();
    await migrate(url);
    const migrationMs = performance.now() - started;
    const check = connect(url, 1);
    let moved: number;
    try {
      [{ moved }] = await check<[{ moved: number }]>`
        select count(*)::int as moved from analytics_events`;
    } finally {
      await check.end();
    }
    const perMillion = migrationMs / 1000 / (rows / 1_000_000);
    return {
      name: `migration 00009: ${rows.toLocaleString("en")} events over 30 days into partitions`,
      figure: `${fmt(migrationMs / 1000)} s (${fmt(perMillion)} s per million events)`,
      target: "none (an upgrade step; docs/operations.md)",
      outcome: report(
        moved === rows ? [] : [
          `${moved.toLocaleString("en")} events after the migration, not ${
            rows.toLocaleString("en")
          }`,
        ],
      ),
    };
  } finally {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}
