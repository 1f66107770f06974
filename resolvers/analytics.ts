// Analytics in the graph: `Environment.analytics` and `Link.analytics` take typed arguments,
// which are checked by the REST route's own parser (services/analytics/params.ts), with errors
// naming the GraphQL argument; answers are REST's under GraphQL's names.
import {
  parseAnalyticsParams,
  type RawAnalyticsParams,
  seriesValueBound,
} from "../services/analytics/params.ts";
import {
  type AnalyticsAnswer,
  type AnalyticsQuery,
  type Dimension,
  type Figures,
  type Interval,
  MAX_SERIES_VALUES,
  type Metric,
  queryAnalytics,
} from "../services/analytics/query.ts";
import { ApiError } from "../services/errors.ts";
import { authorizeField } from "./authorize.ts";
import type { GraphQLContext } from "./context.ts";
import { camelPath, withGraphQLNames } from "../graphql/errors.ts";

/** AnalyticsFilter (LinkAnalyticsFilter has no `link`): each dimension's value. */
export interface AnalyticsFilterArgs {
  link?: string | null;
  country?: string | null;
  platform?: string | null;
  os?: string | null;
  browser?: string | null;
  referrer?: string | null;
  campaign?: string | null;
  source?: string | null;
  medium?: string | null;
  eventName?: string | null;
  currency?: string | null;
}

/** The arguments of an `analytics` field, as Pothos hands them over. */
export interface AnalyticsArgs {
  from?: Date | null;
  to?: Date | null;
  interval?: Interval | null;
  tz?: string | null;
  metrics?: readonly Metric[] | null;
  groupBy?: Dimension | null;
  filter?: AnalyticsFilterArgs | null;
  limit?: number | null;
}

/** The figures of one metric set, under GraphQL's names; metrics not asked for are absent. */
export interface FiguresNode {
  views?: number;
  opens?: number;
  installs?: number;
  reinstalls?: number;
  reactivations?: number;
  appOpens?: number;
  userReferred?: number;
  sessions?: number;
  timeSpent?: number;
  purchases?: number;
  revenue?: number;
  custom?: number;
  unconvertedPurchases?: number;
}

export type PointNode = FiguresNode & { start: string };

export interface AnalyticsNode {
  from: string;
  to: string;
  interval: Interval | null;
  tz: string;
  totals: FiguresNode;
  series: PointNode[] | null;
  groups: { key: string | null; totals: FiguresNode; series: PointNode[] | null }[] | null;
}

const FIGURE_NAMES: Record<Metric, keyof FiguresNode> = {
  views: "views",
  opens: "opens",
  installs: "installs",
  reinstalls: "reinstalls",
  reactivations: "reactivations",
  app_opens: "appOpens",
  user_referred: "userReferred",
  sessions: "sessions",
  time_spent: "timeSpent",
  purchases: "purchases",
  revenue: "revenue",
  custom: "custom",
  unconverted_purchases: "unconvertedPurchases",
};

const FILTER_DIMENSIONS: Record<keyof AnalyticsFilterArgs, Dimension> = {
  link: "link",
  country: "country",
  platform: "platform",
  os: "os",
  browser: "browser",
  referrer: "referrer",
  campaign: "campaign",
  source: "source",
  medium: "medium",
  eventName: "event_name",
  currency: "currency",
};

/** REST's parameter names in the parser's errors as GraphQL's arguments. */
function argumentName(field: string): string {
  const filter = /^filter\[(.*)\]$/.exec(field);
  if (filter) return `filter.${camelPath(filter[1]!)}`;
  return field === "link" ? "filter.link" : camelPath(field);
}

/** The query of an `analytics` field's arguments for the environment, checked as REST's. */
export async function analyticsQuery(
  ctx: GraphQLContext,
  environmentId: number,
  args: AnalyticsArgs,
  /** For Link.analytics: each answer is one link's. */
  perLink = false,
): Promise<AnalyticsQuery> {
  if (args.metrics && args.metrics.length === 0) {
    throw new ApiError("invalid_field", "metrics: must name at least one metric", {
      field: "metrics",
    });
  }
  const filters: Record<string, string> = {};
  for (const [name, value] of Object.entries(args.filter ?? {})) {
    if (value != null) filters[FILTER_DIMENSIONS[name as keyof AnalyticsFilterArgs]] = value;
  }
  const raw: RawAnalyticsParams = {
    from: args.from?.toISOString(),
    to: args.to?.toISOString(),
    interval: args.interval ?? undefined,
    tz: args.tz ?? undefined,
    metrics: args.metrics?.join(","),
    group_by: args.groupBy ?? undefined,
    limit: args.limit == null ? undefined : String(args.limit),
    filters,
  };
  const { sql, clock } = ctx.deps;
  return await withGraphQLNames(
    argumentName,
    () => parseAnalyticsParams(sql, environmentId, raw, clock.now(), perLink),
  );
}

/**
 * Counts `values` series values against the request's allowance: however many `analytics`
 * fields a document holds (one per link of a page, aliases), a request's answers hold at most
 * MAX_SERIES_VALUES values, as one REST answer does.
 */
export function chargeSeriesValues(ctx: GraphQLContext, values: number): void {
  ctx.seriesValues += values;
  if (ctx.seriesValues > MAX_SERIES_VALUES) {
    throw new ApiError(
      "invalid_field",
      `interval: the analytics series of this request would hold more than ${MAX_SERIES_VALUES} ` +
        "values: choose a longer interval, a shorter range, fewer groups or fewer links",
      { field: "interval" },
    );
  }
}

/** Environment.analytics: one query, as REST's route. */
export async function environmentAnalytics(
  ctx: GraphQLContext,
  environmentId: number,
  args: AnalyticsArgs,
): Promise<AnalyticsNode> {
  await authorizeField(ctx, "Environment.analytics", environmentId);
  const q = await analyticsQuery(ctx, environmentId, args);
  chargeSeriesValues(ctx, seriesValueBound(q));
  return analyticsNode(await queryAnalytics(ctx.deps.sql, q));
}

function figuresNode(figures: Figures): FiguresNode {
  const node: FiguresNode = {};
  for (const [metric, value] of Object.entries(figures)) {
    node[FIGURE_NAMES[metric as Metric]] = value;
  }
  return node;
}

function seriesNode(series: AnalyticsAnswer["series"]): PointNode[] | null {
  if (!series) return null;
  return series.map(({ start, ...figures }) => ({ start, ...figuresNode(figures as Figures) }));
}

export function analyticsNode(answer: AnalyticsAnswer): AnalyticsNode {
  return {
    from: answer.from,
    to: answer.to,
    interval: answer.interval ?? null,
    tz: answer.tz,
    totals: figuresNode(answer.totals),
    series: seriesNode(answer.series),
    groups: answer.groups?.map((g) => ({
      key: g.key,
      totals: figuresNode(g.totals),
      series: seriesNode(g.series),
    })) ?? null,
  };
}
