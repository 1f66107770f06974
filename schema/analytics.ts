import type { AnalyticsArgs, FiguresNode, PointNode } from "../resolvers/analytics.ts";
import {
  type Dimension,
  DIMENSIONS,
  type Interval,
  INTERVALS,
  type Metric,
  METRICS,
} from "../services/analytics/query.ts";
import { builder } from "./builder.ts";
import { AnalyticsRef, upperEnum } from "./refs.ts";

export const IntervalEnum = builder.enumType("Interval", {
  description: "A series' bucket: an hour, a day, an ISO week (from Monday) or a month of `tz`.",
  values: upperEnum<Interval>(INTERVALS),
});

export const MetricEnum = builder.enumType("Metric", {
  description: "What analytics count. TIME_SPENT sums sessions' seconds; REVENUE sums the " +
    "newest version of each purchase converted into the project's reporting currency (minor " +
    "units), as the link metrics do; UNCONVERTED_PURCHASES counts those no exchange rate " +
    "converts, which count in neither PURCHASES nor REVENUE.",
  values: upperEnum<Metric>(METRICS),
});

export const DimensionEnum = builder.enumType("Dimension", {
  description: "What analytics can be grouped or filtered by. LINK is the link's path; " +
    "CAMPAIGN, SOURCE and MEDIUM are the attributed link's tracking values; grouped by " +
    "CURRENCY, each group's revenue is its purchases' amounts in that currency.",
  values: upperEnum<Dimension>(DIMENSIONS),
});

const FILTER_FIELDS = [
  "country",
  "platform",
  "os",
  "browser",
  "referrer",
  "campaign",
  "source",
  "medium",
  "eventName",
  "currency",
] as const;

export const AnalyticsFilter = builder.inputType("AnalyticsFilter", {
  description: "Only events with these values (all must hold); `link` is a link's path.",
  fields: (t) => ({
    link: t.string(),
    ...Object.fromEntries(FILTER_FIELDS.map((name) => [name, t.string()])),
  }),
});

export const LinkAnalyticsFilter = builder.inputType("LinkAnalyticsFilter", {
  description: "Only the link's events with these values (all must hold).",
  fields: (t) => Object.fromEntries(FILTER_FIELDS.map((name) => [name, t.string()])),
});

const FIGURE_FIELDS = [
  "views",
  "opens",
  "installs",
  "reinstalls",
  "reactivations",
  "appOpens",
  "userReferred",
  "sessions",
  "timeSpent",
  "purchases",
  "revenue",
  "custom",
  "unconvertedPurchases",
] as const satisfies readonly (keyof FiguresNode)[];

const Figures = builder.objectRef<FiguresNode>("AnalyticsFigures").implement({
  description: "One figure per metric asked for (null for the others).",
  fields: (t) =>
    Object.fromEntries(
      FIGURE_FIELDS.map((name) => [name, t.expose(name, { type: "SafeInt", nullable: true })]),
    ),
});

const Point = builder.objectRef<PointNode>("AnalyticsPoint").implement({
  description: "A bucket of the series: its start and one figure per metric asked for.",
  fields: (t) => ({
    start: t.expose("start", {
      type: "DateTime",
      description: "The bucket's start, with the offset of `tz` at that moment.",
    }),
    ...Object.fromEntries(
      FIGURE_FIELDS.map((name) => [name, t.expose(name, { type: "SafeInt", nullable: true })]),
    ),
  }),
});

const Group = builder.objectRef<
  NonNullable<import("../resolvers/analytics.ts").AnalyticsNode["groups"]>[number]
>(
  "AnalyticsGroup",
).implement({
  fields: (t) => ({
    key: t.exposeString("key", {
      nullable: true,
      description: "The dimension's value; null gathers the events without one.",
    }),
    totals: t.expose("totals", { type: Figures }),
    series: t.expose("series", { type: [Point], nullable: true }),
  }),
});

AnalyticsRef.implement({
  description: "Totals, a series and one breakdown, as REST's analytics answer. `from` and " +
    "`to` are the range actually counted (widened to whole buckets).",
  fields: (t) => ({
    from: t.expose("from", { type: "DateTime" }),
    to: t.expose("to", { type: "DateTime" }),
    interval: t.expose("interval", { type: IntervalEnum, nullable: true }),
    tz: t.exposeString("tz"),
    totals: t.expose("totals", { type: Figures }),
    series: t.expose("series", {
      type: [Point],
      nullable: true,
      description: "Every bucket of the range, in order, zeros included; null without interval.",
    }),
    groups: t.expose("groups", {
      type: [Group],
      nullable: true,
      description: "The largest groups by the first metric; null without groupBy.",
    }),
  }),
});

/** The arguments of an `analytics` field; `filter` is the filter input it takes. */
export function analyticsArgs(
  // deno-lint-ignore no-explicit-any
  t: any,
  filter: typeof AnalyticsFilter | typeof LinkAnalyticsFilter,
) {
  return {
    from: t.arg({ type: "DateTime", description: "Default: 30 days before `to`." }),
    to: t.arg({ type: "DateTime", description: "Default: now. At most 400 days after `from`." }),
    interval: t.arg({ type: IntervalEnum, description: "Without it, totals only." }),
    tz: t.arg.string({ description: "An IANA time zone with whole-hour offsets. Default: UTC." }),
    metrics: t.arg({
      type: [MetricEnum],
      description: "Default: [VIEWS, INSTALLS]. Groups are ordered by the first.",
    }),
    groupBy: t.arg({ type: DimensionEnum }),
    filter: t.arg({ type: filter }),
    limit: t.arg.int({ description: "Groups answered, 1 to 1000. Default: 10." }),
  };
}

export type { AnalyticsArgs };
