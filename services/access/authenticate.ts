// Who an `Authorization: Bearer …` header names on the admin API: the instance admin token (and
// later API keys), or nobody (401).
import type { Db } from "../../db/connect.ts";
import type { Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import { secretMatches } from "../secrets.ts";
import { ADMIN_TOKEN_PRINCIPAL, type Principal } from "./principal.ts";

export interface BearerDeps {
  sql: Db;
  clock: Clock;
  /** SHA-256 digest of the instance admin token. */
  adminTokenHash: string;
}

// deno-lint-ignore require-await
export async function authenticateBearer(
  deps: BearerDeps,
  token: string | null,
): Promise<Principal> {
  if (token && secretMatches(token, deps.adminTokenHash)) return ADMIN_TOKEN_PRINCIPAL;
  throw new ApiError("unauthorized", "admin token missing or wrong");
}
