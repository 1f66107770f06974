// Project members: an account's role on a project (both environments). A project that has
// members always has an owner among them.
import type { Db, Sql } from "../../db/connect.ts";
import type { Clock } from "../../infra/clock.ts";
import { ApiError, notFound } from "../errors.ts";
import { parseAccountId } from "./accounts.ts";
import { type AuditContext, recordAudit } from "./audit.ts";
import { authorize } from "./authorize.ts";
import type { Role } from "./permissions.ts";
import type { Principal } from "./principal.ts";

export interface Member {
  account_id: number;
  email: string;
  name: string;
  role: Role;
}

async function lockProject(db: Db, hashid: string): Promise<number> {
  const [project] = /^[A-Za-z0-9]{1,64}$/.test(hashid)
    ? await db<{ id: number }[]>`select id from projects where hashid = ${hashid} for update`
    : [];
  if (!project) throw notFound("project");
  return project.id;
}

export async function listMembers(db: Db, hashid: string): Promise<Member[]> {
  const [project] = /^[A-Za-z0-9]{1,64}$/.test(hashid)
    ? await db<{ id: number }[]>`select id from projects where hashid = ${hashid}`
    : [];
  if (!project) throw notFound("project");
  return await db<Member[]>`
    select a.id as account_id, a.email, a.name, m.role
    from project_members m join accounts a on a.id = m.account_id
    where m.project_id = ${project.id}
    order by a.id
  `;
}

/**
 * 409 when the project has members but no owner among them, or (`ownerLeft`: an owner was just
 * removed) no owner at all: removing the last owner is refused even when no other member stays.
 */
async function assertOwnerKept(db: Db, projectId: number, ownerLeft = false): Promise<void> {
  const [row] = await db<{ members: number; owners: number }[]>`
    select count(*)::int as members, count(*) filter (where role = 'owner')::int as owners
    from project_members where project_id = ${projectId}
  `;
  if ((row!.members > 0 || ownerLeft) && row!.owners === 0) {
    throw new ApiError(
      "conflict",
      "a project keeps at least one owner: make another member owner first",
    );
  }
}

/**
 * Adds the account to the project with `role`, or changes its role. Making or unmaking an owner
 * needs the owner role (the permission table's members.owners), checked here where the current
 * role is known.
 */
export function setMemberRole(
  sql: Sql,
  hashid: string,
  accountId: string,
  role: Role,
  principal: Principal,
  audit: AuditContext,
): Promise<Member> {
  return sql.begin(async (tx) => {
    const projectId = await lockProject(tx, hashid);
    const id = parseAccountId(accountId);
    const [account] = id === null ? [] : await tx`select id from accounts where id = ${id}`;
    if (!account) throw notFound("account");
    const [current] = await tx<{ role: Role }[]>`
      select role from project_members where project_id = ${projectId} and account_id = ${id}
    `;
    if (role === "owner" || current?.role === "owner") {
      await authorize(tx, principal, "members.owners", { projectHashid: hashid });
    }
    await tx`
      insert into project_members (project_id, account_id, role)
      values (${projectId}, ${id}, ${role})
      on conflict (project_id, account_id) do update set role = excluded.role
    `;
    await assertOwnerKept(tx, projectId);
    await recordAudit(tx, audit, {
      action: "member.update",
      project: { hashid },
      target: { type: "account", id: id! },
    });
    const [member] = await tx<Member[]>`
      select a.id as account_id, a.email, a.name, m.role
      from project_members m join accounts a on a.id = m.account_id
      where m.project_id = ${projectId} and m.account_id = ${id}
    `;
    return member!;
  });
}

/**
 * Removes the account from the project; the API keys it created for the project are revoked in
 * the same transaction, and its sessions lose the project on their next request (authorize reads
 * the membership fresh on every request).
 */
export function removeMember(
  sql: Sql,
  clock: Clock,
  hashid: string,
  accountId: string,
  principal: Principal,
  audit: AuditContext,
): Promise<void> {
  return sql.begin(async (tx) => {
    const projectId = await lockProject(tx, hashid);
    const id = parseAccountId(accountId);
    const [current] = id === null ? [] : await tx<{ role: Role }[]>`
      select role from project_members where project_id = ${projectId} and account_id = ${id}
    `;
    if (!current) throw notFound("member");
    if (current.role === "owner") {
      await authorize(tx, principal, "members.owners", { projectHashid: hashid });
    }
    await tx`delete from project_members where project_id = ${projectId} and account_id = ${id}`;
    await assertOwnerKept(tx, projectId, current.role === "owner");
    await tx`
      update api_keys set revoked_at = ${clock.now()}
      where created_by_account_id = ${id} and revoked_at is null
        and environment_id in (select id from environments where project_id = ${projectId})
    `;
    await recordAudit(tx, audit, {
      action: "member.remove",
      project: { hashid },
      target: { type: "account", id: id! },
    });
  });
}
