// Exchange rates (table fx_rates, migration 00027) and the conversions that follow from them.
// Each purchase's current version keeps its amount converted into its project's reporting
// currency (purchase_versions.converted, null when no rate applies): ingestion converts at the
// rates it sees (services/events/record.ts), and whatever changes a conversion (rates stored, the
// reporting currency changed) reconverts the versions it touches and appends the differences to
// the rollups and link counters in the same transaction. So every revenue figure is at every
// moment the sum of the current conversions, read as cheaply as before.
//
// Why at write time rather than when read: the link counters and the rollups' margins are read
// on hot paths (metrics, link lists, analytics) as one column; converting there would mean
// keeping per-currency-and-day sums beside every counter and joining the rates on every read.
// Ingestion pays one pipelined statement per batch that carries purchases (no extra round trip);
// batches without purchases pay nothing.
//
// Lock: ingestion takes FX_LOCK shared (for the instance, key 0, and for its project) before it
// reads rates; storing rates takes key 0 exclusive, changing a project's reporting currency
// that project's key. A conversion is then never computed from rates that a concurrent load
// has already replaced without that load seeing the purchase: the load waits for the batches
// that read the old rates, and the batches after it read the new ones.
import type { Db, Sql } from "../../db/connect.ts";
import { addRevenue, applyDeltas, type Deltas } from "../links/counters.ts";
import { type PurchaseDelta, purchaseRollupRows } from "../analytics/rollups.ts";
import { convertMinor, EURO } from "./convert.ts";

export const FX_LOCK = 4_242_036;

export interface Rate {
  /** YYYY-MM-DD */
  day: string;
  currency: string;
  /** Units of `currency` per euro, as the ECB prints it. */
  rate: string;
}

/** The rates that convert purchases: "CUR|YYYY-MM-DD" → the currency's rate on that day or the latest earlier day. */
export type RateTable = Map<string, string | null>;

const key = (currency: string, day: string) => `${currency}|${day}`;

/** The UTC day (YYYY-MM-DD) of an instant. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/**
 * `amount` of `currency` on `day` in `reporting`, or null when a rate is missing (or the day is
 * unknown and the currencies differ). `rates` must hold both currencies on that day.
 */
export function convertWith(
  rates: RateTable,
  amount: number | bigint,
  currency: string,
  reporting: string,
  day: string | null,
): bigint | null {
  if (currency === reporting) return BigInt(amount);
  if (day === null) return null;
  const from = currency === EURO ? "1" : rates.get(key(currency, day));
  const to = reporting === EURO ? "1" : rates.get(key(reporting, day));
  if (!from || !to) return null;
  return convertMinor(amount, currency, reporting, from, to);
}

/** Each pair's rate: its currency's rate on that day, or on the latest earlier day it has one. */
async function ratesFor(db: Db, pairs: [string, string][]): Promise<RateTable> {
  const wanted = [...new Map(pairs.map(([c, d]) => [key(c, d), [c, d] as const])).values()]
    .filter(([c]) => c !== EURO);
  const table: RateTable = new Map();
  if (wanted.length === 0) return table;
  const rows = await db<{ currency: string; day: string; rate: string | null }[]>`
    select t.c as currency, t.d::text as day, (
      select r.rate::text from fx_rates r
      where r.currency = t.c and r.day <= t.d order by r.day desc limit 1
    ) as rate
    from unnest(${wanted.map((w) => w[0])}::text[], ${wanted.map((w) => w[1])}::date[]) as t(c, d)
  `;
  for (const r of rows) table.set(key(r.currency, r.day), r.rate);
  return table;
}

/**
 * For ingestion: takes the conversion lock shared for the environment's project, and reads its
 * reporting currency and the rates of `purchases` (currency and UTC day) in two statements sent
 * together (postgres.js pipelines them on the transaction's connection; the rates' statement
 * starts after the lock is granted, so it reads the rates as of then).
 */
