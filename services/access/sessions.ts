// Dashboard sessions: a random cookie value whose SHA-256 is the row's key in dashboard_sessions
// (so a database leak yields no usable session), expired after 12 hours without a request and,
// however busy, at an absolute lifetime after sign-in (DASHBOARD_SESSION_MAX_DAYS, 7 days by
// default), as the clock tells. Kept in PostgreSQL, a session works on every instance. A session
// is the instance admin's (signed in with the admin token) or a person's (email and password,
// OIDC, a setup link). The instance admin's carries a fingerprint of the admin token that made
// it: when ADMIN_TOKEN changes, every such session ends on its next request, on every instance.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Db, Sql } from "../../db/connect.ts";
import { verifyPassword } from "./passwords.ts";
import type { Role } from "./permissions.ts";
import { ADMIN_TOKEN_PRINCIPAL, type Principal } from "./principal.ts";
import type { Clock } from "../../infra/clock.ts";
import { checkAdminToken } from "./admin_token_limit.ts";
import { ApiError } from "../errors.ts";
import {
  admitPasswordAttempt,
  forgetPasswordFailure,
  passwordRateLimited,
} from "./password_limit.ts";
import { hashSecret, randomToken } from "../../infra/secrets.ts";

export const SESSION_IDLE_MS = 12 * 60 * 60_000;

/** What checking a session needs beside the database: the clock, the token, the lifetime. */
export interface SessionDeps {
  sql: Sql;
  clock: Clock;
  /** SHA-256 digest of the instance's current admin token. */
  adminTokenHash: string;
  config: { dashboardSessionMaxDays: number };
}

/**
 * What an admin-token session stores of the token that made it: derived from the token's digest
 * for this one use, so the sessions table holds nothing an admin-token check would accept.
 */
function adminTokenFingerprint(adminTokenHash: string): string {
  return createHmac("sha256", adminTokenHash).update("dashboard-session").digest("base64url");
}

/** The conditions under which a row of dashboard_sessions stands at `now`. */
function standing(deps: SessionDeps, now: Date) {
  const { sql } = deps;
  const idleSince = new Date(now.getTime() - SESSION_IDLE_MS);
  const bornSince = new Date(now.getTime() - deps.config.dashboardSessionMaxDays * 86_400_000);
  return sql`
    last_seen_at > ${idleSince} and created_at > ${bornSince}
    and (account_id is not null
      or admin_token_fingerprint = ${adminTokenFingerprint(deps.adminTokenHash)})
  `;
}

/**
 * The session's cookie: set for the dashboard's pages and for /graphql (a member's session
 * authenticates GraphQL, resolvers/authorize.ts), not for the rest of the service.
 */
export const SESSION_COOKIE = "dashboard_session";

export interface Session {
  /** The cookie value: known to the browser only, never stored. */
  token: string;
  /** The synchronizer token every state-changing form of this session must carry. */
  csrfToken: string;
  /** Who signed in: the instance admin, or an account. */
  principal: Principal;
  /**
   * The session's role on the project of the page being served ("instance": the instance admin;
   * null: none), set by the dashboard's access check so pages show only what it allows.
   */
  role?: Role | "instance" | null;
}

/**
 * Signs in with the admin token from `address`, through the one admin-token check and its limit
 * (services/access/admin_token_limit.ts): a wrong token counts there, and a limited address or
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
  const fingerprint = adminTokenFingerprint(input.adminTokenHash);
  const token = await sql.begin((tx) => insertSession(tx, now, null, fingerprint));
  return sessionOf(token, ADMIN_TOKEN_PRINCIPAL);
}

function sessionOf(token: string, principal: Principal): Session {
  return { token, csrfToken: csrfTokenFor(token), principal };
}

/**
 * A new session's cookie value; its row is written with `tx`. An account's session has its id,
 * the instance admin's the fingerprint of the admin token it signed in with.
 */
