// The one check every transport makes before an operation: may this principal do it here?
import type { Db } from "../../db/connect.ts";
import { ApiError } from "../errors.ts";
import { parseEnvironmentId } from "../projects/projects.ts";
import type { Role } from "./permissions.ts";
import { type Operation, type Permission, PERMISSIONS, roleAtLeast } from "./permissions.ts";
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
export async function authorize(
  db: Db,
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
    case "account": {
      if (permission.role === "instance") {
        throw new ApiError("forbidden", `only the instance admin may ${permission.summary}`);
      }
      const role = await memberRole(db, principal.id, target);
      if (role === null) throw new ApiError("forbidden", "you are not a member of this project");
      if (!roleAtLeast(role, permission.role)) {
        throw new ApiError(
          "forbidden",
          `to ${permission.summary} takes the ${permission.role} role on this project; yours is ${role}`,
        );
      }
      return;
    }
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

/**
 * A project change touches several rows of the table: renaming needs the owner role, Enterprise
 * the instance admin, the link domain and apps the admin role. Each field that would change is
 * checked; a form that sends the current name or Enterprise value again needs nothing for it.
 */
export async function authorizeProjectUpdate(
  db: Db,
  principal: Principal,
  hashid: string,
  changes: {
    name?: string | undefined;
    enterprise?: boolean | undefined;
    link_domain?: unknown;
    apps?: unknown;
  },
): Promise<void> {
  if (principal.type === "admin_token") return;
  const [current] = /^[A-Za-z0-9]{1,64}$/.test(hashid)
    ? await db<{ name: string; enterprise: boolean }[]>`
      select name, enterprise from projects where hashid = ${hashid}
    `
    : [];
  const target = { projectHashid: hashid };
  if (changes.name !== undefined && changes.name !== current?.name) {
    await authorize(db, principal, "project.rename", target);
  }
  if (changes.enterprise !== undefined && changes.enterprise !== current?.enterprise) {
    await authorize(db, principal, "projects.manage", target);
  }
  if (changes.link_domain !== undefined || changes.apps !== undefined) {
    await authorize(db, principal, "project.settings", target);
  }
}

/** The account's role on the project `target` names (environment or hashid), or null. */
export async function memberRole(
  db: Db,
  accountId: number,
  target: AccessTarget,
): Promise<Role | null> {
  if (target.environmentId !== undefined) {
    const env = typeof target.environmentId === "number"
      ? target.environmentId
      : parseEnvironmentId(target.environmentId);
    if (env === null) return null;
    const [row] = await db<{ role: Role }[]>`
      select m.role from project_members m join environments e on e.project_id = m.project_id
      where e.id = ${env} and m.account_id = ${accountId}
    `;
    return row?.role ?? null;
  }
  if (target.projectHashid !== undefined && /^[A-Za-z0-9]{1,64}$/.test(target.projectHashid)) {
    const [row] = await db<{ role: Role }[]>`
      select m.role from project_members m join projects p on p.id = m.project_id
      where p.hashid = ${target.projectHashid} and m.account_id = ${accountId}
    `;
    return row?.role ?? null;
  }
  return null;
}
