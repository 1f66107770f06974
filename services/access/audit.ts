// The audit log: every change, whatever the transport, appends one entry inside the change's own
// transaction, so a rolled-back change leaves none and a committed one always has one. Entries
// name who acted and on what, never a secret value.
import type { Db } from "../../db/connect.ts";
import { ApiError } from "../errors.ts";
import { type Actor, actorOf, type Owner, ownerOf, type Principal } from "./principal.ts";

/** Who is changing something, and the request doing it: what services take to audit a change. */
export interface AuditContext {
  actor: Actor;
  requestId: string | null;
  /** When, as the service's clock tells (the database's clock when absent: the CLI). */
  at?: Date;
  /**
   * Whom what this change makes belongs to (auditContext sets it); needed when the actor is an
   * API key, and otherwise the actor itself (a person, or the instance admin).
   */
  owner?: Owner;
}

/** The context of a change `principal` makes in the request `requestId`. */
export function auditContext(
  principal: Principal,
  requestId: string | null,
  at?: Date,
): AuditContext {
  return { actor: actorOf(principal), requestId, ...(at ? { at } : {}), owner: ownerOf(principal) };
}

/** Whom what the change makes belongs to; throws for a key's change without its owner. */
export function ownerOfChange(audit: AuditContext): Owner {
  if (audit.owner) return audit.owner;
  if (audit.actor.type === "account") return { type: "account", id: audit.actor.id! };
  if (audit.actor.type === "admin_token") return { type: "admin_token" };
  throw new Error("an API key's change must name the key's owner (auditContext)");
}

/** The instance operator at the database (cli/admin.ts, and scripts that seed data). */
export const CLI_AUDIT: AuditContext = {
  actor: { type: "admin_token", id: null, name: "admin CLI" },
  requestId: null,
};

export type AuditAction =
  | "project.create"
  | "project.update"
  | "project.regenerate_key"
  | "project.qr_logo"
  | "feed_token.create"
  | "feed_token.revoke"
  | "destination.create"
  | "destination.pause"
  | "destination.resume"
  | "destination.rotate_secret"
  | "destination.delete"
  | "link.create"
  | "link.update"
  | "link.delete"
  | "link.import"
  | "api_key.create"
  | "api_key.revoke"
  | "account.create"
  | "account.delete"
  | "account.set_password"
  | "account.revoke_made"
  | "member.update"
  | "member.remove";

export interface AuditEntryInput {
  action: AuditAction;
  /** The project the change belongs to, by hashid or by one of its environments. */
  project: { hashid: string } | { environmentId: number } | null;
  target: { type: string; id: string | number };
  /** What else the entry says (an import's count of links); never a secret value. */
  detail?: AuditDetail;
}

/** Figures an entry carries beside its target, e.g. `{"count": 120}` for an import. */
export type AuditDetail = Record<string, number>;

/** Appends one entry; call it with the transaction that makes the change. */
export async function recordAudit(
  tx: Db,
  audit: AuditContext,
  entry: AuditEntryInput,
): Promise<void> {
  const project = entry.project;
  await tx`
    insert into audit_log (at, project_id, actor_type, actor_id, actor_name, action, target_type,
      target_id, detail, request_id)
    -- SELECT, not VALUES: Citus takes no subquery in VALUES (docs/SCALING.md, "Running on Citus").
    select coalesce(${audit.at ?? null}::timestamptz, now()),
      ${
    project === null
      ? null
      : "hashid" in project
      ? tx`(select id from projects where hashid = ${project.hashid})`
      : tx`(select project_id from environments where id = ${project.environmentId})`
  },
      ${audit.actor.type}, ${audit.actor.id}, ${audit.actor.name}, ${entry.action},
      ${entry.target.type}, ${String(entry.target.id)},
      ${entry.detail === undefined ? null : tx.json(entry.detail)}, ${audit.requestId}
  `;
}

export interface AuditEntry {
  id: number;
  at: string;
  actor: Actor;
  action: string;
  target: { type: string; id: string };
  /** null for most actions; an import's `{"count": n}`. */
  detail: AuditDetail | null;
  request_id: string | null;
}

interface EntryRow {
  id_text: string;
  at: Date;
  actor_type: Actor["type"];
  actor_id: number | null;
  actor_name: string;
  action: string;
  target_type: string;
  target_id: string;
  detail: AuditDetail | null;
  request_id: string | null;
}

export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 100;

/** Parses `limit` (1–100, 50 when absent) and `after` (a previous page's next_after). */
export function parseAuditPage(
  raw: { limit?: string | undefined; after?: string | undefined },
): { limit: number; after: bigint | null } {
  let limit = AUDIT_PAGE_DEFAULT;
  if (raw.limit !== undefined) {
    if (!/^[0-9]{1,3}$/.test(raw.limit) || Number(raw.limit) < 1 || Number(raw.limit) > 100) {
      throw new ApiError(
        "invalid_limit",
        `limit must be a whole number from 1 to ${AUDIT_PAGE_MAX}`,
      );
    }
    limit = Number(raw.limit);
  }
  let after: bigint | null = null;
  if (raw.after !== undefined && raw.after !== "") {
    if (!/^[1-9][0-9]{0,17}$/.test(raw.after)) {
      throw new ApiError("bad_cursor", "after is not a cursor of this audit log");
    }
    after = BigInt(raw.after);
  }
  return { limit, after };
}

/**
 * One page of entries, newest first: a project's (`projectId`, its internal id) or the whole
 * instance's (null). `next_after` continues after the page's last entry, or is null at the end.
 */
export async function listAudit(
  db: Db,
  projectId: number | null,
  page: { limit: number; after: bigint | null },
): Promise<{ entries: AuditEntry[]; next_after: string | null }> {
  const rows = await db<EntryRow[]>`
    -- The id goes out as text (a bigint), under another name: ORDER BY takes an output column
    -- before a table's, and ordering by the text would read 9, 8, …, 29, 28, … (issue 32).
    select id::text as id_text, at, actor_type, actor_id, actor_name, action, target_type,
      target_id, detail, request_id
    from audit_log
    where (${projectId}::int is null or project_id = ${projectId})
      and (${page.after === null ? null : String(page.after)}::bigint is null
        or id < ${page.after === null ? null : String(page.after)}::bigint)
    order by audit_log.id desc
    limit ${page.limit + 1}
  `;
  const more = rows.length > page.limit;
  const entries = rows.slice(0, page.limit).map((r) => ({
    id: Number(r.id_text),
    at: r.at.toISOString(),
    actor: { type: r.actor_type, id: r.actor_id, name: r.actor_name },
    action: r.action,
    target: { type: r.target_type, id: r.target_id },
    detail: r.detail,
    request_id: r.request_id,
  }));
  return { entries, next_after: more ? String(entries.at(-1)!.id) : null };
}
