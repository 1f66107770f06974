import type { LinkNode, RedirectNode } from "../resolvers/nodes.ts";
import { generateLink, linkByPath } from "../resolvers/links.ts";
import { builder } from "./builder.ts";

// Every field exposes its own name: resolvers/nodes.ts says why.
export const RedirectRef = builder.objectRef<RedirectNode>("Redirect").implement({
  description: "A per-platform redirect as stored.",
  fields: (t) => ({
    url: t.exposeString("url", { nullable: true }),
    openAppIfInstalled: t.exposeBoolean("openAppIfInstalled", { nullable: true }),
  }),
});

export const LinkRef = builder.objectRef<LinkNode>("Link").implement({
  description: "A link, as REST's Link object with camelCase names.",
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
    resolve: (_root, args, ctx) => linkByPath(ctx, args.path),
  }));

builder.mutationField("generateLink", (t) =>
  t.field({
    type: GeneratedLink,
    args: { input: t.arg({ type: GenerateLinkInput, required: true }) },
    resolve: (_root, args, ctx) => generateLink(ctx, args.input),
  }));
