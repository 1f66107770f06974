// Failed password sign-ins to the dashboard, limited twice over a sliding window of 15 minutes:
//
// - per client address (an IPv6 address counts as its /64, as for the admin token): 10 failures,
//   then that address is refused;
// - per account (the email the attempt names, whether or not an account has it, so the limit
//   tells nothing about which emails exist): 10 failures from any addresses together, then every
//   password attempt for that account is refused. A botnet spreading its guesses over many
//   addresses gets no more than 10 guesses per account per 15 minutes (about 1,000 a day).
//
// Neither count locks anyone out for good: a refusal lasts until the oldest counted failure
// leaves the window, at most 15 minutes after the last one. While an attacker keeps an account's
// count full, its person still gets in from a browser they signed in from before: its device
// cookie (services/access/devices.ts) counts that browser's attempts under a key of its own, 10
// per 15 minutes, instead of the account's. They also get in through OpenID Connect when it is
// configured (the provider proves who they are, and that door counts per address only), and the
// sessions they already hold keep working. Changing the password (which asks for the current one) counts its
// wrong current passwords under the same two limits.
//
// Failures are rows in PostgreSQL (password_signin_failures) so the limits hold however many
// instances serve the dashboard. Its `address` column holds the key a failure counts under: the
// address as limitKey() writes it, or `account:` and the SHA-256 of the lowercased email. The
// admin token has its own limit (services/access/admin_token_limit.ts): a password is not the
// admin token, so guessing passwords does not use up the admin token's allowance.
import type { Db } from "../../db/connect.ts";
import { limitKey } from "./admin_token_limit.ts";
import { hashSecret } from "../../infra/secrets.ts";
import { ApiError } from "../errors.ts";

/** Failed sign-ins one address may make in the window before every attempt is refused. */
export const PASSWORD_MAX_FAILURES = 10;
/** Failed sign-ins for one account, from any addresses, in the window before it is refused. */
export const PASSWORD_MAX_FAILURES_PER_ACCOUNT = 10;
export const PASSWORD_WINDOW_MS = 15 * 60_000;
// The first keys of pg_advisory_xact_lock(int, int); the second is a hash of the key. Every
// attempt takes its address's lock before its account's: two attempts never wait on each other
// in opposite orders.
const ADDRESS_LOCK_NAMESPACE = 4_242_022;
const ACCOUNT_LOCK_NAMESPACE = 4_242_026;
const PRUNE_BATCH = 100;

/** What an attempt is counted under: where it comes from and, for a password, whom it names. */
export interface PasswordAttempt {
  address: string;
  /** The account's email as typed (any case); absent for a door that names no account (OIDC). */
  email?: string;
  /**
   * A verified device cookie of that account (devices.ts verifiedDevice): the attempt then counts
   * under the device instead of the account.
   */
  device?: string | null;
}

export interface PasswordLimited {
  /** Which count refused the attempt. */
  scope: "address" | "account";
  /** Seconds until one more attempt is allowed. */
  seconds: number;
}

function keysOf(attempt: PasswordAttempt): { key: string; max: number; namespace: number }[] {
  const keys = [{
    key: limitKey(attempt.address),
    max: PASSWORD_MAX_FAILURES,
    namespace: ADDRESS_LOCK_NAMESPACE,
  }];
  if (attempt.email !== undefined) {
    keys.push({
      key: attempt.device ? `device:${hashSecret(attempt.device)}` : accountKey(attempt.email),
      max: PASSWORD_MAX_FAILURES_PER_ACCOUNT,
      namespace: ACCOUNT_LOCK_NAMESPACE,
    });
  }
  return keys;
}

/** The key an account's failures count under: its email, lowercased and hashed. */
export function accountKey(email: string): string {
  return `account:${hashSecret(email.trim().toLowerCase())}`;
}

/**
 * Null when the attempt may go on, else which count refuses it and for how long. Call inside
 * the transaction that then records the attempt: the advisory locks serialise check and record
 * per address and per account across instances, so parallel guesses cannot all slip under a
 * limit.
 */
export async function passwordLimited(
  tx: Db,
  attempt: PasswordAttempt,
  now: Date,
): Promise<PasswordLimited | null> {
  const since = new Date(now.getTime() - PASSWORD_WINDOW_MS);
  let limited: PasswordLimited | null = null;
  for (const [i, { key, max, namespace }] of keysOf(attempt).entries()) {
    await tx`select pg_advisory_xact_lock(${namespace}::int, hashtext(${key}))`;
    // The MAX-th most recent failure in the window: while it exists the limit is reached, and
    // its leaving the window frees one attempt.
    const [row] = await tx<{ at: Date }[]>`
      select at from password_signin_failures
      where address = ${key} and at > ${since}
      order by at desc offset ${max - 1} limit 1
    `;
    if (!row) continue;
    const seconds = Math.max(
      1,
      Math.ceil((row.at.getTime() + PASSWORD_WINDOW_MS - now.getTime()) / 1000),
    );
    if (!limited || seconds > limited.seconds) {
      limited = { scope: i === 0 ? "address" : "account", seconds };
    }
  }
  return limited;
}

/**
 * Counts a failure under each of the attempt's keys, and drops up to PRUNE_BATCH failures that
 * have left the window: each failure adds a row or two and removes many, so the table stays
 * small with no job.
 */
export async function recordPasswordFailure(
  tx: Db,
  attempt: PasswordAttempt,
  now: Date,
): Promise<void> {
  const since = new Date(now.getTime() - PASSWORD_WINDOW_MS);
  const rows = keysOf(attempt).map(({ key }) => ({ address: key, at: now }));
  await tx`
    with expired as (
      delete from password_signin_failures
      where ctid = any(array(
        select ctid from password_signin_failures where at <= ${since} limit ${PRUNE_BATCH}
      ))
    )
    insert into password_signin_failures ${tx(rows, "address", "at")}
  `;
}

/**
 * Checks the limits and, when the attempt may go on, counts it as a failure at once (taken back
 * by forgetPasswordFailure when it turns out right): parallel guesses cannot slip past the limit
 * while their (slow, memory-hard) hashes are computed. Null when it may go on.
 */
export async function admitPasswordAttempt(
  tx: Db,
  attempt: PasswordAttempt,
  now: Date,
): Promise<PasswordLimited | null> {
  const limited = await passwordLimited(tx, attempt, now);
  if (!limited) await recordPasswordFailure(tx, attempt, now);
  return limited;
}

/** Takes back the failure recorded at `now` under each of the attempt's keys (it was right). */
export async function forgetPasswordFailure(
  tx: Db,
  attempt: PasswordAttempt,
  now: Date,
): Promise<void> {
  for (const { key } of keysOf(attempt)) {
    await tx`
      delete from password_signin_failures where ctid = any(array(
        select ctid from password_signin_failures
        where address = ${key} and at = ${now} limit 1
      ))
    `;
  }
}

/** The refusal of a limited password attempt, saying which limit and for how long. */
export function passwordRateLimited(limited: PasswordLimited): ApiError {
  return new ApiError(
    "rate_limited",
    limited.scope === "address"
      ? "too many failed sign-ins from this address; wait before trying again"
      : "too many failed sign-ins for this account; wait before trying again",
    { retryAfter: limited.seconds },
  );
}
