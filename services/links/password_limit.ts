// Wrong passwords for a password link, limited per link and client address (CONTRACT.md, "Link
// rules, splits and passwords"): 10 failures in 15 minutes, then 503 until the oldest leaves the
// window. Failures are rows in PostgreSQL (link_password_failures, migration 00023) counted under
// an advisory lock, so the limit holds however many instances serve the link host. The address
// is kept only as a hash of its limit key (an IPv6 /64 is one key, as for sign-ins).
import type { Db, Sql } from "../../db/connect.ts";
import { limitKey } from "../access/admin_token_limit.ts";
import { hashSecret } from "../../infra/secrets.ts";
import { verifyPassword } from "../access/passwords.ts";

export const LINK_PASSWORD_MAX_FAILURES = 10;
export const LINK_PASSWORD_WINDOW_MS = 15 * 60_000;
// The first key of pg_advisory_xact_lock(int, int); the second is a hash of link and address.
const LOCK_NAMESPACE = 4_242_035;
const PRUNE_BATCH = 100;

export type PasswordOutcome =
  | { ok: true }
  | { ok: false; retryAfter: number | null };

async function retryAfter(tx: Db, linkId: number, key: string, now: Date): Promise<number> {
  const since = new Date(now.getTime() - LINK_PASSWORD_WINDOW_MS);
  const failures = await tx<{ at: Date }[]>`
    select at from link_password_failures
    where link_id = ${linkId} and address_hash = ${key} and at > ${since}
    order by at desc limit ${LINK_PASSWORD_MAX_FAILURES}
  `;
  if (failures.length < LINK_PASSWORD_MAX_FAILURES) return 0;
  const oldest = failures[failures.length - 1]!.at.getTime();
  return Math.max(1, Math.ceil((oldest + LINK_PASSWORD_WINDOW_MS - now.getTime()) / 1000));
}

/**
 * Checks a password given for link `linkId` from `address`: refused without comparing while the
 * address is limited (`retryAfter` seconds), else compared with the stored hash, a wrong one
 * counted. Check, comparison and count happen under one lock per link and address held by the
 * transaction, so parallel guesses cannot all slip under the limit.
 */
export async function checkLinkPassword(
  sql: Sql,
  linkId: number,
  address: string,
  password: string,
  now: Date,
): Promise<PasswordOutcome> {
  const key = hashSecret(`link password:${limitKey(address)}`);
  const since = new Date(now.getTime() - LINK_PASSWORD_WINDOW_MS);
  return await sql.begin(async (tx): Promise<PasswordOutcome> => {
    await tx`select pg_advisory_xact_lock(${LOCK_NAMESPACE}::int, hashtext(${`${linkId}:${key}`}))`;
    const wait = await retryAfter(tx, linkId, key, now);
    if (wait > 0) return { ok: false, retryAfter: wait };
    const [stored] = await tx<{ password_hash: string | null }[]>`
      select password_hash from links where id = ${linkId}
    `;
    // A link whose password was removed meanwhile opens: it has nothing left to protect.
    if (!stored?.password_hash) return { ok: true };
    if (await verifyPassword(password, stored.password_hash)) return { ok: true };
    await tx`
      with expired as (
        delete from link_password_failures
        where ctid = any(array(
          select ctid from link_password_failures where at <= ${since} limit ${PRUNE_BATCH}
        ))
      )
      insert into link_password_failures (link_id, address_hash, at)
      values (${linkId}, ${key}, ${now})
    `;
    return { ok: false, retryAfter: null };
  });
}
