import { metricsLink } from "../resolvers/link_fields.ts";
import { projectMetrics } from "../resolvers/links.ts";
import { builder } from "./builder.ts";
import { LinkMetricsRef, LinkRef } from "./refs.ts";

LinkMetricsRef.implement({
  description: "Lifetime totals of one link (revenue in minor units of the project's reporting " +
    "currency, time in seconds).",
  // Every field is exposed under its own name, so graphql-jit reads it inline: a field with a
  // resolver of its own (another name, `resolve:`) costs a call and a resolve info per item.
  fields: (t) => ({
    id: t.exposeInt("id"),
    name: t.exposeString("name"),
    path: t.exposeString("path"),
    title: t.exposeString("title"),
    active: t.exposeBoolean("active"),
    sdkGenerated: t.exposeBoolean("sdkGenerated"),
    tags: t.exposeStringList("tags"),
    trackingCampaign: t.exposeString("trackingCampaign", { nullable: true }),
    totalViews: t.expose("totalViews", { type: "SafeInt" }),
    totalOpens: t.expose("totalOpens", { type: "SafeInt" }),
    totalInstalls: t.expose("totalInstalls", { type: "SafeInt" }),
    totalReinstalls: t.expose("totalReinstalls", { type: "SafeInt" }),
    totalTimeSpent: t.expose("totalTimeSpent", { type: "SafeInt" }),
    totalReactivations: t.expose("totalReactivations", { type: "SafeInt" }),
    totalAppOpens: t.expose("totalAppOpens", { type: "SafeInt" }),
    totalUserReferred: t.expose("totalUserReferred", { type: "SafeInt" }),
    totalRevenue: t.expose("totalRevenue", { type: "SafeInt" }),
    link: t.field({
      type: LinkRef,
      description: "The link these are the figures of (loaded for a whole list at once).",
      resolve: (metrics, _args, ctx, info) => metricsLink(metrics, ctx, info),
    }),
  }),
});

builder.queryField("projectMetrics", (t) =>
  t.field({
    type: [LinkMetricsRef],
    description: "Every active link of the environment, sorted by totalViews descending.",
    resolve: (_root, _args, ctx) => projectMetrics(ctx),
  }));
