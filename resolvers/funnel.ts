// The funnel in the graph: `Environment.funnel` (the REST route's answer) and `Link.funnel`
// (each link's, for a whole page in one statement through a DataLoader), checked by the REST
// route's parser with errors naming the GraphQL argument.
import DataLoader from "dataloader";
import type { GraphQLResolveInfo } from "graphql";
import {
  type FunnelFigures,
  type FunnelQuery,
  type FunnelResult,
  parseFunnelParams,
  queryFunnel,
  queryFunnelByLink,
} from "../services/analytics/funnel.ts";
import { camelPath, withGraphQLNames } from "../graphql/errors.ts";
import { authorizeField } from "./authorize.ts";
import type { GraphQLContext } from "./context.ts";
import type { LinkNode } from "./nodes.ts";

/** The arguments of `Environment.funnel` (Link.funnel takes from, to and tz). */
export interface FunnelArgs {
  from?: Date | null;
  to?: Date | null;
  tz?: string | null;
  link?: string | null;
  groupByLink?: boolean | null;
  limit?: number | null;
}

/** A funnel's figures under GraphQL's names. */
export interface FunnelFiguresNode {
  views: number;
  installs: number;
  purchasers: number;
  purchases: number;
  revenue: number;
  installsPerView: number | null;
  purchasersPerInstall: number | null;
  purchasesPerPurchaser: number | null;
  medianSecondsToInstall: number | null;
}

export interface FunnelNode {
  from: string;
  to: string;
  tz: string;
  currency: string;
  totals: FunnelFiguresNode;
  groups: { key: string; totals: FunnelFiguresNode }[] | null;
}

function figuresNode(f: FunnelFigures): FunnelFiguresNode {
  return {
    views: f.views,
    installs: f.installs,
    purchasers: f.purchasers,
    purchases: f.purchases,
    revenue: f.revenue,
    installsPerView: f.installs_per_view,
    purchasersPerInstall: f.purchasers_per_install,
    purchasesPerPurchaser: f.purchases_per_purchaser,
    medianSecondsToInstall: f.median_seconds_to_install,
  };
}

function funnelNode(result: FunnelResult): FunnelNode {
  return {
    from: result.from,
    to: result.to,
    tz: result.tz,
    currency: result.currency,
    totals: figuresNode(result.totals),
    groups: result.groups?.map((g) => ({ key: g.key, totals: figuresNode(g.totals) })) ?? null,
  };
}

/** REST's parameter names in the parser's errors as GraphQL's arguments. */
function argumentName(field: string): string {
  return field === "group_by" ? "groupByLink" : camelPath(field);
}

async function funnelQuery(
  ctx: GraphQLContext,
  environmentId: number,
  args: FunnelArgs,
): Promise<FunnelQuery> {
  const { sql, clock } = ctx.deps;
  return await withGraphQLNames(argumentName, () =>
    parseFunnelParams(sql, environmentId, {
      from: args.from?.toISOString(),
      to: args.to?.toISOString(),
      tz: args.tz ?? undefined,
      link: args.link ?? undefined,
      group_by: args.groupByLink ? "link" : undefined,
      limit: args.limit == null ? undefined : String(args.limit),
    }, clock.now()));
}

/** Environment.funnel: one query, as REST's route. */
export async function environmentFunnel(
  ctx: GraphQLContext,
  environmentId: number,
  args: FunnelArgs,
): Promise<FunnelNode> {
  await authorizeField(ctx, "Environment.funnel", environmentId);
  const q = await funnelQuery(ctx, environmentId, args);
  return funnelNode(await queryFunnel(ctx.deps.sql, q));
}

/** Link.funnel: the link's funnel for the arguments, loaded for the page's links at once. */
export function linkFunnel(
  link: LinkNode,
  args: FunnelArgs,
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
): Promise<FunnelNode> {
  return ctx.loaders.forField(info.fieldNodes, () => funnelLoader(ctx, args)).load(link);
}

/**
 * The funnel loader of a Link.funnel edge: each link's funnel for the edge's arguments, one
 * transaction per environment for all the page's links (the environment authorised once).
 */
function funnelLoader(
  ctx: GraphQLContext,
  args: FunnelArgs,
): DataLoader<LinkNode, FunnelNode, number> {
  return new DataLoader<LinkNode, FunnelNode, number>(async (links) => {
    const answers = new Map<number, FunnelNode | Error>();
    const groups = Map.groupBy(links, (l) => l.environmentId);
    for (const [environmentId, group] of groups) {
      try {
        await authorizeField(ctx, "Link.funnel", environmentId);
        const q = await funnelQuery(ctx, environmentId, args);
        const byLink = await queryFunnelByLink(ctx.deps.sql, q, group.map((l) => l.id));
        for (const link of group) answers.set(link.id, funnelNode(byLink.get(link.id)!));
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        for (const link of group) answers.set(link.id, error);
      }
    }
    return links.map((link) => answers.get(link.id)!);
  }, { cacheKeyFn: (link) => link.id });
}
