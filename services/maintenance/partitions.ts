// Daily partitions of the history tables. A history table is `partition by range (received_at)`
// with one partition per UTC day, named `<table>_pYYYYMMDD`, and a DEFAULT partition
// `<table>_default` that catches the rows of any day without its own partition: an insert never
// fails for lack of a partition, whatever the clock says (tests run at arbitrary dates). The
// analytics rollups are kept the same way by month of their `hour` (`<table>_pYYYYMM`, see
// partitionSpec); "day" below reads "month" for them.
//
// The background job (services/maintenance/jobs.ts) keeps them, on one instance at a time (the maintenance
// lock, services/maintenance/lock.ts), each partition in its own short transaction:
//
// - ensurePartitions creates the days around now (yesterday to the day after tomorrow) before
//   rows arrive for them. A new day is created standalone (CREATE TABLE … LIKE) and then
//   attached: ATTACH PARTITION takes only a SHARE UPDATE EXCLUSIVE lock on the table, so writers
//   and readers go on, where CREATE TABLE … PARTITION OF would lock them all out. Rows of that
//   day already in the default partition are moved into it in the same transaction (ATTACH
//   would refuse while the default partition held any).
// - dropPartitionsBefore drops every day that ended at or before the retention cutoff: a whole
//   day goes at once, without deleting (and vacuuming) its rows one by one. It is emptied first
//   (TRUNCATE locks that day only), so the DROP, which locks the whole table, is over in a
//   millisecond. The default partition's expired rows are still deleted in batches
//   (deleteDefaultRowsBefore).
//
// Both set a lock_timeout: DROP needs an ACCESS EXCLUSIVE lock on the table, TRUNCATE one on its
// day, and ATTACH one on the default partition; waiting behind a long reader would queue every
// later query behind the waiting DDL. Instead it gives up after LOCK_TIMEOUT_MS and the next
// pass (a minute later) tries again; days are created two days ahead, so there is time.
//
// If an instance dies mid-way, nothing is half done: each creation (create, move, attach) and
// each drop is one transaction, rolled back with the connection, and its advisory lock released.
// Each step re-reads the catalogue under the lock before acting, so a rerun, on any instance,
// skips what is done and does what is not: running it twice is the same as once.
import { onCitus } from "../../db/cluster.ts";
import type { Db, Sql } from "../../db/connect.ts";
import { asMaintainer } from "./lock.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

/** The partitioned history tables, kept by the background job. */
export const PARTITIONED_TABLES: readonly string[] = [
  "feed_events",
  "analytics_events",
  "analytics_rollups",
  "analytics_margins",
  "analytics_link_days",
];

/**
 * How a table is partitioned: by which timestamp column, and by UTC day or month. The history
 * tables by day of reception; the analytics rollups (services/analytics/rollups.ts) by month of
 * their hour, as they are kept for a year and more and every query spans many days.
 */
export interface PartitionSpec {
  column: string;
  unit: "day" | "month";
}

const SPECS: Record<string, PartitionSpec> = {
  analytics_rollups: { column: "hour", unit: "month" },
  analytics_margins: { column: "hour", unit: "month" },
  analytics_link_days: { column: "day", unit: "month" },
};

export function partitionSpec(table: string): PartitionSpec {
  return SPECS[table] ?? { column: "received_at", unit: "day" };
}

/** How long partition DDL waits for its lock before giving up until the next pass. */
export const LOCK_TIMEOUT_MS = 1000;

export interface Partition {
  name: string;
  isDefault: boolean;
  /** Inclusive; null for the default partition (or a bound that is not a timestamp). */
  from: Date | null;
  /** Exclusive. */
  to: Date | null;
}

export interface CreatedPartition {
  table: string;
  partition: string;
  /** Null for the default partition. */
  from: string | null;
  to: string | null;
  /** Rows of that day moved out of the default partition. */
  movedRows: number;
}

export interface DroppedPartition {
  table: string;
  partition: string;
  from: string;
  to: string;
  rows: number;
  /** Its size on disk, indexes and TOAST included. */
  bytes: number;
  /** Both transactions (emptying, then dropping), from the first BEGIN to the last COMMIT. */
  ms: number;
  /** The dropping transaction alone: how long the whole table was locked. */
  dropMs: number;
}

export interface MaintenanceOptions {
  /** lock_timeout of each DDL transaction. */
  lockTimeoutMs?: number;
  /** Checked between partitions: a stopping instance does not finish the pass. */
  signal?: AbortSignal;
}

