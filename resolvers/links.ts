import type { GraphQLResolveInfo } from "graphql";
import { newLinkInput } from "../inputs/links.ts";
import { ApiError } from "../services/errors.ts";
import {
  accessPath,
  createLink,
  getLinkForSdkOrThrow,
  getPlainLinkForSdkOrThrow,
  PLAIN_LINK_COLUMNS,
} from "../services/links/links.ts";
import { type LinkMetricsNode, projectMetricsForGraphQL } from "../services/links/metrics.ts";
import {
  admitSdkWrite,
  authenticateSdk,
  LINK_ENVIRONMENTS,
  METRICS_ENVIRONMENTS,
} from "../services/access/sdk_auth.ts";
import type { GraphQLContext } from "./context.ts";
import { camelPath, withGraphQLNames } from "../graphql/errors.ts";
import { selectedLinkFields } from "./loaders.ts";
import { linkColumns, type LinkField, type LinkNode, linkNode } from "./nodes.ts";

interface RedirectArg {
  url?: string | null;
  openAppIfInstalled?: boolean | null;
}

/** GenerateLinkInput as Pothos hands it over: absent fields are undefined or null. */
export interface GenerateLinkArgs {
  title?: string | null;
  subtitle?: string | null;
  data?: Record<string, unknown> | null;
  tags?: string[] | null;
  image?: string | null;
  iosCustomRedirect?: RedirectArg | null;
  androidCustomRedirect?: RedirectArg | null;
  desktopCustomRedirect?: { url?: string | null } | null;
  showPreviewIos?: boolean | null;
  showPreviewAndroid?: boolean | null;
  trackingCampaign?: string | null;
  trackingSource?: string | null;
  trackingMedium?: string | null;
}

/**
 * REST's lookup (one query, the same checks), with null rather than 404 for a missing link. The
 * node holds the fields the query selects (`info`), not REST's every field: building all of them
 * (dates to strings, three redirects, the access path) was the largest cost of its own in a
 * `link(path) { id path title }` query.
 */
export async function linkByPath(
  ctx: GraphQLContext,
  path: string,
  info: GraphQLResolveInfo,
): Promise<LinkNode | null> {
  const { sql, config, clock } = ctx.deps;
  const { fields } = selectedLinkFields(info);
  try {
    const row = readsPlainColumns(fields)
      ? await getPlainLinkForSdkOrThrow(sql, ctx.sdk, path)
      : await getLinkForSdkOrThrow(sql, ctx.sdk, path);
    return linkNode(row, config.linkBaseUrl, clock.now(), fields);
  } catch (err) {
    if (err instanceof ApiError && err.code === "not_found") return null;
    throw err;
  }
}

/** Whether these fields are made from PLAIN_LINK_COLUMNS only, by the selection's fields. */
const plainFields = new WeakMap<readonly LinkField[], boolean>();

function readsPlainColumns(fields: readonly LinkField[]): boolean {
  let plain = plainFields.get(fields);
  if (plain === undefined) {
    // `state`'s counted views are never in the lookup's row: Link.state reads them itself.
    plain = linkColumns(fields).every((c) => c === "limited_views" || PLAIN_LINK_COLUMNS.has(c));
    plainFields.set(fields, plain);
  }
  return plain;
}

/** REST's metrics items under GraphQL's names: every LinkMetrics field is a property read. */
export async function projectMetrics(ctx: GraphQLContext): Promise<LinkMetricsNode[]> {
  const environment = await authenticateSdk(ctx.deps.sql, ctx.sdk, METRICS_ENVIRONMENTS);
  return await projectMetricsForGraphQL(ctx.deps.sql, environment.id);
}

const redirect = (r: RedirectArg | null | undefined) =>
  r == null
    ? undefined
    : { url: r.url ?? undefined, open_app_if_installed: r.openAppIfInstalled ?? undefined };

/** The same rules as REST's generate_link, with `data` and `tags` typed rather than strings. */
export async function generateLink(
  ctx: GraphQLContext,
  input: GenerateLinkArgs,
): Promise<{ url: string; link: LinkNode }> {
  const { sql, config, clock } = ctx.deps;
  // A write: counted against the project key's limits, as REST's generate_link.
  const environment = await admitSdkWrite(sql, ctx.sdk, LINK_ENVIRONMENTS, {
    address: ctx.clientAddress,
    secret: ctx.deps.cursorSecret,
    weight: 1,
    now: clock.now(),
    logger: ctx.deps.logger,
  });
  // Validated with REST's rules; errors name the field as the client sent it (`input.…`).
  const parse = () =>
    Promise.resolve().then(() =>
      newLinkInput.parse({
        title: input.title ?? undefined,
        subtitle: input.subtitle ?? undefined,
        data: input.data ?? undefined,
        tags: input.tags ?? undefined,
        image: input.image ?? undefined,
        ios_custom_redirect: redirect(input.iosCustomRedirect),
        android_custom_redirect: redirect(input.androidCustomRedirect),
        desktop_custom_redirect: redirect(input.desktopCustomRedirect),
        show_preview_ios: input.showPreviewIos ?? undefined,
        show_preview_android: input.showPreviewAndroid ?? undefined,
        tracking_campaign: input.trackingCampaign ?? undefined,
        tracking_source: input.trackingSource ?? undefined,
        tracking_medium: input.trackingMedium ?? undefined,
      })
    );
  const parsed = await withGraphQLNames((field) => `input.${camelPath(field)}`, parse);
  const row = await createLink(sql, environment.id, parsed);
  return {
    url: accessPath(config.linkBaseUrl, row),
    // A new link: no view counted yet.
    link: linkNode({ ...row, limited_views: 0 }, config.linkBaseUrl, clock.now()),
  };
}
