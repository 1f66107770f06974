// The SDK headers (PROJECT-KEY, ENVIRONMENT), shared by the REST SDK API and GraphQL.
import type { Db } from "../../db/connect.ts";
import { ApiError } from "../errors.ts";
import {
  authenticateProjectKey,
  type Environment,
  type EnvironmentKind,
} from "../projects/projects.ts";

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
