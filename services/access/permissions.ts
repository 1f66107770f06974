// The one permission table: what each operation needs from a person (the least project role)
// and from an API key (the scope). Every transport (REST, GraphQL, the dashboard) checks it
// through authorize() in authorize.ts; routes.ts says which operation each HTTP route performs.

/** Project roles, from least to most. */
export const ROLES = ["viewer", "editor", "admin", "owner"] as const;
export type Role = typeof ROLES[number];

/** What an API key (`sk_…`, one environment) may be allowed to do. */
export const SCOPES = [
  "links:read",
  "links:write",
  "analytics:read",
  "events:read",
  "admin",
] as const;
export type Scope = typeof SCOPES[number];

export interface Permission {
  /** The least project role a member needs; "instance" is the instance admin only. */
  role: Role | "instance";
  /** The scope an API key needs; null: no key may do it (people only). */
  scope: Scope | null;
  /** What it covers, for docs and the tests' messages. */
  summary: string;
}

/**
 * Operation → least role and key scope. The instance admin (the admin token, or a session
 * signed in with it) may do every operation.
 */
export const PERMISSIONS = {
  "links.read": {
    role: "viewer",
    scope: "links:read",
    summary: "read links (list, search, export)",
  },
  "links.write": {
    role: "editor",
    scope: "links:write",
    summary: "create, edit, activate, archive and import links",
  },
  "links.delete": { role: "admin", scope: "links:write", summary: "delete links" },
  "analytics.read": {
    role: "viewer",
    scope: "analytics:read",
    summary: "link metrics, events per day, analytics",
  },
  "events.export": { role: "admin", scope: "events:read", summary: "the history export" },
  "events.live": { role: "admin", scope: "events:read", summary: "live events" },
  "audit.read": { role: "admin", scope: "admin", summary: "the project's audit log" },
  "feed_tokens.manage": {
    role: "admin",
    scope: "admin",
    summary: "list, create and revoke feed tokens",
  },
  "destinations.manage": {
    role: "admin",
    scope: "admin",
    summary: "list, create, test, pause, resume, rotate and delete destinations",
  },
  "api_keys.manage": { role: "admin", scope: "admin", summary: "list, create and revoke API keys" },
  "project.key": { role: "admin", scope: "admin", summary: "replace the project key" },
  "project.settings": {
    role: "admin",
    scope: "admin",
    summary: "the project's link domain and apps",
  },
  "project.read": {
    role: "viewer",
    scope: null,
    summary: "see the project, its environments and settings",
  },
  "members.manage": {
    role: "admin",
    scope: null,
    summary: "list members; add, change or remove members with roles below owner",
  },
  "members.owners": { role: "owner", scope: null, summary: "add, change or remove owners" },
  "project.rename": { role: "owner", scope: null, summary: "rename the project" },
  "project.delete": { role: "owner", scope: null, summary: "delete the project" },
  "projects.manage": {
    role: "instance",
    scope: null,
    summary: "create and list every project, turn Enterprise on or off",
  },
  "accounts.manage": { role: "instance", scope: null, summary: "create and remove accounts" },
  "audit.instance": { role: "instance", scope: null, summary: "the whole instance's audit log" },
  "fx_rates.load": {
    role: "instance",
    scope: null,
    summary: "load the ECB's exchange rates (every project's revenue)",
  },
} as const satisfies Record<string, Permission>;

export type Operation = keyof typeof PERMISSIONS;

export function isOperation(value: string): value is Operation {
  return Object.hasOwn(PERMISSIONS, value);
}

/** Whether `role` is at least `least`. */
export function roleAtLeast(role: Role, least: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(least);
}

/**
 * The scopes a member with `role` may give a key they create: a key never exceeds its creator,
 * so a scope is within a role only when every operation the scope opens is.
 */
export function scopesAllowedTo(role: Role): Scope[] {
  const permissions: Permission[] = Object.values(PERMISSIONS);
  return SCOPES.filter((scope) =>
    permissions.every((p) =>
      p.scope !== scope || (p.role !== "instance" && roleAtLeast(role, p.role))
    )
  );
}
