// The SDK headers (PROJECT-KEY, ENVIRONMENT), shared by the REST SDK API and GraphQL.
import { createHmac } from "node:crypto";
import type { Db } from "../../db/connect.ts";
import { limitKey } from "./admin_token_limit.ts";
import { ApiError } from "../errors.ts";
import type { Logger } from "../../infra/log.ts";
import {
  authenticateProjectKey,
  type Environment,
  type EnvironmentKind,
  wrongProjectKey,
} from "../projects/projects.ts";
import {
  DEFAULT_SDK_WRITES_PER_ADDRESS,
  DEFAULT_SDK_WRITES_PER_KEY,
  MIN_SDK_WRITES,
} from "../projects/sdk_limits.ts";
import { hashSecret, plausibleSecret } from "../../infra/secrets.ts";

/** ENVIRONMENT values of link generation, link lookup and event ingestion. */
export const LINK_ENVIRONMENTS: ReadonlyMap<string, EnvironmentKind> = new Map([
  ["production", "production"],
  ["development", "test"],
]);

/** ENVIRONMENT values of project metrics. */
export const METRICS_ENVIRONMENTS: ReadonlyMap<string, EnvironmentKind> = new Map([
  ["production", "production"],
  ["test", "test"],
]);

/**
 * Resolves the SDK headers to an environment. Order: 401 `unauthorized` first (key missing or
 * matching no project, whatever ENVIRONMENT says), then 400 `invalid_environment` (missing, or
 * not one of `allowed`). A wrong key therefore learns nothing about ENVIRONMENT, and a right
 * key with a wrong ENVIRONMENT costs the same single query.
 */
export interface SdkHeaders {
  projectKey: string | null | undefined;
  environment: string | null | undefined;
}

export async function authenticateSdk(
  db: Db,
  headers: SdkHeaders,
  allowed: ReadonlyMap<string, EnvironmentKind>,
): Promise<Environment> {
  const kind = headers.environment == null ? undefined : allowed.get(headers.environment);
  const environment = await authenticateProjectKey(db, headers.projectKey, kind ?? "production");
  if (kind === undefined) {
    const values = [...allowed.keys()].map((v) => `"${v}"`).join(" or ");
    throw new ApiError("invalid_environment", `ENVIRONMENT must be ${values}`);
  }
  return environment;
}

export interface SdkWrite {
  /** The client's address (inputs/headers.ts clientAddress). */
  address: string;
  /** The instance's shared secret (AppDeps.cursorSecret) the address is counted under. */
  secret: string;
  /** What the write counts for: 1 a link, the number of events of a batch. */
  weight: number;
  now: Date;
  /** Refusals are logged here, counted (the 1st, 10th, 100th, … of a scope's minute). */
  logger: Logger;
}

/**
 * The address as it is counted: a digest keyed with the instance's secret (an IPv6 address as
 * its /64), never the address itself. The service keeps no client address anywhere, and an
 * unkeyed digest of an IPv4 address could be reversed by trying all of them.
 */
function addressDigest(write: SdkWrite): string {
  return createHmac("sha256", write.secret).update(limitKey(write.address)).digest("base64url")
    .slice(0, 22);
}

interface Admission extends Environment {
  refused_scope: "key" | "address" | null;
  refused_limit: number | null;
  retry_after: number | null;
  refused_count: number | null;
}

/**
 * The environment behind the SDK headers, as authenticateSdk resolves it (401, then 400 for a
 * bad ENVIRONMENT), with the write counted against the project's limits in the same statement;
 * 503 rate_limited over either limit, the write not counted.
 */
export async function admitSdkWrite(
  db: Db,
  headers: SdkHeaders,
  allowed: ReadonlyMap<string, EnvironmentKind>,
  write: SdkWrite,
): Promise<Environment> {
  const kind = headers.environment == null ? undefined : allowed.get(headers.environment);
  // Every refusal before the count is authenticateSdk's own (a missing or wrong key, then a
  // bad ENVIRONMENT): a request refused so writes nothing and counts for nothing.
  if (kind === undefined || !headers.projectKey || !plausibleSecret(headers.projectKey)) {
    return await authenticateSdk(db, headers, allowed);
  }
  // A batch holds at most MIN_SDK_WRITES events, the least a limit may be: every write can fit.
  const weight = Math.min(Math.max(1, Math.trunc(write.weight)), MIN_SDK_WRITES);
  const [row] = await db<Admission[]>`
    select id, kind, project_id as "projectId", hashid, enterprise, refused_scope, refused_limit,
      retry_after, refused_count
    from sdk_admit(${hashSecret(headers.projectKey)}, ${kind}, ${addressDigest(write)},
      ${write.now}, ${weight}::int, ${DEFAULT_SDK_WRITES_PER_KEY}::int,
      ${DEFAULT_SDK_WRITES_PER_ADDRESS}::int)
  `;
  if (!row) throw wrongProjectKey();
  const { refused_scope: scope, refused_limit: limit, retry_after, refused_count, ...env } = row;
  if (scope === null) return env;
  if (refused_count !== null && /^10*$/.test(String(refused_count))) {
    write.logger.warn("sdk writes refused over the limit", {
      project: env.hashid,
      scope,
      limit,
      refused_this_minute: refused_count,
    });
  }
  throw new ApiError(
    "rate_limited",
    `more than ${limit} SDK writes (links and events) in the last 60 seconds ${
      scope === "key" ? "for this project key" : "from this address"
    }; retry later`,
    { retryAfter: retry_after ?? 1 },
  );
}
