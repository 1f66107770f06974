// Who may do what, written out by hand from docs/access.md's table: the statement the access
// tests (access_matrix_test, graphql_access_test) compare the service against. It is not read
// from services/access/permissions.ts, so a wrong entry there (an editor allowed to delete links)
// fails those tests instead of moving their expectation with it; access_table_test checks that
// this table and the documentation's say the same.
import type { Operation, Role, Scope } from "../../services/access/permissions.ts";

export interface Expected {
  /** The least project role; "instance": the instance admin only. */
  role: Role | "instance";
  /** The API key scope; null: no key may do it. */
  scope: Scope | null;
  /** The row of docs/access.md's table that says so (its first column). */
  doc: string;
}

const SETTINGS_ROW =
  "feed tokens, destinations, API keys, the project key, the link domain and apps";
const INSTANCE_ROW =
  "creating and listing every project, Enterprise, accounts, exchange rates, the instance's log";

export const EXPECTED_ACCESS: Record<Operation, Expected> = {
  "links.read": {
    role: "viewer",
    scope: "links:read",
    doc: "read links (the list and the CSV export)",
  },
  "analytics.read": {
    role: "viewer",
    scope: "analytics:read",
    doc: "link metrics, events per day, analytics",
  },
  "links.write": {
    role: "editor",
    scope: "links:write",
    doc: "create, edit, activate, archive and import links",
  },
  "links.delete": { role: "admin", scope: "links:write", doc: "delete links" },
  "events.export": { role: "admin", scope: "events:read", doc: "the history export, live events" },
  "events.live": { role: "admin", scope: "events:read", doc: "the history export, live events" },
  "audit.read": { role: "admin", scope: "admin", doc: "the project's audit log" },
  "feed_tokens.manage": { role: "admin", scope: "admin", doc: SETTINGS_ROW },
  "destinations.manage": { role: "admin", scope: "admin", doc: SETTINGS_ROW },
  "api_keys.manage": { role: "admin", scope: "admin", doc: SETTINGS_ROW },
  "project.key": { role: "admin", scope: "admin", doc: SETTINGS_ROW },
  "project.settings": { role: "admin", scope: "admin", doc: SETTINGS_ROW },
  "project.read": { role: "viewer", scope: null, doc: "see the project and its settings" },
  "members.manage": { role: "admin", scope: null, doc: "members with roles below owner" },
  "members.owners": { role: "owner", scope: null, doc: "owners, renaming or deleting the project" },
  "project.rename": { role: "owner", scope: null, doc: "owners, renaming or deleting the project" },
  "project.delete": { role: "owner", scope: null, doc: "owners, renaming or deleting the project" },
  "projects.manage": { role: "instance", scope: null, doc: INSTANCE_ROW },
  "accounts.manage": { role: "instance", scope: null, doc: INSTANCE_ROW },
  "audit.instance": { role: "instance", scope: null, doc: INSTANCE_ROW },
  "fx_rates.load": { role: "instance", scope: null, doc: INSTANCE_ROW },
};

const ROLE_ORDER = ["viewer", "editor", "admin", "owner"];

/** Whether a person of `role` (null: no member) may do `op`, by this table. */
export function roleMay(role: Role | "instance" | null, op: Operation): boolean {
  const least = EXPECTED_ACCESS[op].role;
  if (role === "instance") return true;
  if (role === null || least === "instance") return false;
  return ROLE_ORDER.indexOf(role) >= ROLE_ORDER.indexOf(least);
}
