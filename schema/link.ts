import type { AnalyticsArgs } from "../resolvers/analytics.ts";
import { linkAnalytics, linkMetrics, linkStateOf } from "../resolvers/link_fields.ts";
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
