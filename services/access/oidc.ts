// OpenID Connect sign-in to the dashboard: the authorization code flow with PKCE through
// openid-client. A person proves who they are at the provider; a verified email equal to an
// account's (ignoring case) signs in as that account, with the same dashboard session a password
// sign-in gets (services/access/sessions.ts). Anything else is refused and starts no session.
//
// The login under way lives in PostgreSQL (oidc_logins), so the instance that receives the
// provider's callback need not be the one that sent the browser there. Its row is known by the
// SHA-256 of a random value held only in the browser's cookie, and the login's state, nonce and
// PKCE verifier are derived from that value: the table holds nothing that would let anyone
// finish someone else's login. A row is used once and refused after LOGIN_TTL_MS by the clock.
// Only the provider's discovery document (and its keys, which openid-client fetches) is kept in
// process memory: one entry, refreshed after DISCOVERY_TTL_MS.
import { createHmac } from "node:crypto";
import * as oidc from "openid-client";
import type { OidcConfig } from "../../config.ts";
import type { Db, Sql } from "../../db/connect.ts";
import type { Clock } from "../../infra/clock.ts";
import type { Logger } from "../../infra/log.ts";
import { limitKey } from "./admin_token_limit.ts";
import { hashSecret, randomToken } from "../../infra/secrets.ts";
import { type Session, startAccountSession } from "./sessions.ts";
import { admitPasswordAttempt, forgetPasswordFailure } from "./password_limit.ts";

/** How long a person has at the provider before the login must start again. */
export const LOGIN_TTL_MS = 10 * 60_000;
const DISCOVERY_TTL_MS = 60 * 60_000;
/** Seconds openid-client waits for the provider (discovery, token, userinfo). */
const PROVIDER_TIMEOUT_S = 10;
const PRUNE_BATCH = 100;
/**
 * Logins under way one address may have (an IPv6 address counts by its /64), and all addresses
 * together: starting one is unauthenticated and writes a row, so these bound what anyone can make
 * the table hold (about 150 bytes a row). Generous enough for a company behind one NAT address.
 */
export const MAX_PENDING_PER_ADDRESS = 100;
export const MAX_PENDING = 100_000;
// The first key of pg_advisory_xact_lock(int, int); the second is a hash of the address.
const LOCK_NAMESPACE = 4_242_023;
const SCOPE = "openid email profile";

/**
 * Why a login was refused. `provider`: the provider could not be reached or answered nonsense;
 * `cancelled`: the provider reports the person did not sign in (or declined); `expired`: no login
 * under way for this browser (never started, used already, or older than LOGIN_TTL_MS);
 * `invalid`: the response failed a check (state, issuer, audience, nonce, signature, PKCE);
 * `unverified`: the provider does not vouch for the email; `unknown`: no account has it;
 * `rate_limited`: too many failed sign-ins from this address; `started`: too many logins under
 * way from this address, or in all (MAX_PENDING_PER_ADDRESS, MAX_PENDING).
 */
export type OidcRefusal =
  | "started"
  | "provider"
  | "cancelled"
  | "expired"
  | "invalid"
  | "unverified"
  | "unknown"
  | "rate_limited";

export class OidcRefused extends Error {
  override name = "OidcRefused";
  constructor(readonly reason: OidcRefusal, readonly retryAfter?: number, options?: ErrorOptions) {
    super(`OpenID Connect sign-in refused: ${reason}`, options);
  }
}

/** The provider of one configuration, its discovery cached in process. */
export interface OidcProvider {
  readonly config: OidcConfig;
  configuration(): Promise<oidc.Configuration>;
}

export function createOidcProvider(config: OidcConfig): OidcProvider {
  let cached: { at: number; value: Promise<oidc.Configuration> } | null = null;
  const insecure = new URL(config.issuer).protocol === "http:";
  return {
    config,
    configuration() {
      if (cached && performance.now() - cached.at < DISCOVERY_TTL_MS) return cached.value;
      const value = oidc.discovery(
        new URL(config.issuer),
        config.clientId,
        { client_secret: config.clientSecret },
        oidc.ClientSecretBasic(config.clientSecret),
        {
          timeout: PROVIDER_TIMEOUT_S,
          // config.ts allows http only on a loopback address (a test's provider).
          ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
        },
      );
      const entry = { at: performance.now(), value };
      cached = entry;
      // A failed discovery is not kept: the next sign-in tries again.
      value.catch(() => {
        if (cached === entry) cached = null;
      });
      return value;
    },
  };
}

