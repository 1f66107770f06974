// "Revoke everything this person made", for the instance admin when someone leaves: the API
// keys, feed tokens and destinations that belong to an account (made by them, or by a key of
// theirs, or a key made by such a key), in one transaction, each with its audit entry and one
// entry for the whole.
import type { Sql } from "../../db/connect.ts";
import type { Clock } from "../../infra/clock.ts";
import { pauseDestinationsOf } from "../destinations/destinations.ts";
import { notFound } from "../errors.ts";
import { revokeFeedTokensOf } from "../feed/tokens.ts";
import { parseAccountId } from "./accounts.ts";
import { type AuditContext, recordAudit } from "./audit.ts";
import { revokeCredentialsOf } from "./credentials.ts";

/** What revokeEverythingMadeBy did. */
export interface RevokedMade {
  api_keys: number;
  feed_tokens: number;
  /** Destinations paused (not deleted: each keeps its place in the feed, and can be resumed). */
  destinations_paused: number;
}

/**
 * Revokes the account's API keys and feed tokens and pauses its destinations. Works for an
 * account already removed too (what it made keeps its id); 404 when no account has this id
 * and nothing names it.
 */
export function revokeEverythingMadeBy(
  sql: Sql,
  clock: Clock,
  accountId: string,
  audit: AuditContext,
): Promise<RevokedMade> {
  const id = parseAccountId(accountId);
  return sql.begin(async (tx) => {
    const [known] = id === null ? [] : await tx`
      select 1 from accounts where id = ${id}
      union all select 1 from feed_tokens where created_by_account_id = ${id}
      union all select 1 from destinations where created_by_account_id = ${id}
      limit 1
    `;
    if (!known) throw notFound("account");
    const now = clock.now();
    const keys = await revokeCredentialsOf(tx, "api_keys", id!, now, audit);
    const result: RevokedMade = {
      api_keys: keys.length,
      feed_tokens: await revokeFeedTokensOf(tx, now, id!, audit),
      destinations_paused: await pauseDestinationsOf(tx, id!, audit),
    };
    await recordAudit(tx, audit, {
      action: "account.revoke_made",
      project: null,
      target: { type: "account", id: id! },
      detail: { ...result },
    });
    return result;
  });
}
