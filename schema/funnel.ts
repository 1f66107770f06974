// The funnel's types and fields: `Environment.funnel` and `Link.funnel` (resolvers/funnel.ts),
// added to their types here so that the modules of those types stay as they are.
import {
  environmentFunnel,
  type FunnelArgs,
  type FunnelFiguresNode,
  type FunnelNode,
  linkFunnel,
} from "../resolvers/funnel.ts";
import { builder } from "./builder.ts";
import { Environment } from "./environment.ts";
import { LinkRef } from "./refs.ts";

const FunnelFigures = builder.objectRef<FunnelFiguresNode>("FunnelFigures").implement({
  description: "A funnel's figures: views, then installs attributed to a link, distinct users " +
    "with an attributed purchase, those purchases and their revenue, and the rate of each step.",
  fields: (t) => ({
    views: t.expose("views", { type: "SafeInt" }),
    installs: t.expose("installs", { type: "SafeInt" }),
    purchasers: t.expose("purchasers", {
      type: "SafeInt",
      description: "Distinct user ids with an attributed purchase.",
    }),
    purchases: t.expose("purchases", {
      type: "SafeInt",
      description: "Current versions of purchases, converted into the reporting currency.",
    }),
    revenue: t.expose("revenue", {
      type: "SafeInt",
      description: "Minor units of the funnel's `currency`.",
    }),
    installsPerView: t.exposeFloat("installsPerView", {
      nullable: true,
      description: "installs / views; null without views.",
    }),
    purchasersPerInstall: t.exposeFloat("purchasersPerInstall", {
      nullable: true,
      description: "purchasers / installs; null without installs.",
    }),
    purchasesPerPurchaser: t.exposeFloat("purchasesPerPurchaser", {
      nullable: true,
      description: "purchases / purchasers; null without purchasers.",
    }),
    medianSecondsToInstall: t.exposeFloat("medianSecondsToInstall", {
      nullable: true,
      description: "The median seconds from click to install of the installs attributed by a " +
        "click; null when there are none.",
    }),
  }),
});

const FunnelGroup = builder.objectRef<NonNullable<FunnelNode["groups"]>[number]>("FunnelGroup")
  .implement({
    fields: (t) => ({
      key: t.exposeString("key", { description: "The link's path." }),
      totals: t.expose("totals", { type: FunnelFigures }),
    }),
  });

const Funnel = builder.objectRef<FunnelNode>("Funnel").implement({
  description: "The funnel of REST's analytics/funnel route. `from` and `to` are the range " +
    "actually counted (widened to whole hours of `tz`).",
  fields: (t) => ({
    from: t.expose("from", { type: "DateTime" }),
    to: t.expose("to", { type: "DateTime" }),
    tz: t.exposeString("tz"),
    currency: t.exposeString("currency", {
      description: "The project's reporting currency (ISO 4217), revenue's unit.",
    }),
    totals: t.expose("totals", { type: FunnelFigures }),
    groups: t.expose("groups", {
      type: [FunnelGroup],
      nullable: true,
      description: "With groupByLink: the top links with an attributed install or purchase, by " +
        "revenue, purchases, installs, views, then id; null without.",
    }),
  }),
});

// deno-lint-ignore no-explicit-any
function rangeArgs(t: any) {
  return {
    from: t.arg({ type: "DateTime", description: "Default: 30 days before `to`." }),
    to: t.arg({ type: "DateTime", description: "Default: now. At most 400 days after `from`." }),
    tz: t.arg.string({ description: "An IANA time zone with whole-hour offsets. Default: UTC." }),
  };
}

builder.objectField(Environment, "funnel", (t) =>
  t.field({
    type: Funnel,
    description: "The environment's funnel (or one link's), as REST's analytics/funnel route.",
    args: {
      ...rangeArgs(t),
      link: t.arg.string({ description: "Only this link (its path)." }),
      groupByLink: t.arg.boolean({ description: "Adds the top links by revenue (`groups`)." }),
      limit: t.arg.int({ description: "Links in `groups`, 1 to 1000. Default: 10." }),
    },
    resolve: (env, args, ctx) => environmentFunnel(ctx, env.environmentId, args as FunnelArgs),
  }));

builder.objectField(LinkRef, "funnel", (t) =>
  t.field({
    type: Funnel,
    description: "The link's funnel (loaded for a whole page at once).",
    args: rangeArgs(t),
    resolve: (link, args, ctx, info) => linkFunnel(link, args as FunnelArgs, ctx, info),
  }));
