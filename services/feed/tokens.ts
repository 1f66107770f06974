import type { Db, Sql } from "../../db/connect.ts";
import { type AuditContext, recordAudit } from "../access/audit.ts";
import {
  insertedMadeByColumns,
  type MadeBy,
  madeBy,
  type MadeByRow,
  makerColumnsOf,
  makerDetail,
  withOwnerName,
} from "../access/makers.ts";
import type { Clock } from "../../infra/clock.ts";
import {
  credentialHint,
  listActiveCredentials,
  revokeCredential,
  revokeCredentialsOf,
} from "../access/credentials.ts";
import { lockCaptureOnCitus, startCapture, stopCaptureIfIdle } from "./capture.ts";
import { assertEnterprise, getEnvironmentOrThrow } from "../projects/projects.ts";
import { hashSecret, randomToken } from "../../infra/secrets.ts";

export const FEED_TOKEN_PREFIX = "est_";

/** What a list shows of a token: its prefix and last four characters. */
export const feedTokenHint = (value: string) => credentialHint(FEED_TOKEN_PREFIX, value);

export interface FeedTokenSummary extends MadeBy {
  id: number;
  name: string;
  hint: string;
  created_at: string;
  last_used_at: string | null;
}

export interface CreatedFeedToken extends MadeBy {
  id: number;
  name: string;
  value: string;
  created_at: string;
  last_used_at: null;
}

interface TokenRow extends MadeByRow {
  id: number;
  name: string;
  hint: string;
  created_at: Date;
  last_used_at: Date | null;
}

/** Creates a token for the environment and starts its capture; the value is shown only here. */
export function createFeedToken(
  sql: Sql,
  clock: Clock,
  projectId: string,
  name: string,
  audit: AuditContext,
): Promise<CreatedFeedToken> {
  return sql.begin(async (tx) => {
    const env = await getEnvironmentOrThrow(tx, projectId);
    assertEnterprise(env, "a feed token");
    const value = FEED_TOKEN_PREFIX + randomToken(32);
    const hint = feedTokenHint(value);
    const now = clock.now();
    // Capture's lock first, as a destination's creation takes it: on Citus the token's insert
    // holds a lock on the environments table (its foreign key), which the capture's update of
    // the environment then waited for behind a second creation holding the same, and queued
    // for capture's lock: a deadlock, answered 503, when two tokens were created at once.
    await startCapture(tx, env.id, now);
    const maker = makerColumnsOf(audit);
    const [inserted] = await tx<TokenRow[]>`
      insert into feed_tokens (environment_id, name, token_hash, hint, created_at,
        created_by_account_id, owner_type, made_by_type, made_by_id, made_by_name)
      values (${env.id}, ${name}, ${hashSecret(value)}, ${hint}, ${now},
        ${maker.created_by_account_id}, ${maker.owner_type}, ${maker.made_by_type},
        ${maker.made_by_id}, ${maker.made_by_name})
      returning id, name, created_at, ${insertedMadeByColumns(tx, "feed_tokens")}
    `;
    const row = await withOwnerName(tx, inserted!);
    await recordAudit(tx, audit, {
      action: "feed_token.create",
      project: { environmentId: env.id },
      target: { type: "feed_token", id: row!.id },
      detail: makerDetail(maker),
    });
    return {
      ...madeBy(row!),
      id: row!.id,
      name: row!.name,
      value,
      created_at: row!.created_at.toISOString(),
      last_used_at: null,
    };
  });
}

/** The environment's active tokens, oldest first, without their values. */
export async function listFeedTokens(
  sql: Sql,
  projectId: string,
): Promise<FeedTokenSummary[]> {
  const env = await getEnvironmentOrThrow(sql, projectId);
  const tokens = await listActiveCredentials(sql, "feed_tokens", env.id);
  return tokens.map(({ row: _, ...token }) => token);
}

/** Revokes a token at once; the last one of an idle environment takes its captured feed along. */
export function revokeFeedToken(
  sql: Sql,
  clock: Clock,
  projectId: string,
  tokenId: string,
  audit: AuditContext,
): Promise<void> {
  return sql.begin(async (tx) => {
    const env = await getEnvironmentOrThrow(tx, projectId);
    // On Citus, capture's lock (taken again by stopCaptureIfIdle) comes before the token's
    // write: Citus serialises the writes to a reference table such as feed_tokens by one lock on
    // the whole table, so a transaction that wrote a token and then waited for capture's lock
    // deadlocked with one that held capture's lock and then wrote (docs/SCALING.md).
    await lockCaptureOnCitus(tx, env.id, "exclusive");
    await revokeCredential(tx, "feed_tokens", env.id, tokenId, clock.now(), audit);
    await stopCaptureIfIdle(tx, env.id);
  });
}

/**
 * Revokes, in the caller's transaction, every active token that belongs to the account (made
 * by them or by a key of theirs), one audit entry each; capture stops where none is left.
 * Returns how many.
 */
export async function revokeFeedTokensOf(
  tx: Db,
  now: Date,
  accountId: number,
  audit: AuditContext,
): Promise<number> {
  const envs = await tx<{ environment_id: number }[]>`
    select distinct environment_id from feed_tokens
    where created_by_account_id = ${accountId} and revoked_at is null
    order by environment_id
  `;
  let count = 0;
  for (const { environment_id: envId } of envs) {
    // Capture's lock before the tokens' write, as revokeFeedToken takes them.
    await lockCaptureOnCitus(tx, envId, "exclusive");
    const revoked = await revokeCredentialsOf(
      tx,
      "feed_tokens",
      accountId,
      now,
      audit,
      tx`and environment_id = ${envId}`,
    );
    await stopCaptureIfIdle(tx, envId);
    count += revoked.length;
  }
  return count;
}
