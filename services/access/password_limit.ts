// Failed password sign-ins to the dashboard, limited per client address: failures are rows in
// PostgreSQL (password_signin_failures) counted over a sliding window, so the limit holds however
// many instances serve the dashboard. The admin token has its own limit, which every door that
// takes it shares (services/access/admin_token_limit.ts); a password is not the admin token, so its
// failures are kept apart: guessing passwords does not lock the instance admin out.
import type { Db } from "../../db/connect.ts";
import { limitKey } from "./admin_token_limit.ts";

/** Failed sign-ins one address may make in the window before every attempt is refused. */
export const PASSWORD_MAX_FAILURES = 10;
export const PASSWORD_WINDOW_MS = 15 * 60_000;
// The first key of pg_advisory_xact_lock(int, int); the second is a hash of the address.
const LOCK_NAMESPACE = 4_242_022;
const PRUNE_BATCH = 100;

/**
 * Seconds until the address may try again, or 0 when it may try now. Call inside the
 * transaction that then records the attempt: the advisory lock serialises check and record per
 * address across instances, so parallel guesses cannot all slip under the limit.
 */
export async function passwordRetryAfter(tx: Db, address: string, now: Date): Promise<number> {
  const key = limitKey(address);
  const since = new Date(now.getTime() - PASSWORD_WINDOW_MS);
  await tx`select pg_advisory_xact_lock(${LOCK_NAMESPACE}::int, hashtext(${key}))`;
  const failures = await tx<{ at: Date }[]>`
    select at from password_signin_failures
    where address = ${key} and at > ${since}
    order by at desc limit ${PASSWORD_MAX_FAILURES}
  `;
  if (failures.length < PASSWORD_MAX_FAILURES) return 0;
  // The oldest of the last MAX failures leaving the window frees one attempt.
  const oldest = failures[failures.length - 1]!.at.getTime();
  return Math.max(1, Math.ceil((oldest + PASSWORD_WINDOW_MS - now.getTime()) / 1000));
}

/**
 * Counts a failure, and drops up to PRUNE_BATCH failures of any address that have left the
 * window: each failure adds one row and removes many, so the table stays small with no job.
 */
export async function recordPasswordFailure(tx: Db, address: string, now: Date): Promise<void> {
  const since = new Date(now.getTime() - PASSWORD_WINDOW_MS);
  await tx`
    with expired as (
      delete from password_signin_failures
      where ctid = any(array(
        select ctid from password_signin_failures where at <= ${since} limit ${PRUNE_BATCH}
      ))
    )
    insert into password_signin_failures (address, at) values (${limitKey(address)}, ${now})
  `;
}

/** Takes back one failure recorded at `now` for the address (the attempt turned out right). */
export async function forgetPasswordFailure(tx: Db, address: string, now: Date): Promise<void> {
  await tx`
    delete from password_signin_failures where ctid = any(array(
      select ctid from password_signin_failures
      where address = ${limitKey(address)} and at = ${now} limit 1
    ))
  `;
}
