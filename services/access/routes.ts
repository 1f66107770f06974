// Which operation of the permission table (permissions.ts) each HTTP route performs, or which
// other door it is. REST's admin routes look themselves up here on every request
// (rest/access.ts); tests/access_routes_test.ts fails when a registered route is missing.
import type { Operation } from "./permissions.ts";

/**
 * Routes outside the permission table: `public` (no credentials: health, docs, the link host),
 * `sdk` (PROJECT-KEY), `feed` (an `est_` feed token), `graphql` (each field decides),
 * `sign_in` (the dashboard's sign-in form and its assets), `signed_in` (any dashboard session;
 * the page shows only what the session may see), `mcp` (an API key; each tool is an operation
 * of the table, checked when called: rest/mcp_tools.ts).
 */
export type Door = "public" | "sdk" | "feed" | "graphql" | "sign_in" | "signed_in" | "mcp";

export type RouteAccess = Operation | Door;

/** `METHOD path` as Hono registers it (app.routes) → what it needs. */
export const ROUTE_ACCESS: Record<string, RouteAccess> = {
  // Operations, health and documents
  "GET /healthz": "public",
  "GET /readyz": "public",
  "GET /openapi.json": "public",
  "GET /docs": "public",
  "GET /docs/assets/*": "public",
  "GET /graphql/assets/*": "public",
  "GET /graphql": "graphql",
  "POST /graphql": "graphql",
  "GET /llms.txt": "public",
  "GET /docs/:page": "public",

  // Agents (MCP): an API key, and its tools' operations
  "POST /mcp": "mcp",
  "GET /mcp": "mcp",
  "DELETE /mcp": "mcp",

  // The SDK API and the feed: their own credentials, never an API key
  "POST /api/v1/sdk/generate_link": "sdk",
  "GET /api/v1/sdk/link/:link_path": "sdk",
  "GET /api/v1/sdk/metrics_for_project": "sdk",
  "POST /api/v1/sdk/events": "sdk",
  "GET /api/v1/projects/:project_id/event_stream": "feed",
  "GET /api/v1/projects/:project_id/event_stream/live": "feed",

  // The admin API: instance-wide
  "GET /api/v1/admin/projects": "projects.manage",
  "POST /api/v1/admin/projects": "projects.manage",
  "GET /api/v1/admin/projects/:hashid": "project.read",
  // The least of its fields; the route checks each field it is given (rest/admin.ts).
  "PATCH /api/v1/admin/projects/:hashid": "project.settings",
  "POST /api/v1/admin/projects/:hashid/regenerate_key": "project.key",
  // The project's QR logo is one of its settings.
  "PUT /api/v1/admin/projects/:hashid/qr_logo": "project.settings",
  "GET /api/v1/admin/accounts": "accounts.manage",
  "POST /api/v1/admin/accounts": "accounts.manage",
  "DELETE /api/v1/admin/accounts/:account_id": "accounts.manage",
  "POST /api/v1/admin/accounts/:account_id/revoke_made": "accounts.manage",
  // Owners need the owner role: the service checks members.owners where it knows the roles.
  "GET /api/v1/admin/projects/:hashid/members": "members.manage",
  "PUT /api/v1/admin/projects/:hashid/members/:account_id": "members.manage",
  "DELETE /api/v1/admin/projects/:hashid/members/:account_id": "members.manage",

  // The admin API: one environment
  "GET /api/v1/projects/:project_id/event_stream_tokens": "feed_tokens.manage",
  "POST /api/v1/projects/:project_id/event_stream_tokens": "feed_tokens.manage",
  "DELETE /api/v1/projects/:project_id/event_stream_tokens/:token_id": "feed_tokens.manage",
  "GET /api/v1/projects/:project_id/links": "links.read",
  "POST /api/v1/projects/:project_id/links": "links.write",
  // Edits, activation and archiving alike; deleting takes the admin role.
  "PATCH /api/v1/projects/:project_id/links/:link_path": "links.write",
  "DELETE /api/v1/projects/:project_id/links/:link_path": "links.delete",
  "POST /api/v1/projects/:project_id/links/import": "links.write",
  // The links as CSV (their counters included): a read of links, not the events' history.
  "GET /api/v1/projects/:project_id/links/export": "links.read",
  "GET /api/v1/projects/:project_id/links/:link_path/qr": "links.read",
  // A split's results are analytics figures of the link.
  "GET /api/v1/projects/:project_id/links/:link_path/split": "analytics.read",
  "GET /api/v1/projects/:project_id/events_per_day": "analytics.read",
  "GET /api/v1/projects/:project_id/analytics": "analytics.read",
  "GET /api/v1/projects/:project_id/analytics/funnel": "analytics.read",

  "GET /api/v1/projects/:project_id/export": "events.export",
  "GET /api/v1/projects/:project_id/api_keys": "api_keys.manage",
  "POST /api/v1/projects/:project_id/api_keys": "api_keys.manage",
  "DELETE /api/v1/projects/:project_id/api_keys/:key_id": "api_keys.manage",
  "GET /api/v1/projects/:project_id/audit_log": "audit.read",
  "GET /api/v1/admin/audit_log": "audit.instance",
  "POST /api/v1/admin/fx_rates": "fx_rates.load",
  "GET /api/v1/projects/:project_id/destinations": "destinations.manage",
  "POST /api/v1/projects/:project_id/destinations": "destinations.manage",
  "PATCH /api/v1/projects/:project_id/destinations/:destination_id": "destinations.manage",
  "POST /api/v1/projects/:project_id/destinations/:destination_id/rotate_secret":
    "destinations.manage",
  "POST /api/v1/projects/:project_id/destinations/:destination_id/test": "destinations.manage",
  "DELETE /api/v1/projects/:project_id/destinations/:destination_id": "destinations.manage",

  // The dashboard
  "GET /dashboard/assets/:name": "sign_in",
  "GET /dashboard/sign-in": "sign_in",
  "POST /dashboard/sign-in": "sign_in",
  // OpenID Connect: off to the provider, and its answer (the login's own cookie, state and nonce)
  "GET /dashboard/sign-in/oidc": "sign_in",
  "GET /dashboard/sign-in/oidc/callback": "sign_in",
  "GET /dashboard/setup": "sign_in",
  "POST /dashboard/setup": "sign_in",
  "POST /dashboard/sign-out": "signed_in",
  "GET /dashboard": "signed_in",
  "GET /dashboard/*": "signed_in",
  "POST /dashboard/projects": "projects.manage",
  "GET /dashboard/projects/:hashid": "project.read",
  // Renames (owner) and turns Enterprise on or off (instance admin): the route checks both.
  "POST /dashboard/projects/:hashid": "project.rename",
  "GET /dashboard/projects/:hashid/regenerate-key": "project.key",
  "POST /dashboard/projects/:hashid/regenerate-key": "project.key",
  "POST /dashboard/projects/:hashid/apps": "project.settings",
  "POST /dashboard/projects/:hashid/apps/remove": "project.settings",
  "POST /dashboard/projects/:hashid/sdk_limits": "project.settings",
  "POST /dashboard/projects/:hashid/reporting_currency": "project.settings",
  "POST /dashboard/projects/:hashid/attribution": "project.settings",
  "GET /dashboard/environments/:project_id": "links.read",
  "GET /dashboard/environments/:project_id/tokens": "feed_tokens.manage",
  "POST /dashboard/environments/:project_id/tokens": "feed_tokens.manage",
  "GET /dashboard/environments/:project_id/tokens/:token_id/revoke": "feed_tokens.manage",
  "POST /dashboard/environments/:project_id/tokens/:token_id/revoke": "feed_tokens.manage",
  "GET /dashboard/environments/:project_id/destinations": "destinations.manage",
  "POST /dashboard/environments/:project_id/destinations": "destinations.manage",
  "POST /dashboard/environments/:project_id/destinations/:destination_id/paused":
    "destinations.manage",
  "POST /dashboard/environments/:project_id/destinations/:destination_id/test":
    "destinations.manage",
  "GET /dashboard/environments/:project_id/destinations/:destination_id/rotate":
    "destinations.manage",
  "POST /dashboard/environments/:project_id/destinations/:destination_id/rotate":
    "destinations.manage",
  "GET /dashboard/environments/:project_id/destinations/:destination_id/delete":
    "destinations.manage",
  "POST /dashboard/environments/:project_id/destinations/:destination_id/delete":
    "destinations.manage",
  "GET /dashboard/environments/:project_id/api-keys": "api_keys.manage",
  "POST /dashboard/environments/:project_id/api-keys": "api_keys.manage",
  "GET /dashboard/environments/:project_id/api-keys/:key_id/revoke": "api_keys.manage",
  "POST /dashboard/environments/:project_id/api-keys/:key_id/revoke": "api_keys.manage",
  // Owners need the owner role: the service checks members.owners where it knows the roles.
  "GET /dashboard/projects/:hashid/members": "members.manage",
  "POST /dashboard/projects/:hashid/members": "members.manage",
  "GET /dashboard/projects/:hashid/members/:account_id/remove": "members.manage",
  "POST /dashboard/projects/:hashid/members/:account_id/remove": "members.manage",
  "GET /dashboard/projects/:hashid/audit": "audit.read",
  "GET /dashboard/audit": "audit.instance",
  "GET /dashboard/accounts": "accounts.manage",
  "POST /dashboard/accounts": "accounts.manage",
  "GET /dashboard/accounts/:account_id/remove": "accounts.manage",
  "POST /dashboard/accounts/:account_id/remove": "accounts.manage",
  "GET /dashboard/accounts/:account_id/revoke-made": "accounts.manage",
  "POST /dashboard/accounts/:account_id/revoke-made": "accounts.manage",
  "GET /dashboard/account": "signed_in",
  "POST /dashboard/account": "signed_in",
  "GET /dashboard/environments/:project_id/links": "links.read",
  "GET /dashboard/environments/:project_id/links/new": "links.write",
  "POST /dashboard/environments/:project_id/links": "links.write",
  "POST /dashboard/environments/:project_id/links/import": "links.write",
  "GET /dashboard/environments/:project_id/links/export.csv": "links.read",
  "GET /dashboard/environments/:project_id/links/:path": "links.read",
  "POST /dashboard/environments/:project_id/links/:path/active": "links.write",
  "GET /dashboard/environments/:project_id/links/:path/edit": "links.write",
  "POST /dashboard/environments/:project_id/links/:path/edit": "links.write",
  "POST /dashboard/environments/:project_id/links/:path/archive": "links.write",
  "GET /dashboard/environments/:project_id/links/:path/delete": "links.delete",
  "POST /dashboard/environments/:project_id/links/:path/delete": "links.delete",
  "GET /dashboard/environments/:project_id/links/:path/qr.svg": "links.read",
  // The rules page shows viewers the rules as text; its form posts edits.
  "GET /dashboard/environments/:project_id/links/:path/rules": "links.read",
  "POST /dashboard/environments/:project_id/links/:path/rules": "links.write",
  "GET /dashboard/environments/:project_id/links/:path/qr": "links.read",
  "GET /dashboard/environments/:project_id/links/:path/qr-image": "links.read",
  "GET /dashboard/environments/:project_id/metrics": "analytics.read",
  "GET /dashboard/environments/:project_id/metrics/analytics.csv": "analytics.read",
  "GET /dashboard/environments/:project_id/funnel": "analytics.read",
  "GET /dashboard/environments/:project_id/links/:path/analytics.csv": "analytics.read",
  "GET /dashboard/environments/:project_id/live": "events.live",
  "GET /dashboard/environments/:project_id/live/stream": "events.live",
  "GET /dashboard/environments/:project_id/export": "events.export",
  "GET /dashboard/environments/:project_id/export.ndjson": "events.export",

  // The link host (last: whatever the routes above did not take)
  "GET /.well-known/apple-app-site-association": "public",
  "GET /.well-known/assetlinks.json": "public",
  "GET /open-app.js": "public",
  "GET /:path": "public",
  // A password link's form: the password is the credential, limited per link and address.
  "POST /:path": "public",
};

/** What the route `method path` (Hono's pattern, not the request's path) needs, or undefined. */
export function routeAccess(method: string, path: string): RouteAccess | undefined {
  const key = `${method === "HEAD" ? "GET" : method} ${path}`;
  return Object.hasOwn(ROUTE_ACCESS, key) ? ROUTE_ACCESS[key] : undefined;
}
