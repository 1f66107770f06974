// Who may read a feed: feed-token authentication, the project and Enterprise checks, last-used.
import postgres from "postgres";
import type { Db } from "../../db/connect.ts";
import { ApiError } from "../errors.ts";
import { rateLimitedError, windowStart } from "./rate_limit.ts";
import { FEED_TOKEN_PREFIX } from "./tokens.ts";
import { pagePlanColumns } from "./page_plan.ts";
import { assertEnterprise, parseEnvironmentId } from "../projects/projects.ts";
import { hashSecret, plausibleSecret } from "../../infra/secrets.ts";

/** An active feed token and what it reads. */
export interface FeedReader {
  tokenId: number;
  environmentId: number;
  enterprise: boolean;
}

/**
 * The digest a presented token is looked up by; 401 when none was presented, null when it
 * cannot be a feed token (no lookup needed to refuse it).
 */
function presentedTokenHash(token: string | null | undefined): string | null {
  if (!token) throw new ApiError("unauthorized", "Authorization: Bearer <feed token> is missing");
  return token.startsWith(FEED_TOKEN_PREFIX) && plausibleSecret(token) ? hashSecret(token) : null;
}

function invalidToken(): ApiError {
  return new ApiError("unauthorized", "feed token is invalid or revoked");
}

export interface FeedReadAdmission {
  token: string | null | undefined;
  /** The project_id of the path, as written. */
  projectId: string;
  now: Date;
  /**
   * Reads per token per window (services/feed/rate_limit.ts); null checks the token and its
   * environment only (the live tail's open streams, services/feed/live_tail.ts).
   */
  rateLimit: number | null;
  /** Record the read (its rate-limit hit and last-used minute) once admitted. */
  record: boolean;
  /**
   * Set the unfiltered page's plan settings (services/feed/page_plan.ts) in the same
   * statement, for the page read after it in the transaction: one statement fewer a page.
   */
  pinPagePlan?: boolean;
}

/**
 * A feed read's checks in one statement (feed_admit, migrations 00020 and 00021), the one
 * admission of every transport: 401, 403, 402, then the rate limit's 503, each thrown as
 * ApiError; once admitted, the read recorded if asked. The token is read fresh on every call
 * (no cache), so a revocation stops the very next read, and looked up by digest through a
 * unique index. With a rate limit, call inside a transaction: its lock is held until it ends,
 * and a rejection (here or later in it) rolls the record back. A rejection aborts the
 * transaction, so statements pipelined after this one (the page) are not run.
 */
export function admitFeedRead(db: Db, a: FeedReadAdmission): Promise<FeedReader> {
  let hash: string | null;
  try {
    hash = presentedTokenHash(a.token);
  } catch (err) {
    return Promise.reject(err);
  }
  if (hash === null) return Promise.reject(invalidToken());
  const minute = new Date(Math.floor(a.now.getTime() / 60_000) * 60_000);
  return db<FeedReader[]>`
    select token_id as "tokenId", environment_id as "environmentId", enterprise
      ${a.pinPagePlan ? pagePlanColumns(db) : db``}
    from feed_admit(${hash}, ${parseEnvironmentId(a.projectId)}::int, ${a.now},
      ${windowStart(a.now)}, ${minute}, ${a.rateLimit}::int, ${a.record})
  `.then(([row]) => row!, (err) => {
    throw admissionError(err, a);
  });
}

/** feed_admit's rejections as the contract's errors; any other error as it is. */
function admissionError(err: unknown, a: FeedReadAdmission): unknown {
  if (!(err instanceof postgres.PostgresError)) return err;
  switch (err.code) {
    case "LF401":
      return invalidToken();
    case "LF403": {
      const reader = JSON.parse(err.detail!) as Omit<FeedReader, "tokenId">;
      try {
        authorizeFeedRead({ tokenId: 0, ...reader }, a.projectId);
      } catch (refusal) {
        return refusal;
      }
      return err;
    }
    case "LF503":
      return rateLimitedError(a.rateLimit!, new Date(Number(err.detail)), a.now);
    default:
      return err;
  }
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