export async function ingestionRates(
  db: Db,
  environmentId: number,
  purchases: { currency: string; day: string }[],
): Promise<{ reporting: string; rates: RateTable }> {
  const days = [...new Set(purchases.map((p) => p.day))];
  const [[env], rows] = await Promise.all([
    db<{ reporting: string }[]>`
      select pg_advisory_xact_lock_shared(${FX_LOCK}, 0),
        pg_advisory_xact_lock_shared(${FX_LOCK}, e.project_id),
        p.reporting_currency as reporting
      from environments e join projects p on p.id = e.project_id
      where e.id = ${environmentId}
    `,
    db<{ currency: string; day: string; rate: string | null }[]>`
      select t.c as currency, t.d::text as day, (
        select r.rate::text from fx_rates r
        where r.currency = t.c and r.day <= t.d order by r.day desc limit 1
      ) as rate
      from (
        select distinct c, d from (
          select * from unnest(
            ${purchases.map((p) => p.currency)}::text[], ${purchases.map((p) => p.day)}::date[]
          ) as u(c, d)
          union all
          select p.reporting_currency, d
          from environments e join projects p on p.id = e.project_id,
            unnest(${days}::date[]) as u(d)
          where e.id = ${environmentId}
        ) w
      ) as t(c, d)
      where t.c <> ${EURO}
    `,
  ]);
  const rates: RateTable = new Map();
  for (const r of rows) rates.set(key(r.currency, r.day), r.rate);
  return { reporting: env?.reporting ?? "USD", rates };
}

interface VersionRow {
  environment_id: number;
  transaction_id: string;
  name: string;
  amount: string;
  currency: string;
  converted: string | null;
  link_id: number | null;
  hour: Date | null;
  country: string | null;
  platform: string | null;
  os: string | null;
  rule: string | null;
  variant: number | null;
  reporting: string;
}

/** Versions reconverted per statement. */
const CHUNK = 5_000;

/**
 * Reconverts the current purchase versions in `scope` (a project's, after its reporting
 * currency changed; or those from a day on whose currency is not their project's, after rates
 * of that day or later changed), in chunks in the caller's transaction: each version whose
 * conversion differs gets the new one, and the difference moves its rollup bucket and its
 * link's counter. Returns how many versions changed.
 */
export async function reconvert(
  db: Db,
  scope: { projectId: number } | { fromDay: string },
): Promise<number> {
  let after: [number, string, string] = [0, "", ""];
  let changed = 0;
  for (;;) {
    const filter = "projectId" in scope
      ? db`e.project_id = ${scope.projectId}`
      : db`v.hour >= ${scope.fromDay}::date and v.currency is distinct from p.reporting_currency`;
    const rows = await db<VersionRow[]>`
      select v.environment_id, v.transaction_id, v.name, v.amount::text, v.currency,
        v.converted::text, v.link_id, v.hour, v.country, v.platform, v.os, v.rule, v.variant,
        p.reporting_currency as reporting
      from purchase_versions v
      join environments e on e.id = v.environment_id
      join projects p on p.id = e.project_id
      where v.version > 0 and ${filter}
        and (v.environment_id, v.transaction_id, v.name) > (${after[0]}, ${after[1]}, ${after[2]})
      order by v.environment_id, v.transaction_id, v.name
      limit ${CHUNK}
    `;
    if (rows.length === 0) return changed;
    const last = rows[rows.length - 1]!;
    after = [last.environment_id, last.transaction_id, last.name];
    changed += await reconvertRows(db, rows);
    if (rows.length < CHUNK) return changed;
  }
}

