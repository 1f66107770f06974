// The feed's per-token rate limit: a sliding 60 s window counted in PostgreSQL (feed_rate_hits),
// so that it holds however many instances serve the tokens. On a Citus cluster the table stays
// on the coordinator, so the count, the hit and the lock commit together there
// (db/migrations/00019_citus_token_tables).
import type { Db } from "../db/connect.ts";
import { ApiError } from "./errors.ts";

export const RATE_WINDOW_MS = 60_000;
// The first key of pg_advisory_xact_lock(int, int); the second is the token id.
const RATE_LOCK_NAMESPACE = 4_242_002;

function windowStart(now: Date): Date {
  return new Date(now.getTime() - RATE_WINDOW_MS);
}

/**
 * Throws 503 rate_limited when the token already has `limit` admitted reads in the window
 * (now - 60 s, now]. Call inside a transaction, followed by recordRateHit: the advisory lock
 * taken here serialises check and record per token across instances until that transaction
 * ends, so concurrent reads cannot both take the last slot. Hits stamped after `now` (another
 * instance's clock running ahead) still count, erring towards the limit.
 */
export async function assertUnderRateLimit(
  tx: Db,
  tokenId: number,
  now: Date,
  limit: number,
): Promise<void> {
  const since = windowStart(now);
  // Sent together (postgres.js pipelines them on the transaction's connection) but run one
  // after the other: the count's snapshot is taken once the lock is held, so it sees every hit
  // committed by whoever held the lock before. Counting stops at the limit: that is all it needs.
  const [, [window]] = await Promise.all([
    tx`select pg_advisory_xact_lock(${RATE_LOCK_NAMESPACE}::int, ${tokenId}::int)`,
    tx<{ n: number }[]>`
      select count(*)::int as n from (
        select 1 from feed_rate_hits where token_id = ${tokenId} and at > ${since} limit ${limit}
      ) w
    `,
  ]);
  const n = window!.n;
  if (n < limit) return;
  // A slot frees when the hit that would leave `limit - 1` behind has left the window.
  const [freeing] = await tx<{ at: Date }[]>`
    select at from feed_rate_hits where token_id = ${tokenId} and at > ${since}
    order by at offset ${n - limit} limit 1
  `;
  const waitMs = freeing!.at.getTime() + RATE_WINDOW_MS - now.getTime();
  throw new ApiError(
    "rate_limited",
    `more than ${limit} feed reads in the last 60 seconds for this token; retry later`,
    { retryAfter: Math.max(1, Math.ceil(waitMs / 1000)) },
  );
}

/** Counts an admitted read and drops the token's hits that have left the window. */
export async function recordRateHit(tx: Db, tokenId: number, now: Date): Promise<void> {
  await tx`
    with expired as (
      delete from feed_rate_hits where token_id = ${tokenId} and at <= ${windowStart(now)}
    )
    insert into feed_rate_hits (token_id, at) values (${tokenId}, ${now})
  `;
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
