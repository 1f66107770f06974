import type { AnalyticsArgs } from "../resolvers/analytics.ts";
import {
  linkAnalytics,
  linkMetrics,
  linkSplitResults,
  linkStateOf,
} from "../resolvers/link_fields.ts";
import type { LinkRuleNode, SplitVariantNode } from "../resolvers/nodes.ts";
import type { SplitResultsNode } from "../resolvers/link_fields.ts";
import type { LinkNode, RedirectNode } from "../resolvers/nodes.ts";
import { generateLink, linkByPath } from "../resolvers/links.ts";
import { LINK_STATES, type LinkState } from "../services/links/manage.ts";
import { analyticsArgs, LinkAnalyticsFilter } from "./analytics.ts";
import { builder } from "./builder.ts";
import { AnalyticsRef, LinkMetricsRef, LinkRef, upperEnum } from "./refs.ts";

export { LinkRef };

export const LinkStateEnum = builder.enumType("LinkState", {
  description: "ARCHIVED first, then INACTIVE (switched off), then EXPIRED (by date, or once " +
    "maxViews views were counted), else ACTIVE.",
  values: upperEnum<LinkState>(LINK_STATES),
});

// Every field exposes its own name: resolvers/nodes.ts says why.
export const RedirectRef = builder.objectRef<RedirectNode>("Redirect").implement({
  description: "A per-platform redirect as stored.",
  fields: (t) => ({
    url: t.exposeString("url", { nullable: true }),
    openAppIfInstalled: t.exposeBoolean("openAppIfInstalled", { nullable: true }),
  }),
});

export const SplitVariantRef = builder.objectRef<SplitVariantNode>("SplitVariant").implement({
  description: "A weighted variant of a split.",
  fields: (t) => ({
    url: t.exposeString("url"),
    weight: t.exposeInt("weight"),
  }),
});

export const LinkRuleRef = builder.objectRef<LinkRuleNode>("LinkRule").implement({
  description: "A redirect rule: when every condition of `when` holds (REST's names: country, " +
    "language, platform, os, query, referrer_host, ip, from, until), the hit goes to `url`, or " +
    "to a variant of `split`.",
  fields: (t) => ({
    name: t.exposeString("name", { nullable: true }),
    when: t.expose("when", { type: "JSONObject" }),
    url: t.exposeString("url", { nullable: true }),
    split: t.expose("split", { type: [SplitVariantRef], nullable: true }),
  }),
});

const VariantResultRef = builder.objectRef<SplitResultsNode["variants"][number]>(
  "SplitVariantResult",
).implement({
  fields: (t) => ({
    variant: t.exposeInt("variant"),
    url: t.exposeString("url"),
    weight: t.exposeInt("weight"),
    views: t.exposeFloat("views"),
    installs: t.exposeFloat("installs"),
    purchases: t.exposeFloat("purchases"),
    revenue: t.exposeFloat("revenue", {
      description: "Minor units of the project's reporting currency.",
    }),
    conversionRate: t.exposeFloat("conversionRate", { description: "Installs per view." }),
    probabilityBest: t.exposeFloat("probabilityBest", {
      description: "The probability that this variant's conversion rate (installs per view) " +
        "is the highest, from Beta posteriors.",
    }),
  }),
});

const SplitResultsRef = builder.objectRef<SplitResultsNode>("SplitResults").implement({
  description: "As GET /api/v1/projects/:project_id/links/:link_path/split.",
  fields: (t) => ({
    rule: t.exposeString("rule", {
      nullable: true,
      description: "The rule whose split this is (its name or number); null: the link's own.",
    }),
    variants: t.expose("variants", { type: [VariantResultRef] }),
    enoughData: t.exposeBoolean("enoughData", {
      description: "False while a variant has under 100 views.",
    }),
  }),
});

