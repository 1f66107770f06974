// Who is asking: the instance admin (the admin token, or a dashboard session signed in with it),
// an API key of one environment, or a person's account.
import type { Scope } from "./permissions.ts";

export type Principal =
  | { type: "admin_token" }
  | {
    type: "api_key";
    id: number;
    name: string;
    /** The environment (numeric project_id) the key belongs to. */
    environmentId: number;
    scopes: readonly Scope[];
    /** The person behind the key's chain of makers, or the instance admin: it acts as theirs. */
    owner: Owner;
  }
  | { type: "account"; id: number; name: string; email: string };

/**
 * Whom something made belongs to: a person's account (whatever made it on their behalf: their
 * session, or a key they made, or a key made by such a key), or the instance admin.
 */
export type Owner = { type: "account"; id: number } | { type: "admin_token" };

/** Whom what `principal` makes belongs to. */
export function ownerOf(principal: Principal): Owner {
  switch (principal.type) {
    case "admin_token":
      return { type: "admin_token" };
    case "account":
      return { type: "account", id: principal.id };
    case "api_key":
      return principal.owner;
  }
}

export const ADMIN_TOKEN_PRINCIPAL: Principal = Object.freeze({ type: "admin_token" });

/** The actor an audit entry records: never a secret, only what identifies who acted. */
export interface Actor {
  type: Principal["type"];
  id: number | null;
  name: string;
}

export function actorOf(principal: Principal): Actor {
  return principal.type === "admin_token"
    ? { type: "admin_token", id: null, name: "admin token" }
    : { type: principal.type, id: principal.id, name: principal.name };
}
