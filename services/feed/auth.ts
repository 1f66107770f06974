// Who may read a feed: feed-token authentication, the project and Enterprise checks, last-used.
import type { Db } from "../../db/connect.ts";
import { ApiError } from "../errors.ts";
import { FEED_TOKEN_PREFIX } from "./tokens.ts";
import { assertEnterprise, parseEnvironmentId } from "../projects.ts";
import { hashSecret, plausibleSecret } from "../secrets.ts";

/** An active feed token and what it reads. */
export interface FeedReader {
  tokenId: number;
  environmentId: number;
  enterprise: boolean;
}

/**
 * The active token behind a presented value, or 401. Read fresh on every request (no cache),
 * so a revocation stops the very next read. The lookup goes by digest through a unique index,
 * so the comparison never touches the token itself.
 */
export async function authenticateFeedToken(
  db: Db,
  token: string | null | undefined,
): Promise<FeedReader> {
  if (!token) throw new ApiError("unauthorized", "Authorization: Bearer <feed token> is missing");
  const [row] = !token.startsWith(FEED_TOKEN_PREFIX) || !plausibleSecret(token)
    ? []
    : await db<FeedReader[]>`
    select t.id as "tokenId", t.environment_id as "environmentId", p.enterprise
    from feed_tokens t
      join environments e on e.id = t.environment_id
      join projects p on p.id = e.project_id
    where t.token_hash = ${hashSecret(token)} and t.revoked_at is null
  `;
  if (!row) throw new ApiError("unauthorized", "feed token is invalid or revoked");
  return row;
}

/** 403 unless the token reads the environment `projectId` names, then 402 without Enterprise. */
export function authorizeFeedRead(reader: FeedReader, projectId: string): void {
  if (parseEnvironmentId(projectId) !== reader.environmentId) {
    throw new ApiError(
      "forbidden",
      "this feed token does not belong to the project and environment in the URL",
    );
  }
  assertEnterprise(reader, "the event feed");
}

/**
 * Records a read at minute granularity: the row is written only when the minute has changed
 * since the last recorded use, not on every request.
 */
export async function touchFeedToken(db: Db, tokenId: number, now: Date): Promise<void> {
  const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
  await db`
    update feed_tokens set last_used_at = ${minute}
    where id = ${tokenId} and (last_used_at is null or last_used_at < ${minute})
  `;
}