async function reconvertRows(db: Db, rows: VersionRow[]): Promise<number> {
  const dayOf = (r: VersionRow) => (r.hour ? utcDay(r.hour) : null);
  const pairs: [string, string][] = [];
  for (const r of rows) {
    const day = dayOf(r);
    if (day === null || r.currency === r.reporting) continue;
    pairs.push([r.currency, day], [r.reporting, day]);
  }
  const rates = await ratesFor(db, pairs);
  const byEnvironment = new Map<number, { rows: VersionRow[]; news: (bigint | null)[] }>();
  for (const r of rows) {
    const next = convertWith(rates, BigInt(r.amount), r.currency, r.reporting, dayOf(r));
    const old = r.converted === null ? null : BigInt(r.converted);
    if (next === old) continue;
    let of = byEnvironment.get(r.environment_id);
    if (!of) byEnvironment.set(r.environment_id, of = { rows: [], news: [] });
    of.rows.push(r);
    of.news.push(next);
  }
  let changed = 0;
  for (const [environmentId, { rows: moved, news }] of byEnvironment) {
    changed += moved.length;
    const counters = new Map<number, Deltas>();
    const rollups: PurchaseDelta[] = [];
    moved.forEach((r, i) => {
      const old = r.converted === null ? null : Number(r.converted);
      const next = news[i] === null ? null : Number(news[i]);
      if (r.link_id !== null) addRevenue(counters, r.link_id, (next ?? 0) - (old ?? 0));
      if (r.hour === null) return;
      rollups.push({
        bucket: { ...r, hour: r.hour, link_id: r.link_id, currency: r.currency },
        purchases: (next === null ? 0 : 1) - (old === null ? 0 : 1),
        revenue: (next ?? 0) - (old ?? 0),
        amount: 0,
        unconverted: (next === null ? 1 : 0) - (old === null ? 1 : 0),
      });
    });
    await db`
      with updated as (
        update purchase_versions v set converted = u.converted
        from unnest(
          ${moved.map((r) => r.transaction_id)}::text[], ${moved.map((r) => r.name)}::text[],
          ${news.map((n) => (n === null ? null : n.toString()))}::bigint[]
        ) as u(transaction_id, name, converted)
        where v.environment_id = ${environmentId} and v.transaction_id = u.transaction_id
          and v.name = u.name
      )
      ${purchaseRollupRows(db, environmentId, rollups)}
    `;
    await applyDeltas(db, environmentId, counters);
  }
  return changed;
}

export interface StoreResult {
  /** Rates in the file. */
  rates: number;
  /** Rates new or different from those stored. */
  changed: number;
  /** Purchase versions whose conversion changed. */
  reconverted: number;
  /** The latest day of the file (null when it has none). */
  lastDay: string | null;
}

/**
 * Stores rates and reconverts what they change, in one transaction: a crash (or an error)
 * leaves the rates and every conversion as they were, and loading the same file again is
 * harmless (unchanged rates change nothing).
 */
export async function storeRates(sql: Sql, all: readonly Rate[]): Promise<StoreResult> {
  // One row per currency and day (the last given wins): an upsert may not touch a row twice.
  const rates = [...new Map(all.map((r) => [key(r.currency, r.day), r])).values()];
  const lastDay = rates.reduce<string | null>(
    (m, r) => (m === null || r.day > m ? r.day : m),
    null,
  );
  return await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${FX_LOCK}, 0)`;
    const changedRows = await tx<{ day: string }[]>`
      insert into fx_rates (currency, day, rate)
      select * from unnest(
        ${rates.map((r) => r.currency)}::text[], ${rates.map((r) => r.day)}::date[],
        ${rates.map((r) => r.rate)}::numeric[]
      )
      on conflict (currency, day) do update set rate = excluded.rate
        where fx_rates.rate <> excluded.rate
      returning day::text
    `;
    let reconverted = 0;
    if (changedRows.length > 0) {
      const fromDay = changedRows.reduce((m, r) => (r.day < m ? r.day : m), changedRows[0]!.day);
      reconverted = await reconvert(tx, { fromDay });
    }
    return { rates: rates.length, changed: changedRows.length, reconverted, lastDay };
  });
}

/**
 * Sets a project's reporting currency and reconverts all its purchases, in one transaction
 * holding the project's conversion lock (its batches with purchases wait meanwhile).
 */
export async function setReportingCurrency(
  db: Db,
  projectId: number,
  currency: string,
): Promise<void> {
  await db`select pg_advisory_xact_lock(${FX_LOCK}, ${projectId})`;
  const [row] = await db<{ changed: boolean }[]>`
    update projects set reporting_currency = ${currency}
    where id = ${projectId} and reporting_currency <> ${currency}
    returning true as changed
  `;
  if (row) await reconvert(db, { projectId });
}
