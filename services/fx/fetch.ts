// The daily fetch of the ECB's reference rates, run by the background jobs of every instance
// (services/maintenance/jobs.ts) when FX_RATES_URL is not off. One instance fetches at a time:
// it takes the lease on the single row of fx_fetch (as delivery leases a destination,
// services/destinations/delivery.ts), and only once the fetch is due (`next_at`).
//
// If the instance dies mid-way (during the download, or while the rates are stored): the rates
// are stored and the purchases reconverted in one transaction (storeRates), so nothing of that
// fetch is kept; its lease lapses LEASE_MS later and the next instance whose pass comes by
// fetches again, or this one once restarted. Fetching the same file twice is harmless. (A lost
// connection while storing is answered like a failed download: released, due again in an hour;
// tests/fx_test.ts ends the storing transaction's connection mid-way.)
import type { Sql } from "../../db/connect.ts";
import type { Clock } from "../../infra/clock.ts";
import { describeError, type Logger } from "../../infra/log.ts";
import { MAX_ECB_FILE_BYTES, parseEcbRates } from "./ecb.ts";
import { storeRates, type StoreResult } from "./rates.ts";

/** Longer than a fetch can take (FETCH_TIMEOUT_MS) and the storing after it. */
export const LEASE_MS = 5 * 60_000;
const FETCH_TIMEOUT_MS = 60_000;
const HOUR_MS = 60 * 60_000;
/**
 * The ECB publishes its rates around 16:00 Central European time on working days: 14:00 or
 * 15:00 UTC. A fetch from 16:00 UTC on finds that day's.
 */
const PUBLISHED_UTC_HOUR = 16;

export interface FetchOutcome {
  /** False: not due, or another instance holds the lease. */
  fetched: boolean;
  result?: StoreResult;
  error?: string;
}

/** When the fetch is next due after one at `now` that brought rates up to `lastDay`. */
export function nextFetchAt(now: Date, lastDay: string | null): Date {
  const today = now.toISOString().slice(0, 10);
  const published = new Date(`${today}T${String(PUBLISHED_UTC_HOUR).padStart(2, "0")}:00:00Z`);
  if (now < published) return published;
  // Past today's publication without today's rates (late, or a day without any: a weekend, a
  // holiday): again in an hour, until tomorrow's publication.
  if (lastDay !== today) return new Date(now.getTime() + HOUR_MS);
  return new Date(published.getTime() + 24 * HOUR_MS);
}

/**
 * Fetches and stores the rates if the fetch is due and this instance takes the lease; never
 * throws (a failure is logged, and retried in an hour).
 */
export async function fetchRatesIfDue(
  deps: { sql: Sql; clock: Clock; logger: Logger },
  options: { url: string; instanceId: string; signal?: AbortSignal },
): Promise<FetchOutcome> {
  const { sql, clock, logger } = deps;
  const now = clock.now();
  // The row is made by the first claim, not by the migration: a database restored from a backup
  // (db/backup) must start with every table empty.
  const claimed = await sql`
    insert into fx_fetch as f (id, lease_owner, lease_expires_at)
    values (true, ${options.instanceId}, ${new Date(now.getTime() + LEASE_MS)})
    on conflict (id) do update set lease_owner = excluded.lease_owner,
      lease_expires_at = excluded.lease_expires_at
    where f.next_at <= ${now} and (f.lease_owner is null or f.lease_expires_at <= ${now})
    returning 1
  `;
  if (claimed.length === 0) return { fetched: false };
  const release = (next: Date, lastDay: string | null) =>
    sql`
      update fx_fetch set lease_owner = null, lease_expires_at = null, next_at = ${next},
        last_day = coalesce(${lastDay}::date, last_day)
      where lease_owner = ${options.instanceId}
    `;
  try {
    const xml = await download(options.url, options.signal);
    const result = await storeRates(sql, parseEcbRates(xml));
    await release(nextFetchAt(clock.now(), result.lastDay), result.lastDay);
    logger.info("exchange rates fetched", {
      rates: result.rates,
      changed: result.changed,
      reconverted: result.reconverted,
      last_day: result.lastDay,
    });
    return { fetched: true, result };
  } catch (err) {
    logger.warn("exchange rates fetch failed", { url: options.url, ...describeError(err) });
    await release(new Date(clock.now().getTime() + HOUR_MS), null).catch(() => {});
    return { fetched: true, error: err instanceof Error ? err.message : String(err) };
  }
}

/** The file's text, at most MAX_ECB_FILE_BYTES. */
async function download(url: string, signal?: AbortSignal): Promise<string> {
  const timeout = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  const res = await fetch(url, { signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`${url} answered ${res.status}`);
  }
  const reader = res.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_ECB_FILE_BYTES) {
      await reader.cancel();
      throw new Error(`${url}: larger than the ECB's files can be`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
