// The feed's per-token rate limit: a sliding 60 s window counted in PostgreSQL (feed_rate_hits),
// so that it holds however many instances serve the tokens. On a Citus cluster the table stays
// on the coordinator, so the count, the hit and the lock commit together there
// (db/migrations/00019_citus_token_tables).
import type { Db } from "../../db/connect.ts";
import { ApiError } from "../errors.ts";

export const RATE_WINDOW_MS = 60_000;
// The first key of pg_advisory_xact_lock(int, int), the second the token id: written into
// feed_admit (migration 00020), named here so that no other lock takes it.
export const RATE_LOCK_NAMESPACE = 4_242_002;

export function windowStart(now: Date): Date {
  return new Date(now.getTime() - RATE_WINDOW_MS);
}

/**
 * The 503 for a token that already has `limit` admitted reads in the window (now - 60 s, now]:
 * a slot frees when `freeing`, the hit that would leave `limit - 1` behind, leaves it. The
 * count and the record are feed_admit's (migration 00020, services/feed/auth.ts): under the lock
 * RATE_LOCK_NAMESPACE names, held until the reading transaction ends, so concurrent reads cannot
 * both take the last slot. Hits stamped after `now` (another instance's clock running ahead)
 * still count, erring towards the limit.
 */
export function rateLimitedError(limit: number, freeing: Date, now: Date): ApiError {
  const waitMs = freeing.getTime() + RATE_WINDOW_MS - now.getTime();
  return new ApiError(
    "rate_limited",
    `more than ${limit} feed reads in the last 60 seconds for this token; retry later`,
    { retryAfter: Math.max(1, Math.ceil(waitMs / 1000)) },
  );
}

/** Drops up to `batch` hits that have left every window (tokens that stopped reading). */
export async function purgeRateHits(db: Db, now: Date, batch: number): Promise<number> {
  // The table has no key; its rows are never updated, so their ctid is stable.
  const rows = await db`
    delete from feed_rate_hits
    where ctid = any(array(
      select ctid from feed_rate_hits where at <= ${windowStart(now)} limit ${batch}
    ))
  `;
  return rows.count;
}
