// Dashboard sessions: a random cookie value whose SHA-256 is the row's key in dashboard_sessions
// (so a database leak yields no usable session), expired after 12 hours without a request, as
// the clock tells. Kept in PostgreSQL, a session works on every instance.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Sql } from "../db/connect.ts";
import type { Clock } from "./clock.ts";
import { checkAdminToken } from "./admin_token_limit.ts";
import { hashSecret, randomToken } from "./secrets.ts";

export const SESSION_IDLE_MS = 12 * 60 * 60_000;

export interface Session {
  /** The cookie value: known to the browser only, never stored. */
  token: string;
  /** The synchronizer token every state-changing form of this session must carry. */
  csrfToken: string;
}

/**
 * Signs in with the admin token from `address`, through the one admin-token check and its limit
 * (services/admin_token_limit.ts): a wrong token counts there, and a limited address or
 * instance is refused (rate_limited) whatever it presents.
 */
export async function signIn(
  sql: Sql,
  clock: Clock,
  input: { adminToken: string; address: string; adminTokenHash: string },
): Promise<Session> {
  await checkAdminToken(sql, clock, input.adminTokenHash, {
    presented: input.adminToken || null,
    address: input.address,
  });
  const now = clock.now();
  const token = randomToken(32);
  await sql.begin(async (tx) => {
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
  });
  return { token, csrfToken: csrfTokenFor(token) };
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
