// The fields below a Link and a LinkMetrics that read more than their parent holds: each goes
// through the request's loaders (resolvers/loaders.ts), one query for a whole page.
import type { GraphQLResolveInfo } from "graphql";
import { notFound } from "../services/errors.ts";
import type { LinkState } from "../services/links/manage.ts";
import type { LinkMetricsNode } from "../services/links/metrics.ts";
import DataLoader from "dataloader";
import { seriesValueBound } from "../services/analytics/params.ts";
import { queryAnalyticsByLink } from "../services/analytics/query.ts";
import {
  type AnalyticsArgs,
  type AnalyticsNode,
  analyticsNode,
  analyticsQuery,
  chargeSeriesValues,
} from "./analytics.ts";
import { authorizeField } from "./authorize.ts";
import type { GraphQLContext } from "./context.ts";
import type { LinkNode } from "./nodes.ts";
import { splitFigures, splitOf, splitResults } from "../services/links/split_results.ts";

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
  return ctx.loaders.forField(info.fieldNodes, () => analyticsLoader(ctx, args)).load(link);
}

/**
 * The analytics loader of a Link.analytics edge: each link's figures for the edge's
 * arguments, for all the page's links in one transaction per environment. The environment is
 * authorised once, and the page's series count against the request's allowance together.
 */
function analyticsLoader(
  ctx: GraphQLContext,
  args: AnalyticsArgs,
): DataLoader<LinkNode, AnalyticsNode, number> {
  return new DataLoader<LinkNode, AnalyticsNode, number>(async (links) => {
    const answers = new Map<number, AnalyticsNode | Error>();
    for (const [environmentId, group] of byEnvironment(links)) {
      try {
        await authorizeField(ctx, "Link.analytics", environmentId);
        // Each answer is one link's: a rule or a variant needs no link= here.
        const q = await analyticsQuery(ctx, environmentId, args, true);
        chargeSeriesValues(ctx, seriesValueBound(q) * group.length);
        const byLink = await queryAnalyticsByLink(ctx.deps.sql, q, group.map((l) => l.id));
        for (const link of group) answers.set(link.id, analyticsNode(byLink.get(link.id)!));
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        for (const link of group) answers.set(link.id, error);
      }
    }
    return links.map((link) => answers.get(link.id)!);
  }, { cacheKeyFn: (link) => link.id });
}

/** Links grouped by environment, in first-seen order. */
function byEnvironment(links: readonly LinkNode[]): Map<number, LinkNode[]> {
  const groups = new Map<number, LinkNode[]>();
  for (const link of links) {
    const group = groups.get(link.environmentId);
    if (group) group.push(link);
    else groups.set(link.environmentId, [link]);
  }
  return groups;
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

/**
 * Link.splitResults: a split's figures per variant and the probability each is best (the
 * admin graph's `analytics.read`). The link's rules and split, and its figures, each through a
 * loader: one query each for a whole page.
 */
export async function linkSplitResults(
  link: LinkNode,
  rule: string | null | undefined,
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
): Promise<SplitResultsNode | null> {
  const [own, figures] = await Promise.all([
    ctx.loaders.links(["rules", "split"]).load(link.id),
    ctx.loaders.forField(info.fieldNodes, () => splitFiguresLoader(ctx)).load(link),
  ]);
  if (!own) throw notFound("link");
  // No split anywhere and none asked for by name: nothing to report.
  if (rule == null && own.split === null && own.rules.every((r) => r.split === null)) return null;
  const { label, split } = splitOf(
    {
      rules: own.rules.map((r) => ({
        ...(r.name === null ? {} : { name: r.name }),
        when: r.when,
        ...(r.url === null ? {} : { url: r.url }),
        ...(r.split === null ? {} : { split: r.split }),
      })),
      split: own.split,
    },
    rule ?? undefined,
  );
  const results = splitResults(label, split, figures);
  return {
    rule: results.rule === null ? null : String(results.rule),
    enoughData: results.enough_data,
    variants: results.variants.map((v) => ({
      variant: v.variant,
      url: v.url,
      weight: v.weight,
      views: v.views,
      installs: v.installs,
      purchases: v.purchases,
      revenue: v.revenue,
      conversionRate: v.conversion_rate,
      probabilityBest: v.probability_best,
    })),
  };
}

/** SplitResults with the schema's own field names (resolvers/nodes.ts says why). */
export interface SplitResultsNode {
  rule: string | null;
  enoughData: boolean;
  variants: {
    variant: number;
    url: string;
    weight: number;
    views: number;
    installs: number;
    purchases: number;
    revenue: number;
    conversionRate: number;
    probabilityBest: number;
  }[];
}

type SplitFigures = Awaited<ReturnType<typeof splitFigures>> extends Map<number, infer F> ? F
  : never;

/**
 * Each link's split figures (views, installs, purchases and revenue per rule and variant), for
 * a page's links in one query per environment, authorised once per environment.
 */
function splitFiguresLoader(ctx: GraphQLContext): DataLoader<LinkNode, SplitFigures, number> {
  return new DataLoader<LinkNode, SplitFigures, number>(async (links) => {
    const answers = new Map<number, SplitFigures | Error>();
    for (const [environmentId, group] of byEnvironment(links)) {
      try {
        await authorizeField(ctx, "Link.splitResults", environmentId);
        const byLink = await splitFigures(ctx.deps.sql, environmentId, group.map((l) => l.id));
        for (const link of group) answers.set(link.id, byLink.get(link.id) ?? []);
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        for (const link of group) answers.set(link.id, error);
      }
    }
    return links.map((link) => answers.get(link.id)!);
  }, { cacheKeyFn: (link) => link.id });
}