/** The login's secrets, derived from the cookie's value (never stored). */
function loginSecrets(key: string) {
  const derive = (purpose: string) =>
    createHmac("sha256", key).update(`oidc-${purpose}`).digest("base64url");
  return { state: derive("state"), nonce: derive("nonce"), verifier: derive("pkce-verifier") };
}

/**
 * Starts a login: its row, and where to send the browser. `key` goes into the browser's
 * cookie and nowhere else.
 */
export async function startOidcLogin(
  sql: Sql,
  clock: Clock,
  provider: OidcProvider,
  address: string,
): Promise<{ key: string; authorizationUrl: URL }> {
  let configuration: oidc.Configuration;
  try {
    configuration = await provider.configuration();
  } catch (err) {
    throw new OidcRefused("provider", undefined, { cause: err });
  }
  const key = randomToken(32);
  const { state, nonce, verifier } = loginSecrets(key);
  const now = clock.now();
  const from = limitKey(address);
  const retryAfter = await sql.begin(async (tx) => {
    // Logins never finished go when another starts, a bounded batch at a time (no job needed).
    await tx`
      delete from oidc_logins where key_hash = any(array(
        select key_hash from oidc_logins where expires_at <= ${now} limit ${PRUNE_BATCH}
      ))
    `;
    // Counted and inserted under one lock per address shared by every instance, so parallel
    // starts cannot all slip under the cap. The total is read without it: it may overshoot by
    // the starts in flight at once, which is all a bound on the table needs.
    await tx`select pg_advisory_xact_lock(${LOCK_NAMESPACE}::int, hashtext(${from}))`;
    const [counts] = await tx<[{ mine: number; all: number; oldest: Date | null }]>`
      select
        (select count(*)::int from (
          select 1 from oidc_logins where address = ${from} and expires_at > ${now}
          limit ${MAX_PENDING_PER_ADDRESS}
        ) m) as mine,
        (select count(*)::int from (
          select 1 from oidc_logins where expires_at > ${now} limit ${MAX_PENDING}
        ) a) as all,
        (select min(expires_at) from oidc_logins where address = ${from} and expires_at > ${now})
          as oldest
    `;
    if (counts.mine >= MAX_PENDING_PER_ADDRESS || counts.all >= MAX_PENDING) {
      const until = counts.mine >= MAX_PENDING_PER_ADDRESS && counts.oldest
        ? counts.oldest.getTime()
        : now.getTime() + LOGIN_TTL_MS;
      return Math.max(1, Math.ceil((until - now.getTime()) / 1000));
    }
    await tx`
      insert into oidc_logins (key_hash, address, created_at, expires_at)
      values (${hashSecret(key)}, ${from}, ${now}, ${new Date(now.getTime() + LOGIN_TTL_MS)})
    `;
    return 0;
  });
  if (retryAfter > 0) throw new OidcRefused("started", retryAfter);
  const authorizationUrl = oidc.buildAuthorizationUrl(configuration, {
    redirect_uri: provider.config.redirectUrl,
    scope: SCOPE,
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  });
  return { key, authorizationUrl };
}

/** Takes the login under way for `key` (once): whether it was there and still fresh. */
async function takeLogin(db: Db, key: string | undefined, now: Date): Promise<boolean> {
  if (!key || !/^[A-Za-z0-9_-]{43}$/.test(key)) return false;
  const [row] = await db<{ expires_at: Date }[]>`
    delete from oidc_logins where key_hash = ${hashSecret(key)} returning expires_at
  `;
  return row !== undefined && row.expires_at > now;
}

interface AccountRow {
  id: number;
  name: string;
  email: string;
}

/**
 * Finishes a login from the provider's callback: `query` is the callback's query string, `key`
 * the cookie's value. Returns the new session, or throws OidcRefused (no session made). Every
 * attempt counts against the address's sign-in failures as a password does
 * (services/access/password_limit.ts), and is taken back when it signs in or the person merely
 * cancelled at the provider.
 */