export interface EnsureOptions extends MaintenanceOptions {
  /** Days before today (UTC) that must have a partition. */
  behindDays?: number;
  /** Days after today. */
  aheadDays?: number;
}

export interface EnsureResult {
  /** False when another instance held the maintenance lock: this pass did nothing more. */
  ran: boolean;
  created: CreatedPartition[];
  /** Partitions not created because their lock was not granted in time; the next pass retries. */
  deferred: string[];
}

export interface DropResult {
  ran: boolean;
  dropped: DroppedPartition[];
  deferred: string[];
}

/** The table's partitions with their bounds, read from the catalogue (oldest first). */
export async function listPartitions(db: Db, table: string): Promise<Partition[]> {
  // pg_get_expr prints the bounds as timestamptz literals with their offset, which read back
  // as the same instants whatever the session's time zone.
  const rows = await db<
    { name: string; is_default: boolean; from_at: Date | null; to_at: Date | null }[]
  >`
    select c.relname as name, b.expr = 'DEFAULT' as is_default,
      (regexp_match(b.expr, ${BOUNDS}))[1]::timestamptz as from_at,
      (regexp_match(b.expr, ${BOUNDS}))[2]::timestamptz as to_at
    from pg_inherits i
    join pg_class c on c.oid = i.inhrelid
    cross join lateral (select pg_get_expr(c.relpartbound, c.oid) as expr) b
    where i.inhparent = ${table}::regclass
    order by 3 nulls first, 1
  `;
  return rows.map((r) => ({ name: r.name, isDefault: r.is_default, from: r.from_at, to: r.to_at }));
}
const BOUNDS = String.raw`^FOR VALUES FROM \('([^']+)'\) TO \('([^']+)'\)$`;

/** The name of the day partition starting at `day` (midnight UTC). */
export function dayPartitionName(table: string, day: Date): string {
  return `${table}_p${day.toISOString().slice(0, 10).replaceAll("-", "")}`;
}

/** The name of the table's partition starting at `start` (`<table>_pYYYYMM` for a month). */
export function partitionName(table: string, start: Date): string {
  if (partitionSpec(table).unit === "day") return dayPartitionName(table, start);
  return `${table}_p${start.toISOString().slice(0, 7).replaceAll("-", "")}`;
}

/** The partition period `at` falls in: [start, end) in UTC. */
export function periodOf(table: string, at: Date): { start: Date; end: Date } {
  const day = utcDay(at);
  if (partitionSpec(table).unit === "day") {
    return { start: day, end: new Date(day.getTime() + DAY_MS) };
  }
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  return { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)) };
}

export function defaultPartitionName(table: string): string {
  return `${table}_default`;
}

