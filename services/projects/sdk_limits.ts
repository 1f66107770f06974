// Limits on what the project key may write. The key ships inside every app, so anyone can
// extract it: without a bound, a script could create links and send events until the database
// is full and every metric meaningless. An SDK write (generate_link, REST or GraphQL: one link;
// /events: one per event of the batch) is counted per project key and per client address over a
// sliding minute, in PostgreSQL (sdk_admit, migration 00022_conform), so the limits hold across
// instances. Over either limit the write is refused with 503 rate_limited and Retry-After (the
// SDK API's 5xx: clients retry with backoff), and counted. Link lookups, metrics and the link
// host are reads, and are not limited by key.
// This module holds the limits; sdk_auth.ts admitSdkWrite applies them.
import type { Db } from "../../db/connect.ts";

/** Writes a minute per project key, both environments together, unless the project sets its own. */
export const DEFAULT_SDK_WRITES_PER_KEY = 100_000;
/** Writes a minute per client address (an IPv6 address counts as its /64) for one project key. */
export const DEFAULT_SDK_WRITES_PER_ADDRESS = 10_000;
/** A limit is never below the largest single write (a batch of 1,000 events), which must fit. */
export const MIN_SDK_WRITES = 1000;
export const MAX_SDK_WRITES = 1_000_000_000;

/** A project's limits, writes a minute: its own, or the defaults. */
export interface SdkLimits {
  per_key: number;
  per_address: number;
}

/** The limits a project has, from its two columns (null: the default). */
export function sdkLimitsOf(
  row: { sdk_writes_per_key: number | null; sdk_writes_per_address: number | null },
): SdkLimits {
  return {
    per_key: row.sdk_writes_per_key ?? DEFAULT_SDK_WRITES_PER_KEY,
    per_address: row.sdk_writes_per_address ?? DEFAULT_SDK_WRITES_PER_ADDRESS,
  };
}

/** Drops up to `batch` counts of minutes that have left every window. */
export async function purgeSdkRateCounts(db: Db, now: Date, batch: number): Promise<number> {
  const rows = await db`
    delete from sdk_rate_counts
    where ctid = any(array(
      select ctid from sdk_rate_counts
      where window_start < ${new Date(now.getTime() - 120_000)} limit ${batch}
    ))
  `;
  return rows.count;
}
