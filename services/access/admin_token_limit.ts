// The one check of the admin token, whichever door it comes through (the REST admin API's
// bearer token, the dashboard's sign-in form), under one limit on wrong guesses per client
// address. Failures are rows in PostgreSQL (admin_token_failures) counted over a sliding window,
// so the limit holds however many instances serve the requests.
//
// Per client address (an IPv6 address counts as its /64, the block one subscriber usually
// holds): 10 wrong tokens in 15 minutes, then that address is refused until its oldest failure
// leaves the window. There is no ceiling for the whole instance: one would let anyone with a few
// addresses lock the instance admin out. What keeps guessing hopeless is the token's strength
// (config.ts, adminTokenWeakness: a new instance refuses a weak ADMIN_TOKEN and a generated one
// carries 256 bits): even a botnet of a million addresses, or a holder of a /48 (65,536 /64s),
// gets about 10^12 guesses a year at this limit, against at least 2^128 tokens. The limit keeps
// one address from hammering the door, and slows guessing at a weak token kept by an instance set
// up before the rule; it is not what protects a strong token.
// Only a presented token that is wrong counts: a request without one, or with one longer than
// any admin token can be, guesses nothing, and a right one is never counted.
import ipaddr from "ipaddr.js";
import type { Db, Sql } from "../../db/connect.ts";
import type { Clock } from "../../infra/clock.ts";
import { ApiError } from "../errors.ts";
import { plausibleSecret, secretMatches } from "../../infra/secrets.ts";

/** Wrong tokens one address may present in the window before every attempt it makes is refused. */
export const ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS = 10;
export const ADMIN_TOKEN_WINDOW_MS = 15 * 60_000;
// The first key of pg_advisory_xact_lock(int, int); the second is a hash of the address.
const LOCK_NAMESPACE = 4_242_013;
const PRUNE_BATCH = 100;

export interface AdminTokenAttempt {
  /** The token presented, or null when the request carried none. */
  presented: string | null;
  /** The client's address (the connection's, or the trusted proxy's X-Forwarded-For). */
  address: string;
}

/**
 * Resolves when `attempt` carries the admin token and its address is not limited. Throws
 * ApiError `rate_limited` (with retryAfter) when the address is limited, whatever the token,
 * the right one included; `unauthorized` when the token is missing or wrong, counting a wrong
 * one. A refused or limited attempt changes nothing but the failure it records.
 */
export async function checkAdminToken(
  sql: Sql,
  clock: Clock,
  adminTokenHash: string,
  attempt: AdminTokenAttempt,
): Promise<void> {
  // No token, or one longer than any secret of ours (secrets.ts): no guess, nothing to count.
  if (!plausibleSecret(attempt.presented)) throw unauthorized();
  const presented = attempt.presented;
  const address = limitKey(attempt.address);
  const now = clock.now();
  // The outcome is returned, not thrown, from the transaction: a failure must be committed.
  const outcome = await sql.begin(async (tx) => {
    // Check, compare and record under the address's lock, shared by every instance: parallel
    // guesses cannot all slip under the limit, and a limited attempt's answer (taken before the
    // token is compared) cannot tell by its timing whether the token was right.
    await tx`select pg_advisory_xact_lock(${LOCK_NAMESPACE}::int, hashtext(${address}))`;
    const retryAfter = await limitedFor(tx, address, now);
    if (retryAfter) return retryAfter;
    if (secretMatches(presented, adminTokenHash)) return "ok" as const;
    await recordFailure(tx, address, now);
    return "wrong" as const;
  });
  if (outcome === "ok") return;
  if (outcome === "wrong") throw unauthorized();
  throw new ApiError(
    "rate_limited",
    "too many wrong admin tokens from this address; wait before trying again",
    { retryAfter: outcome },
  );
}

function unauthorized(): ApiError {
  return new ApiError("unauthorized", "admin token missing or wrong");
}

/**
 * The key failures are counted under: an IPv4 address as it is, an IPv6 one as its /64 (an
 * IPv4-mapped one as the IPv4 it carries), anything else (no address known) as given.
 */
export function limitKey(address: string): string {
  if (!ipaddr.isValid(address)) return address.slice(0, 100);
  const parsed = ipaddr.process(address);
  if (parsed.kind() === "ipv4") return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts;
  return `${new ipaddr.IPv6([...parts.slice(0, 4), 0, 0, 0, 0]).toString()}/64`;
}

/** Seconds until the address may try again when it is limited; else 0. */
async function limitedFor(tx: Db, address: string, now: Date): Promise<number> {
  const since = new Date(now.getTime() - ADMIN_TOKEN_WINDOW_MS);
  // The MAX-th most recent failure in the window: while it exists the limit is reached, and its
  // leaving the window frees one attempt.
  const [row] = await tx<{ at: Date }[]>`
    select at from admin_token_failures
    where address = ${address} and at > ${since}
    order by at desc offset ${ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS - 1} limit 1
  `;
  if (!row) return 0;
  return Math.max(1, Math.ceil((row.at.getTime() + ADMIN_TOKEN_WINDOW_MS - now.getTime()) / 1000));
}

/**
 * Counts a failure, and drops up to PRUNE_BATCH failures of any address that have left the
 * window: each failure adds one row and removes many, so the table stays small with no job.
 */
async function recordFailure(tx: Db, address: string, now: Date): Promise<void> {
  const since = new Date(now.getTime() - ADMIN_TOKEN_WINDOW_MS);
  await tx`
    with expired as (
      delete from admin_token_failures
      where ctid = any(array(
        select ctid from admin_token_failures where at <= ${since} limit ${PRUNE_BATCH}
      ))
    )
    insert into admin_token_failures (address, at) values (${address}, ${now})
  `;
}