/** Midnight UTC of the day `at` falls in. */
export function utcDay(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

/**
 * Creates the default partition if it is missing and a partition for each day (or month) from
 * `behindDays` before today to `aheadDays` after (UTC, as `now` says), each in its own
 * transaction under the maintenance lock. Periods already covered by any partition are skipped.
 */
export async function ensurePartitions(
  sql: Sql,
  table: string,
  now: Date,
  options: EnsureOptions = {},
): Promise<EnsureResult> {
  const result: EnsureResult = { ran: true, created: [], deferred: [] };
  const today = utcDay(now).getTime();
  const periods = new Map<number, { start: Date; end: Date }>();
  for (let d = -(options.behindDays ?? 1); d <= (options.aheadDays ?? 2); d++) {
    const period = periodOf(table, new Date(today + d * DAY_MS));
    periods.set(period.start.getTime(), period);
  }
  // Read without the lock first: on most passes there is nothing to do and no transaction.
  const existing = await listPartitions(sql, table);
  const work: { name: string; create: (tx: Db) => Promise<CreatedPartition | null> }[] = [];
  if (!existing.some((p) => p.isDefault)) {
    work.push({ name: defaultPartitionName(table), create: (tx) => createDefault(tx, table) });
  }
  for (const period of periods.values()) {
    if (covered(existing, period)) continue;
    work.push({
      name: partitionName(table, period.start),
      create: (tx) => createPeriod(tx, table, period),
    });
  }
  for (const { name, create } of work) {
    if (options.signal?.aborted) break;
    let outcome;
    try {
      outcome = await asMaintainer(sql, async (tx) => {
        await setLockTimeout(tx, options);
        return { created: await create(tx) };
      });
    } catch (err) {
      if (!isLockTimeout(err)) throw err;
      result.deferred.push(name);
      break; // the next ones would wait behind the same reader
    }
    if (outcome === null) return { ...result, ran: false };
    if (outcome.created) result.created.push(outcome.created);
  }
  return result;
}

function covered(partitions: readonly Partition[], period: { start: Date; end: Date }): boolean {
  return partitions.some((p) =>
    p.from !== null && p.to !== null && p.from.getTime() < period.end.getTime() &&
    p.to.getTime() > period.start.getTime()
  );
}

async function createDefault(tx: Db, table: string): Promise<CreatedPartition | null> {
  if ((await listPartitions(tx, table)).some((p) => p.isDefault)) return null;
  // Only for a table partitioned without one: takes an ACCESS EXCLUSIVE lock, briefly.
  const name = defaultPartitionName(table);
  await tx.unsafe(`create table ${ident(name)} partition of ${ident(table)} default`);
  return { table, partition: name, from: null, to: null, movedRows: 0 };
}

async function createPeriod(
  tx: Db,
  table: string,
  period: { start: Date; end: Date },
): Promise<CreatedPartition | null> {
  const partitions = await listPartitions(tx, table);
  if (covered(partitions, period)) return null; // another instance made it since we looked
  // On Citus, ATTACH distributes the new table as shards of the partitioned one; with foreign
  // keys to reference tables, Citus needs the whole transaction on one connection per worker.
  if (onCitus()) await tx`set local citus.multi_shard_modify_mode to 'sequential'`;
  const name = partitionName(table, period.start);
  const from = period.start.toISOString();
  const to = period.end.toISOString();
  const column = ident(partitionSpec(table).column);
  // Indexes are left to ATTACH, which creates each of the table's indexes on the new partition
  // (one build over the moved rows, instantly on none).
  await tx.unsafe(
    `create table ${ident(name)} (like ${ident(table)} including all excluding indexes)`,
  );
  let movedRows = 0;
  if (partitions.some((p) => p.isDefault)) {
    const columns = await columnList(tx, table);
    const moved = await tx.unsafe(
      `with moved as (
        delete from ${ident(defaultPartitionName(table))}
        where ${column} >= $1::timestamptz and ${column} < $2::timestamptz
        returning ${columns}
      )
      insert into ${ident(name)} (${columns}) select ${columns} from moved`,
      [from, to],
    );
    movedRows = moved.count;
  }
  // ATTACH scans the default partition to prove it holds no row of this day: with one moved
  // out above, that is quick while the default partition stays small. A row of this day
  // inserted into it meanwhile makes ATTACH fail: the transaction rolls back, and the next pass
  // moves that row too.
  await tx.unsafe(
    `alter table ${ident(table)} attach partition ${ident(name)}
      for values from ('${from}') to ('${to}')`,
  );
  return { table, partition: name, from, to, movedRows };
}

/**
 * Drops every day partition of `table` that ends at or before `cutoff`, oldest first, under the
 * maintenance lock. Reports what each held.
 *
 * Each day goes in two transactions. TRUNCATE first: it locks only that partition, and its
 * COMMIT, which unlinks the day's files (~0.1 s for a million events), blocks only readers of
 * that day. Then DROP of the empty partition: it needs an ACCESS EXCLUSIVE lock on the whole
 * table, every insert included, but holds it for a millisecond or two instead of the unlinking.
 * (DETACH then DROP would not do: a detached table's own foreign keys must be dropped with it,
 * which locks `links` and `environments` exclusively.) An instance dying between the two leaves
 * an empty expired partition, which the next pass drops.
 */
export async function dropPartitionsBefore(
  sql: Sql,
  table: string,
  cutoff: Date,
  options: MaintenanceOptions = {},
): Promise<DropResult> {
  const result: DropResult = { ran: true, dropped: [], deferred: [] };
  const expired = (await listPartitions(sql, table)).filter((p) => isExpired(p, cutoff));
  for (const partition of expired) {
    if (options.signal?.aborted) break;
    const started = performance.now();
    let emptied;
    let dropMs = 0;
    try {
      emptied = await asMaintainer(sql, async (tx) => {
        await setLockTimeout(tx, options);
        const current = (await listPartitions(tx, table)).find((p) => p.name === partition.name);
        if (!current || !isExpired(current, cutoff)) return "gone" as const;
        const [size] = await tx.unsafe<{ rows: number; bytes: string }[]>(
          `select (select count(*) from ${ident(current.name)})::int as rows,
            pg_total_relation_size($1::regclass) as bytes`,
          [current.name],
        );
        await tx.unsafe(`truncate ${ident(current.name)}`);
        return { current, rows: size!.rows, bytes: Number(size!.bytes) };
      });
      if (emptied === null) return { ...result, ran: false };
      if (emptied === "gone") continue;
      const dropping = performance.now();
      const dropped = await asMaintainer(sql, async (tx) => {
        await setLockTimeout(tx, options);
        const current = (await listPartitions(tx, table)).find((p) => p.name === partition.name);
        if (!current || !isExpired(current, cutoff)) return false;
        await tx.unsafe(`drop table ${ident(current.name)}`);
        return true;
      });
      // Emptied but not dropped (lock taken since): the next pass drops it.
      if (dropped === null) return { ...result, ran: false };
      dropMs = performance.now() - dropping;
    } catch (err) {
      if (!isLockTimeout(err)) throw err;
      result.deferred.push(partition.name);
      break; // the next ones would wait behind the same reader
    }
    result.dropped.push({
      table,
      partition: emptied.current.name,
      from: emptied.current.from!.toISOString(),
      to: emptied.current.to!.toISOString(),
      rows: emptied.rows,
      bytes: emptied.bytes,
      ms: Math.round(performance.now() - started),
      dropMs: Math.round(dropMs),
    });
  }
  return result;
}

function isExpired(p: Partition, cutoff: Date): boolean {
  return !p.isDefault && p.to !== null && p.to.getTime() <= cutoff.getTime();
}

/** Columns that identify a row, per table, for the batched deletes on Citus. */
const CITUS_ROW_KEYS: Record<string, string> = {
  feed_events: "environment_id, xid, seq",
  analytics_events: "environment_id, id",
};

/**
 * Deletes up to `batch` rows of the default partition received before `cutoff` (the rows of a
 * day partition go with their day). By ctid: the table-generic way, and history rows are never
 * updated, so a row keeps its ctid.
 */
export async function deleteDefaultRowsBefore(
  db: Db,
  table: string,
  cutoff: Date,
  batch: number,
): Promise<number> {
  const defaultPartition = ident(defaultPartitionName(table));
  const column = ident(partitionSpec(table).column);
  if (onCitus()) {
    // Citus plans no distributed DELETE by ctid. A table whose rows have a key is deleted by it,
    // in batches as here (the batch is chosen first, across the shards, then deleted on each);
    // the rollups, which have none, every expired row of the default partition at once, each
    // shard's in one statement on its worker.
    const key = CITUS_ROW_KEYS[table];
    const rows = key
      ? await db.unsafe(
        `delete from ${defaultPartition}
        where ${column} < $1::timestamptz and (${key}) in (
          select ${key} from ${defaultPartition} where ${column} < $1::timestamptz limit $2
        )`,
        [cutoff.toISOString(), batch],
      )
      : await db.unsafe(
        `delete from ${defaultPartition} where ${column} < $1::timestamptz`,
        [cutoff.toISOString()],
      );
    return rows.count;
  }
  const rows = await db.unsafe(
    `delete from ${defaultPartition}
    where ctid = any(array(
      select ctid from ${defaultPartition} where ${column} < $1::timestamptz limit $2
    ))`,
    [cutoff.toISOString(), batch],
  );
  return rows.count;
}

/** Ensures every partitioned table's days around `now` (see ensurePartitions). */
export async function ensureAllPartitions(
  sql: Sql,
  now: Date,
  options: EnsureOptions = {},
): Promise<EnsureResult> {
  const all: EnsureResult = { ran: true, created: [], deferred: [] };
  for (const table of PARTITIONED_TABLES) {
    const result = await ensurePartitions(sql, table, now, options);
    all.created.push(...result.created);
    all.deferred.push(...result.deferred);
    if (!result.ran) return { ...all, ran: false };
  }
  return all;
}

/** True for the error of a lock not granted within lock_timeout. */
export function isLockTimeout(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === "55P03";
}

async function setLockTimeout(tx: Db, options: MaintenanceOptions): Promise<void> {
  const ms = options.lockTimeoutMs ?? LOCK_TIMEOUT_MS;
  await tx`select set_config('lock_timeout', ${`${ms}ms`}, true)`;
}

async function columnList(tx: Db, table: string): Promise<string> {
  const columns = await tx<{ name: string }[]>`
    select attname as name from pg_attribute
    where attrelid = ${table}::regclass and attnum > 0 and not attisdropped
    order by attnum
  `;
  return columns.map((c) => ident(c.name)).join(", ");
}

function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
