// Dashboard sessions: a random cookie value whose SHA-256 is the row's key in dashboard_sessions
// (so a database leak yields no usable session), expired after 12 hours without a request, as
// the clock tells. Kept in PostgreSQL, a session works on every instance.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Sql } from "../db/connect.ts";
import type { Clock } from "./clock.ts";
import { ApiError } from "./errors.ts";
import { hashSecret, randomToken, secretMatches } from "./secrets.ts";
import { recordSignInFailure, signInRetryAfter } from "./signin_limit.ts";

export const SESSION_IDLE_MS = 12 * 60 * 60_000;

export interface Session {
  /** The cookie value: known to the browser only, never stored. */
  token: string;
  /** The synchronizer token every state-changing form of this session must carry. */
  csrfToken: string;
}

/** Signs in with the admin token from `address`; refused attempts count towards its limit. */
export async function signIn(
  sql: Sql,
  clock: Clock,
  input: { adminToken: string; address: string; adminTokenHash: string },
): Promise<Session> {
  const now = clock.now();
  // The outcome is returned, not thrown, from the transaction: a failure must be committed.
  const outcome = await sql.begin(async (tx) => {
    const retryAfter = await signInRetryAfter(tx, input.address, now);
    if (retryAfter > 0) return { retryAfter };
    if (!input.adminToken || !secretMatches(input.adminToken, input.adminTokenHash)) {
      await recordSignInFailure(tx, input.address, now);
      return { wrong: true };
    }
    const token = randomToken(32);
    // Expired sessions go when someone signs in, a bounded batch at a time: each sign-in adds
    // one session and removes up to a hundred dead ones, so no background job is needed.
    await tx`
      delete from dashboard_sessions
      where token_hash = any(array(
        select token_hash from dashboard_sessions
        where last_seen_at <= ${new Date(now.getTime() - SESSION_IDLE_MS)}
        limit 100
      ))
    `;
    await tx`
      insert into dashboard_sessions (token_hash, created_at, last_seen_at)
      values (${hashSecret(token)}, ${now}, ${now})
    `;
    return { token };
  });
  if ("retryAfter" in outcome) {
    throw new ApiError(
      "rate_limited",
      "too many wrong tokens from this address; wait before trying again",
      { retryAfter: outcome.retryAfter },
    );
  }
  if ("wrong" in outcome) throw new ApiError("unauthorized", "that is not the admin token");
  return { token: outcome.token, csrfToken: csrfTokenFor(outcome.token) };
}

/**
 * The session behind a cookie value, or null when it is unknown, forged or idle for 12 hours.
 * A live session's idle clock restarts here, in the same statement.
 */
export async function resumeSession(
  sql: Sql,
  clock: Clock,
  token: string | undefined,
): Promise<Session | null> {
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const now = clock.now();
  const [row] = await sql`
    update dashboard_sessions set last_seen_at = ${now}
    where token_hash = ${hashSecret(token)}
      and last_seen_at > ${new Date(now.getTime() - SESSION_IDLE_MS)}
    returning 1
  `;
  return row ? { token, csrfToken: csrfTokenFor(token) } : null;
}

/**
 * Whether a session still stands (not signed out, not idle for 12 hours), without restarting its
 * idle clock: an open live page is not activity that keeps a session alive.
 */
export async function sessionStands(sql: Sql, clock: Clock, token: string): Promise<boolean> {
  const now = clock.now();
  const [row] = await sql`
    select 1 from dashboard_sessions
    where token_hash = ${hashSecret(token)}
      and last_seen_at > ${new Date(now.getTime() - SESSION_IDLE_MS)}
  `;
  return row !== undefined;
}

export async function signOut(sql: Sql, token: string): Promise<void> {
  await sql`delete from dashboard_sessions where token_hash = ${hashSecret(token)}`;
}

/**
 * Derived from the session's secret, so it needs no storage and is bound to that session: a
 * page of another site can neither read the HttpOnly cookie nor compute this.
 */
function csrfTokenFor(sessionToken: string): string {
  return createHmac("sha256", sessionToken).update("dashboard-csrf").digest("base64url");
}

export function csrfTokenMatches(session: Session, presented: unknown): boolean {
  if (typeof presented !== "string") return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && timingSafeEqual(a, b);
}
