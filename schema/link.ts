import type { Link, Redirect } from "../services/links.ts";
import { generateLink, linkByPath } from "../resolvers/links.ts";
import { builder } from "./builder.ts";

export const RedirectRef = builder.objectRef<Redirect>("Redirect").implement({
  description: "A per-platform redirect as stored.",
  fields: (t) => ({
    url: t.string({ nullable: true, resolve: (r) => r.url ?? null }),
    openAppIfInstalled: t.boolean({
      nullable: true,
      resolve: (r) => r.open_app_if_installed ?? null,
    }),
  }),
});

export const LinkRef = builder.objectRef<Link>("Link").implement({
  description: "A link, as REST's Link object with camelCase names.",
  fields: (t) => ({
    id: t.exposeInt("id"),
    title: t.exposeString("title"),
    subtitle: t.exposeString("subtitle"),
    path: t.exposeString("path"),
    accessPath: t.exposeString("access_path"),
    updatedAt: t.field({ type: "DateTime", resolve: (l) => l.updated_at }),
    generatedFromPlatform: t.exposeString("generated_from_platform"),
    data: t.field({ type: "JSONObject", resolve: (l) => l.data }),
    sdkGenerated: t.exposeBoolean("sdk_generated"),
    tags: t.stringList({ resolve: (l) => l.tags.map(String) }),
    active: t.exposeBoolean("active"),
    trackingCampaign: t.exposeString("tracking_campaign", { nullable: true }),
    trackingSource: t.exposeString("tracking_source", { nullable: true }),
    trackingMedium: t.exposeString("tracking_medium", { nullable: true }),
    showPreview: t.exposeBoolean("show_preview"),
    image: t.exposeString("image", { nullable: true }),
    iosCustomRedirect: t.field({ type: RedirectRef, resolve: (l) => l.ios_custom_redirect }),
    androidCustomRedirect: t.field({
      type: RedirectRef,
      resolve: (l) => l.android_custom_redirect,
    }),
    desktopCustomRedirect: t.field({
      type: RedirectRef,
      resolve: (l) => l.desktop_custom_redirect,
    }),
  }),
});

const RedirectInput = builder.inputType("RedirectInput", {
  fields: (t) => ({
    url: t.string(),
    openAppIfInstalled: t.boolean(),
  }),
});

const DesktopRedirectInput = builder.inputType("DesktopRedirectInput", {
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

const GeneratedLink = builder.objectRef<{ url: string; link: Link }>("GeneratedLink").implement({
  fields: (t) => ({
    url: t.exposeString("url"),
    link: t.field({ type: LinkRef, resolve: (g) => g.link }),
  }),
});

builder.queryField("link", (t) =>
  t.field({
    type: LinkRef,
    nullable: true,
    description: "The link at `path` in the environment of the SDK headers; null if none.",
    args: { path: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => linkByPath(ctx, args.path),
  }));

builder.mutationField("generateLink", (t) =>
  t.field({
    type: GeneratedLink,
    args: { input: t.arg({ type: GenerateLinkInput, required: true }) },
    resolve: (_root, args, ctx) => generateLink(ctx, args.input),
  }));
