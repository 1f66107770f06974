// Who made an API key, a feed token or a destination, and whom it belongs to: the person behind
// the chain of makers (a key made by a key Ada made is Ada's), or the instance admin. Stored in
// each row (migration 00025) as the audit log names an actor, plus the owner.
import type { Db } from "../../db/connect.ts";
import { type AuditContext, type AuditDetail, ownerOfChange } from "./audit.ts";
import type { Actor, Owner } from "./principal.ts";

/** The columns a creation writes: its maker and its owner. */
export interface MakerColumns {
  made_by_type: Actor["type"];
  made_by_id: number | null;
  made_by_name: string;
  owner_type: "account" | "admin_token";
  created_by_account_id: number | null;
}

/** What a creation by `actor` on behalf of `owner` records of who made it. */
export function makerColumns(actor: Actor, owner: Owner): MakerColumns {
  return {
    made_by_type: actor.type,
    made_by_id: actor.id,
    made_by_name: actor.name,
    owner_type: owner.type,
    created_by_account_id: owner.type === "account" ? owner.id : null,
  };
}

/** What a creation made in `audit`'s change records of who made it. */
export function makerColumnsOf(audit: AuditContext): MakerColumns {
  return makerColumns(audit.actor, ownerOfChange(audit));
}

/**
 * The creation's audit detail: the person a key acted for (`{"on_behalf_of_account": id}`), when
 * a key made it; undefined otherwise (the entry's actor is the maker and owner already).
 */
export function makerDetail(columns: MakerColumns): AuditDetail | undefined {
  return columns.made_by_type === "api_key" && columns.created_by_account_id !== null
    ? { on_behalf_of_account: columns.created_by_account_id }
    : undefined;
}

/** Whom a thing belongs to, as lists show it. */
export interface BelongsTo {
  type: "account" | "admin_token";
  /** The account's id; null for the instance admin (and for a removed account's API keys). */
  id: number | null;
  /** The account's name; null once it is removed. */
  name: string | null;
}

/** What lists show of who made something (null: made before makers were recorded). */
export interface MadeBy {
  created_by: Actor | null;
  belongs_to: BelongsTo | null;
}

/** The row columns madeBy reads (select them with MADE_BY_COLUMNS). */
export interface MadeByRow {
  made_by_type: Actor["type"] | null;
  made_by_id: number | null;
  made_by_name: string | null;
  owner_type: "account" | "admin_token" | null;
  created_by_account_id: number | null;
  owner_name: string | null;
}

/**
 * The maker columns an INSERT returns: without the owner's name, as Citus takes no subquery in
 * an INSERT's RETURNING (ownerNameOf reads it after).
 */
export function insertedMadeByColumns(db: Db, alias: string) {
  const t = db(alias);
  return db`${t}.made_by_type, ${t}.made_by_id, ${t}.made_by_name, ${t}.owner_type,
    ${t}.created_by_account_id, null::text as owner_name`;
}

/** The row with its owner's current name, for a row insertedMadeByColumns returned. */
export async function withOwnerName<T extends MadeByRow>(db: Db, row: T): Promise<T> {
  if (row.created_by_account_id === null) return row;
  const [account] = await db<{ name: string }[]>`
    select name from accounts where id = ${row.created_by_account_id}
  `;
  return { ...row, owner_name: account?.name ?? null };
}

/** The maker columns of the table aliased `alias`, with the owner's current name. */
export function madeByColumns(db: Db, alias: string) {
  const t = db(alias);
  return db`${t}.made_by_type, ${t}.made_by_id, ${t}.made_by_name, ${t}.owner_type,
    ${t}.created_by_account_id,
    (select a.name from accounts a where a.id = ${t}.created_by_account_id) as owner_name`;
}

export function madeBy(row: MadeByRow): MadeBy {
  return {
    created_by: row.made_by_type === null
      ? null
      : { type: row.made_by_type, id: row.made_by_id, name: row.made_by_name ?? "" },
    belongs_to: row.owner_type === null
      ? null
      : row.owner_type === "admin_token"
      ? { type: "admin_token", id: null, name: "instance admin" }
      : {
        type: "account",
        id: row.created_by_account_id,
        name: row.owner_name,
      },
  };
}
