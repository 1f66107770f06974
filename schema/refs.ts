// The object types that refer to one another (a Link has metrics, LinkMetrics its link), made
// here and implemented in their own modules, so that those modules need not import each other.
import type { AnalyticsNode } from "../resolvers/analytics.ts";
import type { LinkNode } from "../resolvers/nodes.ts";
import type { LinkMetricsNode } from "../services/links/metrics.ts";
import { builder } from "./builder.ts";

export const LinkRef = builder.objectRef<LinkNode>("Link");
export const LinkMetricsRef = builder.objectRef<LinkMetricsNode>("LinkMetrics");
export const AnalyticsRef = builder.objectRef<AnalyticsNode>("Analytics");

/** A GraphQL enum of service values: `app_opens` is APP_OPENS, with the service's value. */
export function upperEnum<const T extends string>(
  values: readonly T[],
): Record<string, { value: T }> {
  return Object.fromEntries(values.map((v) => [v.toUpperCase(), { value: v }]));
}
