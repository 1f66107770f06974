// API keys (`sk_…`): programs' credentials for one environment's admin routes, with scopes and
// an optional expiry. Only the SHA-256 of a value is stored; the value is shown once, at creation.
import type { Db, Sql } from "../../db/connect.ts";
import type { Clock } from "../../infra/clock.ts";
import { ApiError } from "../errors.ts";
import { getEnvironmentOrThrow } from "../projects/projects.ts";
import { hashSecret, plausibleSecret, randomToken } from "../../infra/secrets.ts";
import { type AuditContext, recordAudit } from "./audit.ts";
import { memberRole } from "./authorize.ts";
import { type Role, type Scope, SCOPES, scopesAllowedTo } from "./permissions.ts";
import { credentialHint, listActiveCredentials, revokeCredential } from "./credentials.ts";
import {
  insertedMadeByColumns,
  madeBy,
  type MadeByRow,
  makerColumns,
  makerDetail,
  withOwnerName,
} from "./makers.ts";
import type { MadeBy } from "./makers.ts";
import { actorOf, ownerOf, type Principal } from "./principal.ts";

export const API_KEY_PREFIX = "sk_";

/** What a list shows of a key: its prefix and last four characters. */
export const apiKeyHint = (value: string) => credentialHint(API_KEY_PREFIX, value);

export interface ApiKeySummary extends MadeBy {
  id: number;
  name: string;
  scopes: Scope[];
  hint: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

export interface CreatedApiKey extends MadeBy {
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

interface KeyLookupRow {
  id: number;
  name: string;
  environment_id: number;
  scopes: Scope[];
  created_by_account_id: number | null;
  owner_type: "account" | "admin_token" | null;
  usable: boolean;
  creator_role: Role | null;
}

/**
 * The scopes `creator` may give a key: the admin token any; a key no more than its own; a person
 * no more than their role on the project allows.
 */
async function assertScopesWithin(
  db: Db,
  creator: Principal,
  environmentId: number,
  scopes: readonly Scope[],
): Promise<void> {
  if (creator.type === "admin_token") return;
  const allowed = creator.type === "api_key"
    ? creator.scopes
    : scopesAllowedTo(await memberRole(db, creator.id, { environmentId }) ?? "viewer");
  const beyond = scopes.find((s) => !allowed.includes(s));
  if (beyond !== undefined) {
    throw new ApiError(
      "insufficient_scope",
      `the scope "${beyond}" is beyond what ${
        creator.type === "api_key" ? "this key has itself" : "your role allows"
      }`,
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
  await assertScopesWithin(sql, creator, env.id, input.scopes);
  // Stored in the table's order, whatever order they were given in.
  const scopes = SCOPES.filter((s) => input.scopes.includes(s));
  const value = API_KEY_PREFIX + randomToken(32);
  // The key is its creator's person's: a key made by a key belongs to whom that key belongs to.
  const maker = makerColumns(actorOf(creator), ownerOf(creator));
  const row = await sql.begin(async (tx) => {
    const [inserted] = await tx<(KeyRow & MadeByRow)[]>`
      insert into api_keys (environment_id, name, scopes, key_hash, hint, created_at, expires_at,
        created_by_account_id, owner_type, made_by_type, made_by_id, made_by_name)
      values (${env.id}, ${input.name}, ${scopes}::text[], ${hashSecret(value)},
        ${apiKeyHint(value)}, ${now}, ${expiresAt}, ${maker.created_by_account_id},
        ${maker.owner_type}, ${maker.made_by_type}, ${maker.made_by_id}, ${maker.made_by_name})
      returning id, name, created_at, expires_at, ${insertedMadeByColumns(tx, "api_keys")}
    `;
    const row = await withOwnerName(tx, inserted!);
    await recordAudit(tx, audit, {
      action: "api_key.create",
      project: { environmentId: env.id },
      target: { type: "api_key", id: row!.id },
      detail: makerDetail(maker),
    });
    return row;
  });
  return {
    ...madeBy(row!),
    id: row!.id,
    name: row!.name,
    scopes,
    value,
    created_at: row!.created_at.toISOString(),
    expires_at: iso(row!.expires_at),
    last_used_at: null,
  };
}

/** The environment's keys that are not revoked (expired ones included), oldest first. */
export async function listApiKeys(db: Db, projectId: string): Promise<ApiKeySummary[]> {
  const env = await getEnvironmentOrThrow(db, projectId);
  const keys = await listActiveCredentials<Pick<KeyRow, "scopes" | "expires_at">>(
    db,
    "api_keys",
    env.id,
    db`, c.scopes, c.expires_at`,
  );
  return keys.map(({ row, ...key }) => ({
    ...key,
    scopes: row.scopes,
    expires_at: iso(row.expires_at),
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
  await sql.begin((tx) => revokeCredential(tx, "api_keys", env.id, keyId, clock.now(), audit));
}

/**
 * The key behind a presented `sk_` value; null when no key was ever issued with that value (the
 * caller decides what else it may be); 401 when it is a key of ours that is revoked or expired
 * (as the clock tells), or whose owner (the person behind its chain of makers) has left the
 * project or is gone, or whose owner is unknown. Read fresh on every request, by digest through
 * the unique index, with its owner's role (a key never does more than that role allows, even
 * after a demotion, whichever key of theirs made it); the last use is recorded in the same
 * statement, at minute granularity (written only when the minute moved).
 */
export async function authenticateApiKey(
  db: Db | Sql,
  clock: Clock,
  value: string,
): Promise<Extract<Principal, { type: "api_key" }> | null> {
  if (!value.startsWith(API_KEY_PREFIX) || !plausibleSecret(value)) return null;
  const now = clock.now();
  const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
  const [row] = await db<KeyLookupRow[]>`
    with key as (
      select k.id, k.name, k.environment_id, k.scopes, k.created_by_account_id, k.owner_type,
        k.revoked_at is null and (k.expires_at is null or k.expires_at > ${now}) as usable,
        (select m.role from project_members m join environments e on e.project_id = m.project_id
          where e.id = k.environment_id and m.account_id = k.created_by_account_id) as creator_role
      from api_keys k
      where k.key_hash = ${hashSecret(value)}
    ), touched as (
      update api_keys set last_used_at = ${minute}
      where id = (select id from key where usable)
        and (last_used_at is null or last_used_at < ${minute})
    )
    select * from key
  `;
  if (!row) return null;
  // An account's key stops with the account's membership; a key of no known owner never works.
  const owned = row.owner_type === "admin_token" ||
    (row.owner_type === "account" && row.created_by_account_id !== null &&
      row.creator_role !== null);
  if (!row.usable || !owned) {
    throw new ApiError("unauthorized", "API key revoked or expired");
  }
  const allowed = row.creator_role === null ? null : scopesAllowedTo(row.creator_role);
  return {
    type: "api_key",
    id: row.id,
    name: row.name,
    environmentId: row.environment_id,
    scopes: allowed === null ? row.scopes : row.scopes.filter((s) => allowed.includes(s)),
    owner: row.owner_type === "account"
      ? { type: "account", id: row.created_by_account_id! }
      : { type: "admin_token" },
  };
}
