// The admin graph: environment(projectId) with its links, one link and analytics; the link
// mutations. Authorised per field through the access table (resolvers/authorize.ts).
import type { AnalyticsArgs } from "../resolvers/analytics.ts";
import { environmentAnalytics } from "../resolvers/analytics.ts";
import {
  environmentById,
  environmentLink,
  environmentLinks,
  type EnvironmentNode,
  environmentProject,
  type LinkConnectionNode,
  type ProjectNode,
  setAttributionSettingsMutation,
  setReportingCurrencyMutation,
  setSdkLimitsMutation,
} from "../resolvers/environment.ts";
import {
  createLinkMutation,
  deleteLinkMutation,
  type LinkInputArgs,
  updateLinkMutation,
} from "../resolvers/manage.ts";
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from "../inputs/links.ts";
import type { LinkOrderField } from "../services/links/manage.ts";
import { ATTRIBUTION_MODELS, type AttributionModel } from "../services/projects/projects.ts";
import { analyticsArgs, AnalyticsFilter } from "./analytics.ts";
import { builder } from "./builder.ts";
import { DesktopRedirectInput, LinkStateEnum, RedirectInput, SplitVariantInput } from "./link.ts";
import { AnalyticsRef, LinkRef, upperEnum } from "./refs.ts";

const SdkLimits = builder.objectRef<ProjectNode["sdkLimits"]>("SdkLimits").implement({
  description: "What the project key may write a minute (a link or an event each); over a " +
    "limit SDK writes are refused with RATE_LIMITED.",
  fields: (t) => ({
    perKey: t.exposeInt("perKey", { description: "For the project key, from anywhere." }),
    perAddress: t.exposeInt("perAddress", { description: "From one client address." }),
  }),
});

const AttributionModelEnum = builder.enumType("AttributionModel", {
  description: "FIRST_TOUCH: the link of the user's first attributed event in the window (the " +
    "default); LAST_TOUCH: the latest.",
  values: upperEnum<AttributionModel>(ATTRIBUTION_MODELS),
});