async function insertSession(
  tx: Db,
  now: Date,
  accountId: number | null,
  fingerprint: string | null = null,
): Promise<string> {
  const token = randomToken(32);
  // Expired sessions go when someone signs in, a bounded batch at a time: each sign-in adds
  // one session and removes up to a hundred dead ones, so no background job is needed. A
  // session past its lifetime or its admin token is refused, so it stops being seen and goes
  // 12 hours later with the idle ones.
  await tx`
    delete from dashboard_sessions
    where token_hash = any(array(
      select token_hash from dashboard_sessions
      where last_seen_at <= ${new Date(now.getTime() - SESSION_IDLE_MS)}
      limit 100
    ))
  `;
  await tx`
    insert into dashboard_sessions
      (token_hash, created_at, last_seen_at, account_id, admin_token_fingerprint)
    values (${hashSecret(token)}, ${now}, ${now}, ${accountId}, ${fingerprint})
  `;
  return token;
}

interface AccountRow {
  id: number;
  name: string;
  email: string;
  password_hash: string | null;
}

const accountPrincipal = (a: { id: number; name: string; email: string }): Principal => ({
  type: "account",
  id: a.id,
  name: a.name,
  email: a.email,
});

/**
 * Signs a person in with their email and password from `address`, under the limits per address
 * and per account (services/access/password_limit.ts). The attempt counts as a failure before
 * the (slow, memory-hard) check and is taken back when it succeeds: parallel guesses cannot slip
 * past the limit while their hashes are computed.
 */
export async function signInWithPassword(
  sql: Sql,
  clock: Clock,
  input: { email: string; password: string; address: string; device?: string | null },
): Promise<Session> {
  const now = clock.now();
  const email = input.email.trim();
  const attempt = { address: input.address, email, device: input.device };
  const limited = await sql.begin((tx) => admitPasswordAttempt(tx, attempt, now));
  if (limited) throw passwordRateLimited(limited);
  const [account] = email.length === 0 || email.length > 320 ? [] : await sql<AccountRow[]>`
    select id, name, email, password_hash from accounts where lower(email) = lower(${email})
  `;
  const matches = await verifyPassword(input.password, account?.password_hash ?? null);
  if (!account || !matches) {
    throw new ApiError("unauthorized", "that email and password do not match an account");
  }
  const token = await sql.begin(async (tx) => {
    await forgetPasswordFailure(tx, attempt, now);
    return await insertSession(tx, now, account.id);
  });
  return sessionOf(token, accountPrincipal(account));
}

/** A session for an account that has just proved who it is (its setup link). */
export async function startAccountSession(
  sql: Sql,
  clock: Clock,
  account: { id: number; name: string; email: string },
): Promise<Session> {
  const token = await insertSession(sql, clock.now(), account.id);
  return sessionOf(token, accountPrincipal(account));
}

/**
 * The session behind a cookie value, or null when it is unknown, forged, idle for 12 hours, past
 * its lifetime, or the instance admin's made with another admin token than today's. A live
 * session's idle clock restarts here, in the same statement.
 */
export async function resumeSession(
  deps: SessionDeps,
  token: string | undefined,
): Promise<Session | null> {
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const { sql } = deps;
  const now = deps.clock.now();
  // A removed account's sessions are gone with it (on delete cascade).
  const [row] = await sql<{ account_id: number | null; name: string; email: string }[]>`
    with s as (
      update dashboard_sessions set last_seen_at = ${now}
      where token_hash = ${hashSecret(token)} and ${standing(deps, now)}
      returning account_id
    )
    select s.account_id, a.name, a.email from s left join accounts a on a.id = s.account_id
  `;
  if (!row) {
    // An ended session is removed at once: one of a replaced admin token then stays ended even
    // should that token come back.
    await sql`delete from dashboard_sessions where token_hash = ${hashSecret(token)}`;
    return null;
  }
  return sessionOf(
    token,
    row.account_id === null
      ? ADMIN_TOKEN_PRINCIPAL
      : accountPrincipal({ id: row.account_id, name: row.name, email: row.email }),
  );
}

/**
 * Whether a session still stands (as resumeSession decides), without restarting its idle clock:
 * an open live page is not activity that keeps a session alive.
 */
export async function sessionStands(deps: SessionDeps, token: string): Promise<boolean> {
  const now = deps.clock.now();
  const [row] = await deps.sql`
    select 1 from dashboard_sessions
    where token_hash = ${hashSecret(token)} and ${standing(deps, now)}
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
