// API keys (`sk_…`): programs' credentials for one environment's admin routes, with scopes and
// an optional expiry. Only the SHA-256 of a value is stored; the value is shown once, at creation.
import type { Db, Sql } from "../../db/connect.ts";
import type { Clock } from "../clock.ts";
import { ApiError, notFound } from "../errors.ts";
import { getEnvironmentOrThrow } from "../projects.ts";
import { hashSecret, plausibleSecret, randomToken } from "../secrets.ts";
import { type AuditContext, recordAudit } from "./audit.ts";
import { type Scope, SCOPES } from "./permissions.ts";
import type { Principal } from "./principal.ts";

export const API_KEY_PREFIX = "sk_";

export interface ApiKeySummary {
  id: number;
  name: string;
  scopes: Scope[];
  hint: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

export interface CreatedApiKey {
  id: number;
  name: string;
  scopes: Scope[];
  value: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: null;
}

interface KeyRow {
  id: number;
  name: string;
  scopes: Scope[];
  hint: string;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

/**
 * The scopes `creator` may give a key: the admin token any; a key no more than its own. (A
 * member's role bounds them too, through scopesAllowedTo, once accounts exist.)
 */
function assertScopesWithin(creator: Principal, scopes: readonly Scope[]): void {
  if (creator.type !== "api_key") return;
  const beyond = scopes.find((s) => !creator.scopes.includes(s));
  if (beyond !== undefined) {
    throw new ApiError(
      "insufficient_scope",
      `a key cannot give the scope "${beyond}" that it lacks itself`,
    );
  }
}

/** Creates a key for the environment; its value is returned here and never again. */
export async function createApiKey(
  sql: Sql,
  clock: Clock,
  creator: Principal,
  projectId: string,
  input: { name: string; scopes: readonly Scope[]; expires_at: string | null },
  audit: AuditContext,
): Promise<CreatedApiKey> {
  const env = await getEnvironmentOrThrow(sql, projectId);
  const now = clock.now();
  const expiresAt = input.expires_at === null ? null : new Date(input.expires_at);
  if (expiresAt !== null && (expiresAt <= now || expiresAt.getUTCFullYear() > 9999)) {
    throw new ApiError("invalid_field", "expires_at: must be in the future (and before 10000)", {
      field: "expires_at",
    });
  }
  assertScopesWithin(creator, input.scopes);
  // Stored in the table's order, whatever order they were given in.
  const scopes = SCOPES.filter((s) => input.scopes.includes(s));
  const value = API_KEY_PREFIX + randomToken(32);
  const row = await sql.begin(async (tx) => {
    const [row] = await tx<KeyRow[]>`
      insert into api_keys (environment_id, name, scopes, key_hash, hint, created_at, expires_at)
      values (${env.id}, ${input.name}, ${scopes}::text[], ${hashSecret(value)},
        ${`${API_KEY_PREFIX}…${value.slice(-4)}`}, ${now}, ${expiresAt})
      returning id, name, scopes, created_at, expires_at
    `;
    await recordAudit(tx, audit, {
      action: "api_key.create",
      project: { environmentId: env.id },
      target: { type: "api_key", id: row!.id },
    });
    return row;
  });
  return {
    id: row!.id,
    name: row!.name,
    scopes: row!.scopes,
    value,
    created_at: row!.created_at.toISOString(),
    expires_at: iso(row!.expires_at),
    last_used_at: null,
  };
}

/** The environment's keys that are not revoked (expired ones included), oldest first. */
export async function listApiKeys(db: Db, projectId: string): Promise<ApiKeySummary[]> {
  const env = await getEnvironmentOrThrow(db, projectId);
  const rows = await db<KeyRow[]>`
    select id, name, scopes, hint, created_at, expires_at, last_used_at from api_keys
    where environment_id = ${env.id} and revoked_at is null
    order by id
  `;
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    scopes: r.scopes,
    hint: r.hint,
    created_at: r.created_at.toISOString(),
    expires_at: iso(r.expires_at),
    last_used_at: iso(r.last_used_at),
  }));
}

/** Revokes a key: the next request with it is a 401, on every instance (nothing caches keys). */
export async function revokeApiKey(
  sql: Sql,
  clock: Clock,
  projectId: string,
  keyId: string,
  audit: AuditContext,
): Promise<void> {
  const env = await getEnvironmentOrThrow(sql, projectId);
  const id = /^[1-9][0-9]{0,8}$/.test(keyId) ? Number(keyId) : null;
  await sql.begin(async (tx) => {
    const [row] = id === null ? [] : await tx`
      update api_keys set revoked_at = ${clock.now()}
      where id = ${id} and environment_id = ${env.id} and revoked_at is null
      returning id
    `;
    if (!row) throw notFound("API key");
    await recordAudit(tx, audit, {
      action: "api_key.revoke",
      project: { environmentId: env.id },
      target: { type: "api_key", id: id! },
    });
  });
}

/**
 * The key behind a presented `sk_` value, or 401 when it is unknown, revoked or expired (as the
 * clock tells). Read fresh on every request, by digest through the unique index; the last use
 * is recorded in the same statement, at minute granularity (written only when the minute moved).
 */
export async function authenticateApiKey(
  db: Db | Sql,
  clock: Clock,
  value: string,
): Promise<Extract<Principal, { type: "api_key" }>> {
  const now = clock.now();
  const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
  const [row] = !value.startsWith(API_KEY_PREFIX) || !plausibleSecret(value)
    ? []
    : await db<{ id: number; name: string; environment_id: number; scopes: Scope[] }[]>`
    with key as (
      select id, name, environment_id, scopes from api_keys
      where key_hash = ${hashSecret(value)} and revoked_at is null
        and (expires_at is null or expires_at > ${now})
    ), touched as (
      update api_keys set last_used_at = ${minute}
      where id = (select id from key) and (last_used_at is null or last_used_at < ${minute})
    )
    select id, name, environment_id, scopes from key
  `;
  if (!row) throw new ApiError("unauthorized", "API key unknown, revoked or expired");
  return {
    type: "api_key",
    id: row.id,
    name: row.name,
    environmentId: row.environment_id,
    scopes: row.scopes,
  };
}
