// The one check of the admin token, whichever door it comes through (the REST admin API's
// bearer token, the dashboard's sign-in form), under one limit on wrong guesses. Failures are
// rows in PostgreSQL (admin_token_failures) counted over a sliding window, so the limit holds
// however many instances serve the requests.
//
// Two counts, both over the last 15 minutes:
// - per client address (an IPv6 address counts as its /64, the block one subscriber usually
//   holds): 10 failures, then that address is refused. One attacker cannot lock the real admin
//   out, who signs in or calls from another address.
// - for the whole instance: 100 failures from any addresses, then every attempt is refused. This
//   caps the guesses of an attacker who spreads them over many addresses; locking everyone out
//   this way takes at least ten addresses acting together, and even then dashboard sessions
//   already open keep working (they are not admin-token checks) and the admin CLI does not
//   pass through here. The ceiling lifts as the failures leave the window.
// Only a presented token that is wrong counts: a request without one, or with one longer than
// any admin token can be, guesses nothing (scanners probing the admin routes bare do not use up
// the instance's allowance), and a right one is never counted.
import ipaddr from "ipaddr.js";
import type { Db, Sql } from "../../db/connect.ts";
import type { Clock } from "../../infra/clock.ts";
import { ApiError } from "../errors.ts";
import { plausibleSecret, secretMatches } from "../../infra/secrets.ts";

/** Wrong tokens one address may present in the window before every attempt it makes is refused. */
export const ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS = 10;
/** Wrong tokens from all addresses together in the window before every attempt is refused. */
export const ADMIN_TOKEN_MAX_FAILURES = 100;
export const ADMIN_TOKEN_WINDOW_MS = 15 * 60_000;
// pg_advisory_xact_lock(int, int) keys of the one lock every check takes.
const LOCK_NAMESPACE = 4_242_013;
const LOCK_KEY = 0;
const PRUNE_BATCH = 100;

export interface AdminTokenAttempt {
  /** The token presented, or null when the request carried none. */
  presented: string | null;
  /** The client's address (the connection's, or the trusted proxy's X-Forwarded-For). */
  address: string;
}

/**
 * Resolves when `attempt` carries the admin token and neither its address nor the instance is
 * limited. Throws ApiError `rate_limited` (with retryAfter) when limited, whatever the token,
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
    // Check, compare and record under one lock shared by every instance: parallel guesses
    // cannot all slip under a limit, and a limited attempt's answer (taken before the token is
    // compared) cannot tell by its timing whether the token was right.
    await tx`select pg_advisory_xact_lock(${LOCK_NAMESPACE}::int, ${LOCK_KEY}::int)`;
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
    outcome.scope === "address"
      ? "too many wrong admin tokens from this address; wait before trying again"
      : "too many wrong admin tokens on this instance; wait before trying again",
    { retryAfter: outcome.seconds },
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

/** When limited, which count and the seconds until one more attempt is allowed; else null. */
async function limitedFor(
  tx: Db,
  address: string,
  now: Date,
): Promise<{ scope: "address" | "instance"; seconds: number } | null> {
  const since = new Date(now.getTime() - ADMIN_TOKEN_WINDOW_MS);
  // The MAX-th most recent failure in the window, per address and overall: while it exists the
  // limit is reached, and its leaving the window frees one attempt.
  const [row] = await tx<{ address_at: Date | null; instance_at: Date | null }[]>`
    select
      (select at from admin_token_failures
       where address = ${address} and at > ${since}
       order by at desc offset ${ADMIN_TOKEN_MAX_FAILURES_PER_ADDRESS - 1} limit 1) as address_at,
      (select at from admin_token_failures
       where at > ${since}
       order by at desc offset ${ADMIN_TOKEN_MAX_FAILURES - 1} limit 1) as instance_at
  `;
  const wait = (at: Date) =>
    Math.max(1, Math.ceil((at.getTime() + ADMIN_TOKEN_WINDOW_MS - now.getTime()) / 1000));
  const byAddress = row?.address_at ? wait(row.address_at) : 0;
  const byInstance = row?.instance_at ? wait(row.instance_at) : 0;
  if (byAddress === 0 && byInstance === 0) return null;
  return byAddress >= byInstance
    ? { scope: "address", seconds: byAddress }
    : { scope: "instance", seconds: byInstance };
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
