import { projectMetrics } from "../resolvers/links.ts";
import type { LinkMetrics } from "../services/metrics.ts";
import { builder } from "./builder.ts";

const LinkMetricsRef = builder.objectRef<LinkMetrics>("LinkMetrics").implement({
  description: "Lifetime totals of one active link (revenue in minor units, time in seconds).",
  fields: (t) => ({
    id: t.exposeInt("id"),
    name: t.exposeString("name"),
    path: t.exposeString("path"),
    title: t.exposeString("title"),
    active: t.exposeBoolean("active"),
    sdkGenerated: t.exposeBoolean("sdk_generated"),
    tags: t.stringList({ resolve: (m) => m.tags.map(String) }),
    trackingCampaign: t.string({ nullable: true, resolve: (m) => m.tracking_campaign ?? null }),
    totalViews: t.expose("total_views", { type: "SafeInt" }),
    totalOpens: t.expose("total_opens", { type: "SafeInt" }),
    totalInstalls: t.expose("total_installs", { type: "SafeInt" }),
    totalReinstalls: t.expose("total_reinstalls", { type: "SafeInt" }),
    totalTimeSpent: t.expose("total_time_spent", { type: "SafeInt" }),
    totalReactivations: t.expose("total_reactivations", { type: "SafeInt" }),
    totalAppOpens: t.expose("total_app_opens", { type: "SafeInt" }),
    totalUserReferred: t.expose("total_user_referred", { type: "SafeInt" }),
    totalRevenue: t.expose("total_revenue", { type: "SafeInt" }),
  }),
});

builder.queryField("projectMetrics", (t) =>
  t.field({
    type: [LinkMetricsRef],
    description: "Every active link of the environment, sorted by totalViews descending.",
    resolve: (_root, _args, ctx) => projectMetrics(ctx),
  }));
