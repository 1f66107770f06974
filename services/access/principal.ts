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
  }
  | { type: "account"; id: number; name: string; email: string };

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
