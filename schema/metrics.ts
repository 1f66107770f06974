import { projectMetrics } from "../resolvers/links.ts";
import type { LinkMetricsNode } from "../services/metrics.ts";
import { builder } from "./builder.ts";

const LinkMetricsRef = builder.objectRef<LinkMetricsNode>("LinkMetrics").implement({
  description: "Lifetime totals of one active link (revenue in minor units, time in seconds).",
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
  }),
});

builder.queryField("projectMetrics", (t) =>
  t.field({
    type: [LinkMetricsRef],
    description: "Every active link of the environment, sorted by totalViews descending.",
    resolve: (_root, _args, ctx) => projectMetrics(ctx),
  }));
