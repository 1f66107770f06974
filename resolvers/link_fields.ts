// The fields below a Link and a LinkMetrics that read more than their parent holds: each goes
// through the request's loaders (resolvers/loaders.ts), one query for a whole page.
import type { GraphQLResolveInfo } from "graphql";
import { notFound } from "../services/errors.ts";
import type { LinkState } from "../services/links/manage.ts";
import type { LinkMetricsNode } from "../services/links/metrics.ts";
import type { AnalyticsArgs, AnalyticsNode } from "./analytics.ts";
import { authorizeField } from "./authorize.ts";
import type { GraphQLContext } from "./context.ts";
import type { LinkNode } from "./nodes.ts";

/** Link.metrics: the link's lifetime counters (the admin graph's `analytics.read`). */
export async function linkMetrics(link: LinkNode, ctx: GraphQLContext): Promise<LinkMetricsNode> {
  await authorizeField(ctx, "Link.metrics", link.environmentId);
  const metrics = await ctx.loaders.metrics.load(link.id);
  if (!metrics) throw notFound("link");
  return metrics;
}

/** Link.analytics: the link's figures for the arguments (the admin graph's `analytics.read`). */
export function linkAnalytics(
  link: LinkNode,
  args: AnalyticsArgs,
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
): Promise<AnalyticsNode> {
  return ctx.loaders.analyticsFor(ctx, info, args).load(link);
}

/** LinkMetrics.link: the link the figures are of. */
export async function metricsLink(
  metrics: LinkMetricsNode,
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
): Promise<LinkNode> {
  const link = await ctx.loaders.linkFor(info, metrics.id);
  if (!link) throw notFound("link");
  return link;
}

/**
 * Link.state: a node made from the SDK's lookup lacks the views counted toward its limit, and
 * has them read (for a page of such links, in one query).
 */
export function linkStateOf(link: LinkNode, ctx: GraphQLContext): LinkState | Promise<LinkState> {
  if (link.state !== null) return link.state;
  return ctx.loaders.links(["state"]).load(link.id).then((read) => {
    if (!read?.state) throw notFound("link");
    return read.state;
  });
}
