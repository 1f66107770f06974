// Who an `Authorization: Bearer …` header names on the admin API: an API key (`sk_…`), the
// instance admin token, or nobody (401).
//
// The admin token is checked in one place only, services/access/admin_token_limit.ts, whose limit on
// wrong tokens every door shares (this one, and the dashboard's sign-in). A bearer that is not a
// key we issued is an attempt at the admin token and goes through that check: a wrong one counts,
// whatever it looks like (an `sk_…` value that no key ever had included). A key we did issue but
// that is revoked, expired or orphaned is a plain 401 and does not count: it is no guess, and a
// forgotten job still sending one must not use up the allowance that keeps the admin token
// usable. A valid key works even while the address or the instance is limited: the limit is on
// guessing the admin token, not on keys.
import type { Sql } from "../../db/connect.ts";
import { type AdminTokenAttempt, checkAdminToken } from "./admin_token_limit.ts";
import type { Clock } from "../../infra/clock.ts";
import { API_KEY_PREFIX, authenticateApiKey } from "./api_keys.ts";
import { ADMIN_TOKEN_PRINCIPAL, type Principal } from "./principal.ts";

export interface BearerDeps {
  sql: Sql;
  clock: Clock;
  /** SHA-256 digest of the instance admin token. */
  adminTokenHash: string;
}

/**
 * The principal behind `attempt` (the bearer presented, or null, and the client's address).
 * Throws 401 `unauthorized` (missing, wrong, revoked or expired) or 503 `rate_limited` (a wrong
 * admin token too often from this address).
 */
export async function authenticateBearer(
  deps: BearerDeps,
  attempt: AdminTokenAttempt,
): Promise<Principal> {
  const token = attempt.presented;
  if (token?.startsWith(API_KEY_PREFIX)) {
    const key = await authenticateApiKey(deps.sql, deps.clock, token);
    if (key) return key;
  }
  await checkAdminToken(deps.sql, deps.clock, deps.adminTokenHash, attempt);
  return ADMIN_TOKEN_PRINCIPAL;
}