LinkRef.implement({
  description: "A link, as REST's Link object with camelCase names, and the managed link's " +
    "lifecycle. `metrics` and `analytics` take analytics.read (the viewer role, an API key " +
    "with analytics:read, or the admin token), " +
    "whichever field the link was reached through.",
  fields: (t) => ({
    id: t.exposeInt("id"),
    title: t.exposeString("title"),
    subtitle: t.exposeString("subtitle"),
    path: t.exposeString("path"),
    accessPath: t.exposeString("accessPath"),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    generatedFromPlatform: t.exposeString("generatedFromPlatform"),
    data: t.expose("data", { type: "JSONObject" }),
    sdkGenerated: t.exposeBoolean("sdkGenerated"),
    tags: t.exposeStringList("tags"),
    active: t.exposeBoolean("active"),
    trackingCampaign: t.exposeString("trackingCampaign", { nullable: true }),
    trackingSource: t.exposeString("trackingSource", { nullable: true }),
    trackingMedium: t.exposeString("trackingMedium", { nullable: true }),
    showPreview: t.exposeBoolean("showPreview"),
    image: t.exposeString("image", { nullable: true }),
    iosCustomRedirect: t.expose("iosCustomRedirect", { type: RedirectRef }),
    androidCustomRedirect: t.expose("androidCustomRedirect", { type: RedirectRef }),
    desktopCustomRedirect: t.expose("desktopCustomRedirect", { type: RedirectRef }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    state: t.field({
      type: LinkStateEnum,
      resolve: (link, _args, ctx) => linkStateOf(link, ctx),
    }),
    archived: t.exposeBoolean("archived"),
    expiresAt: t.expose("expiresAt", { type: "DateTime", nullable: true }),
    maxViews: t.exposeInt("maxViews", {
      nullable: true,
      description: "The link expires once this many views were counted; null: no limit.",
    }),
    expiredUrl: t.exposeString("expiredUrl", {
      nullable: true,
      description: "Where an expired link redirects; null: a 410 page.",
    }),
    rules: t.expose("rules", {
      type: [LinkRuleRef],
      description: "Tried in order; the first whose conditions all hold decides the hit.",
    }),
    split: t.expose("split", {
      type: [SplitVariantRef],
      nullable: true,
      description: "The split of every hit no rule took.",
    }),
    forwardQuery: t.exposeBoolean("forwardQuery"),
    appendUtm: t.exposeBoolean("appendUtm"),
    passClickId: t.exposeBoolean("passClickId", {
      description: "Whether web destinations get the view's click id as the query parameter " +
        "`click_id`.",
    }),
    passwordProtected: t.exposeBoolean("passwordProtected"),
    splitResults: t.field({
      type: SplitResultsRef,
      nullable: true,
      description: "A split's results (loaded for a whole page at once): the link's own split, " +
        "or `rule`'s (a name or 1-based number); null when the link has no split.",
      args: { rule: t.arg.string() },
      resolve: (link, args, ctx, info) => linkSplitResults(link, args.rule, ctx, info),
    }),
    metrics: t.field({
      type: LinkMetricsRef,
      description: "The link's lifetime counters (loaded for a whole page at once).",
      resolve: (link, _args, ctx) => linkMetrics(link, ctx),
    }),
    analytics: t.field({
      type: AnalyticsRef,
      description: "The link's analytics (loaded for a whole page at once).",
      args: analyticsArgs(t, LinkAnalyticsFilter),
      resolve: (link, args, ctx, info) => linkAnalytics(link, args as AnalyticsArgs, ctx, info),
    }),
  }),
});

export const RedirectInput = builder.inputType("RedirectInput", {
  fields: (t) => ({
    url: t.string(),
    openAppIfInstalled: t.boolean(),
  }),
});

export const SplitVariantInput = builder.inputType("SplitVariantInput", {
  fields: (t) => ({
    url: t.string({ required: true }),
    weight: t.int({ required: true, description: "1 to 1000" }),
  }),
});

export const DesktopRedirectInput = builder.inputType("DesktopRedirectInput", {
  fields: (t) => ({ url: t.string() }),
});

export const GenerateLinkInput = builder.inputType("GenerateLinkInput", {
  fields: (t) => ({
    title: t.string(),
    subtitle: t.string(),
    data: t.field({ type: "JSONObject" }),
    tags: t.stringList(),
    image: t.string(),
    iosCustomRedirect: t.field({ type: RedirectInput }),
    androidCustomRedirect: t.field({ type: RedirectInput }),
    desktopCustomRedirect: t.field({ type: DesktopRedirectInput }),
    showPreviewIos: t.boolean(),
    showPreviewAndroid: t.boolean(),
    trackingCampaign: t.string(),
    trackingSource: t.string(),
    trackingMedium: t.string(),
  }),
});

const GeneratedLink = builder.objectRef<{ url: string; link: LinkNode }>("GeneratedLink").implement(
  {
    fields: (t) => ({
      url: t.exposeString("url"),
      link: t.expose("link", { type: LinkRef }),
    }),
  },
);

builder.queryField("link", (t) =>
  t.field({
    type: LinkRef,
    nullable: true,
    description: "The link at `path` in the environment of the SDK headers; null if none.",
    args: { path: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx, info) => linkByPath(ctx, args.path, info),
  }));

builder.mutationField("generateLink", (t) =>
  t.field({
    type: GeneratedLink,
    args: { input: t.arg({ type: GenerateLinkInput, required: true }) },
    resolve: (_root, args, ctx) => generateLink(ctx, args.input),
  }));
