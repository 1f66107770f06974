// Who an `Authorization: Bearer …` header names on the admin API: the instance admin token, an
// API key (`sk_…`), or nobody (401).
import type { Db } from "../../db/connect.ts";
import type { Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import { secretMatches } from "../secrets.ts";
import { API_KEY_PREFIX, authenticateApiKey } from "./api_keys.ts";
import { ADMIN_TOKEN_PRINCIPAL, type Principal } from "./principal.ts";

export interface BearerDeps {
  sql: Db;
  clock: Clock;
  /** SHA-256 digest of the instance admin token. */
  adminTokenHash: string;
}

export async function authenticateBearer(
  deps: BearerDeps,
  token: string | null,
): Promise<Principal> {
  if (token && secretMatches(token, deps.adminTokenHash)) return ADMIN_TOKEN_PRINCIPAL;
  if (token?.startsWith(API_KEY_PREFIX)) {
    return await authenticateApiKey(deps.sql, deps.clock, token);
  }
  throw new ApiError("unauthorized", "admin token missing or wrong");
}