export async function finishOidcLogin(
  sql: Sql,
  clock: Clock,
  provider: OidcProvider,
  logger: Logger,
  input: { key: string | undefined; query: string; address: string; requestId?: string },
): Promise<Session> {
  const now = clock.now();
  // Per address only: the provider proves who the person is, so an attacker filling an
  // account's count of wrong passwords does not keep its person from signing in here.
  const attempt = { address: input.address };
  const limited = await sql.begin((tx) => admitPasswordAttempt(tx, attempt, now));
  const retryAfter = limited?.seconds ?? 0;
  const refuse = (reason: OidcRefusal, fields: Record<string, unknown> = {}) => {
    logger.info("oidc sign-in refused", { request_id: input.requestId, reason, ...fields });
    return new OidcRefused(reason, reason === "rate_limited" ? retryAfter : undefined);
  };
  if (retryAfter > 0) throw refuse("rate_limited");
  if (!await takeLogin(sql, input.key, now)) throw refuse("expired");

  let configuration: oidc.Configuration;
  try {
    configuration = await provider.configuration();
  } catch (err) {
    throw refuse("provider", safeErrorFields(err));
  }
  const { state, nonce, verifier } = loginSecrets(input.key!);
  // The URL the provider redirected to, as registered (the request's own may differ behind a
  // proxy); openid-client takes the callback's parameters from it and sends it as redirect_uri.
  const callbackUrl = new URL(provider.config.redirectUrl);
  callbackUrl.search = input.query;
  let claims: Record<string, unknown>;
  try {
    const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    const idClaims = tokens.claims()!;
    claims = { ...idClaims };
    // Providers that keep the ID token short put the email in the userinfo answer instead.
    if (typeof claims.email !== "string") {
      const info = await oidc.fetchUserInfo(configuration, tokens.access_token, idClaims.sub);
      claims = { email: info.email, email_verified: info.email_verified };
    }
  } catch (err) {
    if (err instanceof oidc.AuthorizationResponseError) {
      await sql.begin((tx) => forgetPasswordFailure(tx, attempt, now));
      // The provider's error code (access_denied, login_required…): a word, or left out, since
      // anyone can write anything into a callback's query.
      const code = /^[a-z_]{1,40}$/.test(err.error) ? err.error : "other";
      throw refuse("cancelled", { provider_error: code });
    }
    if (isUnreachable(err)) throw refuse("provider", safeErrorFields(err));
    throw refuse("invalid", safeErrorFields(err));
  }

  const email = typeof claims.email === "string" ? claims.email.trim() : "";
  if (email === "" || claims.email_verified !== true) throw refuse("unverified");
  const [account] = email.length > 320 ? [] : await sql<AccountRow[]>`
    select id, name, email from accounts where lower(email) = lower(${email})
  `;
  if (!account) throw refuse("unknown");
  await sql.begin((tx) => forgetPasswordFailure(tx, attempt, now));
  logger.info("oidc sign-in", { request_id: input.requestId, account_id: account.id });
  return await startAccountSession(sql, clock, account);
}

function isUnreachable(err: unknown): boolean {
  return err instanceof TypeError || (err instanceof Error && err.name === "TimeoutError");
}

/** Names a refused check may give in the log (parameter and claim names, never values). */
const CHECK_NAMES = new Set([
  "state",
  "iss",
  "aud",
  "azp",
  "nonce",
  "exp",
  "iat",
  "nbf",
  "sub",
  "code",
  "auth_time",
  "email",
]);

/**
 * What a refused login may put in the log: the kind of error, openid-client's code and the name
 * of the check that failed, never a message or cause as such, which can quote the provider's
 * answer (codes, tokens).
 */
export function safeErrorFields(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { error: typeof err };
  const code = (err as { code?: unknown }).code;
  // openid-client's error wraps oauth4webapi's, which names the parameter or claim.
  const inner = err.cause instanceof Error ? err.cause : err;
  const claim = (inner.cause as { claim?: unknown } | undefined)?.claim;
  const quoted = /"([a-z_]+)"/.exec(inner.message)?.[1];
  const check = typeof claim === "string" ? claim : quoted;
  return {
    error: err.name,
    ...(typeof code === "string" ? { code } : {}),
    ...(check !== undefined && CHECK_NAMES.has(check) ? { check } : {}),
  };
}
