// What API keys (`sk_…`) and feed tokens (`est_…`) share as credentials of one environment:
// listed without their values (a hint), revoked in place (`revoked_at`, so the audit log and the
// makers keep naming them), one audit entry per revocation. What differs stays with each: a key's
// scopes and expiry (api_keys.ts), a token's capture (services/feed/tokens.ts).
import type { Db } from "../../db/connect.ts";
import { notFound } from "../errors.ts";
import { type AuditContext, recordAudit } from "./audit.ts";
import { type MadeBy, madeBy, madeByColumns, type MadeByRow } from "./makers.ts";

/** The two credential tables and how the audit log and errors name a row of each. */
const KINDS = {
  api_keys: { target: "api_key", label: "API key" },
  feed_tokens: { target: "feed_token", label: "feed token" },
} as const;
export type CredentialTable = keyof typeof KINDS;

/** What a list shows of a value: its prefix and last four characters. */
export const credentialHint = (prefix: string, value: string) => `${prefix}…${value.slice(-4)}`;

/** What every credential's list entry holds; `extra` adds a table's own columns. */
export interface CredentialSummary extends MadeBy {
  id: number;
  name: string;
  hint: string;
  created_at: string;
  last_used_at: string | null;
}

/**
 * The environment's credentials that are not revoked, oldest first, with `extra` columns of the
 * table's own (aliased `c`) in each row's `extra`.
 */
export async function listActiveCredentials<Extra extends Record<string, unknown>>(
  db: Db,
  table: CredentialTable,
  environmentId: number,
  extra: ReturnType<Db> | null = null,
): Promise<(CredentialSummary & { row: Extra })[]> {
  const rows = await db<
    (
      & { id: number; name: string; hint: string; created_at: Date; last_used_at: Date | null }
      & MadeByRow
      & Extra
    )[]
  >`
    select c.id, c.name, c.hint, c.created_at, c.last_used_at, ${madeByColumns(db, "c")}
      ${extra ?? db``}
    from ${db(table)} c
    where c.environment_id = ${environmentId} and c.revoked_at is null
    order by c.id
  `;
  return rows.map((r) => ({
    ...madeBy(r),
    id: r.id,
    name: r.name,
    hint: r.hint,
    created_at: r.created_at.toISOString(),
    last_used_at: r.last_used_at?.toISOString() ?? null,
    row: r,
  }));
}

/**
 * Revokes one credential of the environment in the caller's transaction, with its audit entry:
 * 404 when `rawId` names none that is active there (a malformed id included).
 */
export async function revokeCredential(
  tx: Db,
  table: CredentialTable,
  environmentId: number,
  rawId: string,
  now: Date,
  audit: AuditContext,
): Promise<void> {
  const { target, label } = KINDS[table];
  const id = /^[1-9][0-9]{0,8}$/.test(rawId) ? Number(rawId) : null;
  const [row] = id === null ? [] : await tx`
    update ${tx(table)} set revoked_at = ${now}
    where id = ${id} and environment_id = ${environmentId} and revoked_at is null
    returning id
  `;
  if (!row) throw notFound(label);
  await recordAudit(tx, audit, {
    action: `${target}.revoke`,
    project: { environmentId },
    target: { type: target, id: id! },
  });
}

/**
 * Revokes, in the caller's transaction, the active credentials of `table` that belong to the
 * account (made by them or by a key of theirs), `where` narrowing them further, one audit entry
 * each in id order. Returns the revoked rows.
 */
export async function revokeCredentialsOf(
  tx: Db,
  table: CredentialTable,
  accountId: number,
  now: Date,
  audit: AuditContext,
  where: ReturnType<Db> | null = null,
): Promise<{ id: number; environment_id: number }[]> {
  const { target } = KINDS[table];
  const rows = await tx<{ id: number; environment_id: number }[]>`
    update ${tx(table)} set revoked_at = ${now}
    where created_by_account_id = ${accountId} and revoked_at is null ${where ?? tx``}
    returning id, environment_id
  `;
  rows.sort((a, b) => a.id - b.id);
  for (const row of rows) {
    await recordAudit(tx, audit, {
      action: `${target}.revoke`,
      project: { environmentId: row.environment_id },
      target: { type: target, id: row.id },
    });
  }
  return rows;
}