const Project = builder.objectRef<ProjectNode>("Project").implement({
  fields: (t) => ({
    sdkLimits: t.expose("sdkLimits", { type: SdkLimits }),
    id: t.exposeID("id", { description: "The project's hashid." }),
    name: t.exposeString("name"),
    enterprise: t.exposeBoolean("enterprise"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    linkDomain: t.exposeString("linkDomain", {
      nullable: true,
      description: "The host its links are served on; null: the instance's own.",
    }),
    reportingCurrency: t.exposeString("reportingCurrency", {
      description: "ISO 4217: the currency revenue is summed in, in its minor units; purchases " +
        "in other currencies are converted at the ECB's rate of their day.",
    }),
    attributionWindowDays: t.exposeInt("attributionWindowDays", {
      description: "How long a click or a user's touch attributes later events: 1 to 90 days " +
        "(30 by default).",
    }),
    attributionModel: t.expose("attributionModel", {
      type: AttributionModelEnum,
      description: "Which of a user's touches in the window an event with only the user's id " +
        "goes to.",
    }),
  }),
});

const LinkOrderFieldEnum = builder.enumType("LinkOrderField", {
  values: upperEnum<LinkOrderField>(["created_at", "updated_at", "views"]),
});

const OrderDirection = builder.enumType("OrderDirection", {
  values: upperEnum(["asc", "desc"] as const),
});

const LinkOrder = builder.inputType("LinkOrder", {
  description: "Links' order; the id breaks ties. Default: CREATED_AT DESC.",
  fields: (t) => ({
    field: t.field({ type: LinkOrderFieldEnum, required: true }),
    direction: t.field({ type: OrderDirection, required: true, defaultValue: "desc" }),
  }),
});

const LinkFilter = builder.inputType("LinkFilter", {
  description: "Only links that match every given field. Without `state`, archived links are " +
    "left out.",
  fields: (t) => ({
    q: t.string({ description: "Title, subtitle or path contains this (any case)." }),
    tag: t.string(),
    campaign: t.string(),
    source: t.string(),
    medium: t.string(),
    state: t.field({ type: LinkStateEnum }),
    sdkGenerated: t.boolean(),
  }),
});

const LinkEdge = builder.objectRef<LinkConnectionNode["edges"][number]>("LinkEdge").implement({
  fields: (t) => ({
    cursor: t.exposeString("cursor", { description: "`after` this reads on past this link." }),
    node: t.expose("node", { type: LinkRef }),
  }),
});

const PageInfo = builder.objectRef<LinkConnectionNode["pageInfo"]>("PageInfo").implement({
  fields: (t) => ({
    hasNextPage: t.exposeBoolean("hasNextPage"),
    hasPreviousPage: t.exposeBoolean("hasPreviousPage", { description: "Always false." }),
    startCursor: t.exposeString("startCursor", { nullable: true }),
    endCursor: t.exposeString("endCursor", { nullable: true }),
  }),
});

const LinkConnection = builder.objectRef<LinkConnectionNode>("LinkConnection").implement({
  fields: (t) => ({
    edges: t.expose("edges", { type: [LinkEdge] }),
    pageInfo: t.expose("pageInfo", { type: PageInfo }),
  }),
});

export const Environment = builder.objectRef<EnvironmentNode>("Environment").implement({
  description: "A project's production or test environment, as the admin API's " +
    "/api/v1/projects/:project_id routes see it.",
  fields: (t) => ({
    projectId: t.exposeID("projectId", { description: "The numeric environment ID." }),
    name: t.exposeString("name", { description: "production or test." }),
    project: t.field({
      type: Project,
      resolve: (env, _args, ctx) => environmentProject(ctx, env),
    }),
    links: t.field({
      type: LinkConnection,
      description: "The environment's links, as the admin API lists them: a stable cursor " +
        "order, whatever is added meanwhile.",
      args: {
        first: t.arg.int({
          defaultValue: DEFAULT_LIST_LIMIT,
          description: `Links per page, 1 to ${MAX_LIST_LIMIT}.`,
        }),
        after: t.arg.string(),
        filter: t.arg({ type: LinkFilter }),
        orderBy: t.arg({ type: LinkOrder }),
      },
      resolve: (env, args, ctx) => environmentLinks(ctx, env, args),
    }),
    link: t.field({
      type: LinkRef,
      nullable: true,
      description: "The link at `path` in this environment, in any state; null if none.",
      args: { path: t.arg.string({ required: true }) },
      resolve: (env, args, ctx) => environmentLink(ctx, env, args.path),
    }),
    analytics: t.field({
      type: AnalyticsRef,
      description: "The environment's analytics, as REST's analytics route.",
      args: analyticsArgs(t, AnalyticsFilter),
      resolve: (env, args, ctx) =>
        environmentAnalytics(ctx, env.environmentId, args as AnalyticsArgs),
    }),
  }),
});

builder.queryField("environment", (t) =>
  t.field({
    type: Environment,
    nullable: true,
    description: "The environment with this numeric ID; null when there is none or the caller " +
      "may use none of its fields. Takes an API key of the environment, the admin token " +
      "(Authorization: Bearer) or a member's dashboard session.",
    args: { projectId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => environmentById(ctx, String(args.projectId)),
  }));

/** The text fields both link inputs have. */
const TEXT_FIELDS = [
  "title",
  "subtitle",
  "image",
  "trackingCampaign",
  "trackingSource",
  "trackingMedium",
] as const;

/** Rules, split, forwarding and password, as REST takes them (rules as JSON objects). */
// deno-lint-ignore no-explicit-any
function decisionInputs(t: any) {
  return {
    rules: t.field({
      type: ["JSONObject"],
      description: "Up to 50 rules as REST takes them: {name, when: {country, language, " +
        "platform, os, query, referrer_host, ip, from, until}, url | split}.",
    }),
    split: t.field({ type: [SplitVariantInput] }),
    forwardQuery: t.boolean(),
    appendUtm: t.boolean(),
    passClickId: t.boolean({
      description: "Add the view's click id to web destinations as `click_id`.",
    }),
    password: t.string({ description: "Write-only; hashed. null removes it." }),
  };
}

const CreateLinkInput = builder.inputType("CreateLinkInput", {
  description: "generateLink's fields, and a chosen path and expiry.",
  fields: (t) => ({
    ...Object.fromEntries(TEXT_FIELDS.map((name) => [name, t.string()])),
    data: t.field({ type: "JSONObject" }),
    tags: t.stringList(),
    iosCustomRedirect: t.field({ type: RedirectInput }),
    androidCustomRedirect: t.field({ type: RedirectInput }),
    desktopCustomRedirect: t.field({ type: DesktopRedirectInput }),
    showPreviewIos: t.boolean(),
    showPreviewAndroid: t.boolean(),
    path: t.string({
      description: "1 to 64 of A-Z a-z 0-9 - _, never used by a link before. Default: random.",
    }),
    expiresAt: t.field({ type: "DateTime" }),
    maxViews: t.int({ description: "Expire once this many views were counted." }),
    expiredUrl: t.string({ description: "Where an expired link redirects (else a 410 page)." }),
    ...decisionInputs(t),
  }),
});

const UpdateLinkInput = builder.inputType("UpdateLinkInput", {
  description: "The fields to change: an absent field stays as it is, null clears an optional " +
    "one (a text to empty, data to {}, tags to [], a redirect to none, the rest to null).",
  fields: (t) => ({
    ...Object.fromEntries(TEXT_FIELDS.map((name) => [name, t.string()])),
    data: t.field({ type: "JSONObject" }),
    tags: t.stringList(),
    iosCustomRedirect: t.field({ type: RedirectInput }),
    androidCustomRedirect: t.field({ type: RedirectInput }),
    desktopCustomRedirect: t.field({ type: DesktopRedirectInput }),
    showPreviewIos: t.boolean(),
    showPreviewAndroid: t.boolean(),
    active: t.boolean(),
    archived: t.boolean(),
    expiresAt: t.field({ type: "DateTime" }),
    maxViews: t.int(),
    expiredUrl: t.string(),
    ...decisionInputs(t),
  }),
});

const SdkLimitsInput = builder.inputType("SdkLimitsInput", {
  description: "Writes a minute, at least 1,000; absent: unchanged; null: the default.",
  fields: (t) => ({ perKey: t.int(), perAddress: t.int() }),
});

builder.mutationField("setSdkLimits", (t) =>
  t.field({
    type: Project,
    description: "As PATCH /api/v1/admin/projects/:hashid with sdk_limits, for the project of " +
      "this environment. Takes the admin role on the project, or an API key with the `admin` " +
      "scope.",
    args: {
      projectId: t.arg.id({ required: true }),
      input: t.arg({ type: SdkLimitsInput, required: true }),
    },
    resolve: (_root, args, ctx) => setSdkLimitsMutation(ctx, args.projectId, args.input),
  }));

builder.mutationField("setReportingCurrency", (t) =>
  t.field({
    type: Project,
    description: "As PATCH /api/v1/admin/projects/:hashid with reporting_currency, for the " +
      "project of this environment: every purchase of the project is reconverted. Takes the " +
      "admin role on the project, or an API key with the `admin` scope.",
    args: {
      projectId: t.arg.id({ required: true }),
      currency: t.arg.string({ required: true, description: "An ISO 4217 code such as EUR." }),
    },
    resolve: (_root, args, ctx) => setReportingCurrencyMutation(ctx, args.projectId, args.currency),
  }));

const AttributionSettingsInput = builder.inputType("AttributionSettingsInput", {
  description: "Absent: unchanged.",
  fields: (t) => ({
    windowDays: t.int({ description: "1 to 90." }),
    model: t.field({ type: AttributionModelEnum }),
  }),
});

builder.mutationField("setAttributionSettings", (t) =>
  t.field({
    type: Project,
    description: "As PATCH /api/v1/admin/projects/:hashid with attribution_window_days and " +
      "attribution_model, for the project of this environment: events ingested from then on " +
      "are attributed under them. Takes the admin role on the project, or an API key with the " +
      "`admin` scope.",
    args: {
      projectId: t.arg.id({ required: true }),
      input: t.arg({ type: AttributionSettingsInput, required: true }),
    },
    resolve: (_root, args, ctx) => setAttributionSettingsMutation(ctx, args.projectId, args.input),
  }));

builder.mutationField("createLink", (t) =>
  t.field({
    type: LinkRef,
    description: "As POST /api/v1/projects/:project_id/links. Takes the editor role, or an API " +
      "key with links:write.",
    args: {
      projectId: t.arg.id({ required: true }),
      input: t.arg({ type: CreateLinkInput, required: true }),
    },
    resolve: (_root, args, ctx) =>
      createLinkMutation(ctx, args.projectId, args.input as LinkInputArgs),
  }));

builder.mutationField("updateLink", (t) =>
  t.field({
    type: LinkRef,
    description: "As PATCH /api/v1/projects/:project_id/links/:link_path: updatedAt moves. " +
      "Takes the editor role, or an API key with links:write.",
    args: {
      projectId: t.arg.id({ required: true }),
      path: t.arg.string({ required: true }),
      input: t.arg({ type: UpdateLinkInput, required: true }),
    },
    resolve: (_root, args, ctx) =>
      updateLinkMutation(ctx, args.projectId, args.path, args.input as LinkInputArgs),
  }));

builder.mutationField("deleteLink", (t) =>
  t.field({
    type: "Boolean",
    description: "As DELETE /api/v1/projects/:project_id/links/:link_path: the link and its " +
      "counters go, and its path is never given again. Takes the admin role, or an API key " +
      "with links:write.",
    args: {
      projectId: t.arg.id({ required: true }),
      path: t.arg.string({ required: true }),
    },
    resolve: (_root, args, ctx) => deleteLinkMutation(ctx, args.projectId, args.path),
  }));
