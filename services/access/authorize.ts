// The one check every transport makes before an operation: may this principal do it here?
import type { Db } from "../../db/connect.ts";
import { ApiError } from "../errors.ts";
import { parseEnvironmentId } from "../projects.ts";
import { type Operation, type Permission, PERMISSIONS } from "./permissions.ts";
import type { Principal } from "./principal.ts";

/** Where the operation acts: an environment (numeric project_id) or a project (hashid). */
export interface AccessTarget {
  /** The `:project_id` of the path, as written (a key of another environment is refused). */
  environmentId?: string | number | undefined;
  /** The `:hashid` of the path. */
  projectHashid?: string | undefined;
}

/**
 * Resolves when `principal` may perform `operation` on `target`, else throws: 403 `forbidden`
 * (not theirs to do, or another environment's), 403 `insufficient_scope` (a key without the
 * scope; the message names it). Reads are fresh on every call (no cache), so a revoked key or a
 * removed member is refused on the next request, on every instance.
 */
// deno-lint-ignore require-await -- members (a database read) arrive with accounts
export async function authorize(
  _db: Db,
  principal: Principal,
  operation: Operation,
  target: AccessTarget,
): Promise<void> {
  const permission: Permission = PERMISSIONS[operation];
  switch (principal.type) {
    case "admin_token":
      return;
    case "api_key":
      return authorizeKey(principal, permission, target);
    case "account":
      // Members' roles arrive with accounts; until then an account may do nothing.
      throw new ApiError("forbidden", `this account may not ${permission.summary}`);
  }
}

function authorizeKey(
  key: Extract<Principal, { type: "api_key" }>,
  permission: Permission,
  target: AccessTarget,
): void {
  if (permission.scope === null) {
    throw new ApiError(
      "forbidden",
      `API keys cannot ${permission.summary}: it takes a person's account or the admin token`,
    );
  }
  const environmentId = typeof target.environmentId === "number"
    ? target.environmentId
    : parseEnvironmentId(target.environmentId ?? "");
  if (environmentId === null) {
    throw new ApiError(
      "forbidden",
      "API keys act only on their environment's routes under /api/v1/projects/:project_id/",
    );
  }
  if (environmentId !== key.environmentId) {
    throw new ApiError(
      "forbidden",
      "this API key belongs to another project or environment than the one in the URL",
    );
  }
  if (!key.scopes.includes(permission.scope)) {
    throw new ApiError(
      "insufficient_scope",
      `this API key lacks the scope "${permission.scope}" (needed to ${permission.summary})`,
    );
  }
}
