// Which operation of the permission table (permissions.ts) each GraphQL field performs, or which
// other door it is: GraphQL's counterpart of routes.ts. The admin graph's resolvers look their
// field up here (resolvers/authorize.ts authorizeField), so this table is what they check;
// tests/graphql_access_test.ts fails when a root field, an Environment field or any field with a
// resolver of its own has no entry, and drives every entry with keys and sessions of each kind.
import type { Operation } from "./permissions.ts";

/**
 * Fields outside the permission table: `sdk` (PROJECT-KEY and ENVIRONMENT headers), `feed` (an
 * `est_` feed token), `parent` (no check of its own: it is reached only through a parent that
 * was checked, and reads nothing its parent's check does not cover).
 */
export type FieldDoor = "sdk" | "feed" | "parent";

/** An operation; several: the field is allowed when any of them is; or a door. */
export type FieldAccess = Operation | readonly Operation[] | FieldDoor;

/** `Type.field` → what it needs. Mutation fields change something: see authorizeField. */
export const GRAPHQL_ACCESS = {
  // The SDK and feed fields
  "Query.link": "sdk",
  "Query.projectMetrics": "sdk",
  "Query.eventFeed": "feed",
  "Mutation.generateLink": "sdk",
  "Subscription.eventFeed": "feed",
  "FeedEvent.link": "parent",

  // The admin graph: an environment is visible to whoever may use any of its fields (null
  // else), so that an `admin` key reaches its tokens, destinations and keys
  "Query.environment": [
    "project.read",
    "links.read",
    "analytics.read",
    "feed_tokens.manage",
    "destinations.manage",
    "api_keys.manage",
  ],
  "Environment.projectId": "parent",
  "Environment.name": "parent",
  "Environment.project": "project.read",
  "Environment.links": "links.read",
  "Environment.link": "links.read",
  "Environment.analytics": "analytics.read",
  "Environment.funnel": "analytics.read",
  "Environment.feedTokens": "feed_tokens.manage",
  "Environment.destinations": "destinations.manage",
  "Environment.apiKeys": "api_keys.manage",
  // Checked per parent, whichever field the link was reached through (the SDK's link(path) too)
  "Link.metrics": "analytics.read",
  "Link.analytics": "analytics.read",
  "Link.funnel": "analytics.read",
  "Link.state": "parent",
  "Link.splitResults": "analytics.read",
  "LinkMetrics.link": "parent",

  // The admin graph's mutations
  "Mutation.createLink": "links.write",
  "Mutation.updateLink": "links.write",
  "Mutation.deleteLink": "links.delete",
  "Mutation.createFeedToken": "feed_tokens.manage",
  "Mutation.revokeFeedToken": "feed_tokens.manage",
  "Mutation.createDestination": "destinations.manage",
  "Mutation.pauseDestination": "destinations.manage",
  "Mutation.resumeDestination": "destinations.manage",
  "Mutation.rotateDestinationSecret": "destinations.manage",
  "Mutation.testDestination": "destinations.manage",
  "Mutation.deleteDestination": "destinations.manage",
  "Mutation.createApiKey": "api_keys.manage",
  "Mutation.revokeApiKey": "api_keys.manage",
  "Mutation.setSdkLimits": "project.settings",
  "Mutation.setReportingCurrency": "project.settings",
  "Mutation.setAttributionSettings": "project.settings",
} as const satisfies Record<string, FieldAccess>;

export type FieldCoordinate = keyof typeof GRAPHQL_ACCESS;

/** The fields whose entry is one operation or several: those authorizeField checks. */
export type AdminField = {
  [K in FieldCoordinate]: typeof GRAPHQL_ACCESS[K] extends FieldDoor ? never : K;
}[FieldCoordinate];

/** The operations a field's entry allows it under (any one suffices). */
export function fieldOperations(field: AdminField): readonly Operation[] {
  const access: Operation | readonly Operation[] = GRAPHQL_ACCESS[field];
  return typeof access === "string" ? [access] : access;
}

/** What the field `Type.field` needs, or undefined when the table has no entry. */
export function fieldAccess(coordinate: string): FieldAccess | undefined {
  return Object.hasOwn(GRAPHQL_ACCESS, coordinate)
    ? GRAPHQL_ACCESS[coordinate as FieldCoordinate]
    : undefined;
}
