// Sign-in attempts to the dashboard, limited per client address: failures are counted in
// PostgreSQL (dashboard_signin_failures) over a sliding window, so the limit holds however many
// instances serve the dashboard.
import type { Db } from "../db/connect.ts";

/** Failed sign-ins one address may make in the window before every attempt is refused. */
export const SIGNIN_MAX_FAILURES = 10;
export const SIGNIN_WINDOW_MS = 15 * 60_000;
// The first key of pg_advisory_xact_lock(int, int); the second is a hash of the address.
const SIGNIN_LOCK_NAMESPACE = 4_242_013;

/**
 * Seconds until the address may try again, or 0 when it may try now. Call inside the
 * transaction that then records the attempt's outcome: the advisory lock serialises check and
 * record per address across instances, so parallel guesses cannot all slip under the limit.
 */
export async function signInRetryAfter(tx: Db, address: string, now: Date): Promise<number> {
  const since = new Date(now.getTime() - SIGNIN_WINDOW_MS);
  await tx`select pg_advisory_xact_lock(${SIGNIN_LOCK_NAMESPACE}::int, hashtext(${address}))`;
  const failures = await tx<{ at: Date }[]>`
    select at from dashboard_signin_failures
    where address = ${address} and at > ${since}
    order by at desc limit ${SIGNIN_MAX_FAILURES}
  `;
  if (failures.length < SIGNIN_MAX_FAILURES) return 0;
  // The oldest of the last MAX failures leaving the window frees one attempt.
  const oldest = failures[failures.length - 1]!.at.getTime();
  return Math.max(1, Math.ceil((oldest + SIGNIN_WINDOW_MS - now.getTime()) / 1000));
}

/**
 * Counts a failure, and drops up to PRUNE_BATCH failures of any address that have left the
 * window: each failure adds one row and removes many, so the table stays small with no job.
 */
export async function recordSignInFailure(tx: Db, address: string, now: Date): Promise<void> {
  const since = new Date(now.getTime() - SIGNIN_WINDOW_MS);
  await tx`
    with expired as (
      delete from dashboard_signin_failures
      where ctid = any(array(
        select ctid from dashboard_signin_failures where at <= ${since} limit ${PRUNE_BATCH}
      ))
    )
    insert into dashboard_signin_failures (address, at) values (${address}, ${now})
  `;
}

const PRUNE_BATCH = 100;
