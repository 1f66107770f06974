// The objects GraphQL's types are built from, with the schema's own field names. graphql-jit
// compiles a field read under its own name to a property access; a field read under another
// name (REST's `access_path` as `accessPath`) takes a resolver call and a fresh
// GraphQLResolveInfo per object and field, which on a 1000-event page was most of the
// execution. Each service object is mapped once here, and every schema field exposes its own
// name.
import type { FeedEnvelope, Purchase } from "../services/feed/envelope.ts";
import {
  accessPath,
  type LinkColumn,
  type LinkRow,
  type Redirect,
  showsPreview,
} from "../services/links/links.ts";
import { type LinkState, linkState } from "../services/links/manage.ts";
import type { GraphQLResolveInfo } from "graphql";
import type { LinkRule } from "../services/links/rules.ts";

export interface RedirectNode {
  url: string | null;
  openAppIfInstalled: boolean | null;
}

/**
 * REST's Link object, camelCased, with the managed link's lifecycle (`createdAt`, `state`, …).
 * `environmentId` is no field: the admin graph's fields below a link (`metrics`, `analytics`)
 * are authorised for it.
 */
export interface LinkNode {
  environmentId: number;
  id: number;
  title: string;
  subtitle: string;
  path: string;
  accessPath: string;
  updatedAt: string;
  generatedFromPlatform: string;
  data: Record<string, unknown>;
  sdkGenerated: boolean;
  tags: string[];
  active: boolean;
  trackingCampaign: string | null;
  trackingSource: string | null;
  trackingMedium: string | null;
  showPreview: boolean;
  image: string | null;
  iosCustomRedirect: RedirectNode;
  androidCustomRedirect: RedirectNode;
  desktopCustomRedirect: RedirectNode;
  createdAt: string;
  archived: boolean;
  expiresAt: string | null;
  maxViews: number | null;
  expiredUrl: string | null;
  /**
   * Null when the row it was made from did not carry the views counted toward `maxViews` (the
   * SDK's lookup): Link.state then reads them (schema/link.ts).
   */
  state: LinkState | null;
  rules: LinkRuleNode[];
  split: SplitVariantNode[] | null;
  forwardQuery: boolean;
  appendUtm: boolean;
  passClickId: boolean;
  passwordProtected: boolean;
}

export interface SplitVariantNode {
  url: string;
  weight: number;
}

/** A rule as stored: `when` keeps the REST names (`referrer_host`), as JSON. */
export interface LinkRuleNode {
  name: string | null;
  when: Record<string, unknown>;
  url: string | null;
  split: SplitVariantNode[] | null;
}

const ruleNode = (r: LinkRule): LinkRuleNode => ({
  name: r.name ?? null,
  when: { ...r.when },
  url: r.url ?? null,
  split: r.split ?? null,
});

const redirectNode = (r: Redirect): RedirectNode => ({
  url: r.url ?? null,
  openAppIfInstalled: r.open_app_if_installed ?? null,
});

export type LinkField = Exclude<keyof LinkNode, "environmentId">;

/** What a link node is made from: a row of links, with its counters' limited views if read. */
export type LinkSource = LinkRow & { limited_views?: number };

/** Each Link field: the columns it is made from, and its value (REST's toLink, camelCased). */
const LINK_FIELDS: {
  [K in LinkField]: {
    columns: readonly LinkColumn[];
    value: (row: LinkSource, linkBaseUrl: string, now: Date) => LinkNode[K];
  };
} = {
  id: { columns: ["id"], value: (r) => r.id },
  title: { columns: ["title"], value: (r) => r.title },
  subtitle: { columns: ["subtitle"], value: (r) => r.subtitle },
  path: { columns: ["path"], value: (r) => r.path },
  accessPath: { columns: ["path", "link_domain"], value: (r, base) => accessPath(base, r) },
  updatedAt: { columns: ["updated_at"], value: (r) => r.updated_at.toISOString() },
  generatedFromPlatform: {
    columns: ["generated_from_platform"],
    value: (r) => r.generated_from_platform,
  },
  data: { columns: ["data"], value: (r) => r.data },
  sdkGenerated: { columns: ["sdk_generated"], value: (r) => r.sdk_generated },
  tags: { columns: ["tags"], value: (r) => r.tags.map(String) },
  active: { columns: ["active"], value: (r) => r.active },
  trackingCampaign: { columns: ["tracking_campaign"], value: (r) => r.tracking_campaign },
  trackingSource: { columns: ["tracking_source"], value: (r) => r.tracking_source },
  trackingMedium: { columns: ["tracking_medium"], value: (r) => r.tracking_medium },
  showPreview: {
    columns: ["show_preview_ios", "show_preview_android"],
    value: (r) => showsPreview(r),
  },
  image: { columns: ["image"], value: (r) => r.image },
  iosCustomRedirect: {
    columns: ["ios_custom_redirect"],
    value: (r) => redirectNode(r.ios_custom_redirect),
  },
  androidCustomRedirect: {
    columns: ["android_custom_redirect"],
    value: (r) => redirectNode(r.android_custom_redirect),
  },
  desktopCustomRedirect: {
    columns: ["desktop_custom_redirect"],
    value: (r) => redirectNode(r.desktop_custom_redirect),
  },
  createdAt: { columns: ["created_at"], value: (r) => r.created_at.toISOString() },
  archived: { columns: ["archived"], value: (r) => r.archived },
  expiresAt: { columns: ["expires_at"], value: (r) => r.expires_at?.toISOString() ?? null },
  maxViews: { columns: ["max_views"], value: (r) => r.max_views },
  expiredUrl: { columns: ["expired_url"], value: (r) => r.expired_url },
  state: {
    columns: ["archived", "active", "expires_at", "max_views", "limited_views"],
    value: (r, _base, now) =>
      r.limited_views === undefined
        ? null
        : linkState({ ...r, limited_views: r.limited_views }, now),
  },
  rules: { columns: ["rules"], value: (r) => (r.rules ?? []).map(ruleNode) },
  split: { columns: ["split"], value: (r) => r.split },
  forwardQuery: { columns: ["forward_query"], value: (r) => r.forward_query },
  appendUtm: { columns: ["append_utm"], value: (r) => r.append_utm },
  passClickId: { columns: ["pass_click_id"], value: (r) => r.pass_click_id },
  passwordProtected: { columns: ["password_hash"], value: (r) => r.password_hash !== null },
};

const ALL_LINK_FIELDS = Object.keys(LINK_FIELDS) as LinkField[];

/** The Link fields among these GraphQL field names (`__typename` and the like are not). */
export function linkFields(names: Iterable<string>): LinkField[] {
  return [...names].filter((n): n is LinkField => Object.hasOwn(LINK_FIELDS, n));
}

/**
 * The columns to read for these fields; the id always, which is what links are matched by, and
 * the environment, which the fields below a link are authorised for.
 */
export function linkColumns(fields: readonly LinkField[]): LinkColumn[] {
  return [
    ...new Set<LinkColumn>([
      "id",
      "environment_id",
      ...fields.flatMap((f) => LINK_FIELDS[f].columns),
    ]),
  ];
}

/**
 * A link as GraphQL's Link, with every field or only `fields`, from a row holding at least
 * their columns (see linkColumns). Fields left out are absent: only a query that does not
 * select them is ever given such a node. A feed page's links for `link { path title }` are
 * read and built this way at a fraction of the full row's cost.
 */
export function linkNode(
  row: LinkSource,
  linkBaseUrl: string,
  now: Date,
  fields: readonly LinkField[] = ALL_LINK_FIELDS,
): LinkNode {
  // The id and environment whatever is selected: the fields below a link read by them.
  const node: Partial<Record<keyof LinkNode, unknown>> = {
    environmentId: row.environment_id,
    id: row.id,
  };
  for (const field of fields) node[field] = LINK_FIELDS[field].value(row, linkBaseUrl, now);
  return node as LinkNode;
}

export interface PurchaseNode {
  transactionId: string;
  version: number;
  amount: number;
  currency: string;
  productId: string;
  store: string;
}

/** Where an event's link is read from: the request's loaders, or a subscription page's. */
export interface LinkReader {
  linkFor(info: GraphQLResolveInfo, id: number): LinkNode | null | Promise<LinkNode | null>;
}

/**
 * A feed envelope as GraphQL's FeedEvent: absent fields are null. `link` is resolved by the
 * request's link loader from `linkId` (resolvers/loaders.ts); a subscription's page brings
 * its own loaders (`scope`).
 */
export interface FeedEventNode {
  schemaVersion: number;
  id: string;
  type: FeedEnvelope["type"];
  name: string | null;
  occurredAt: string;
  project: FeedEnvelope["project"];
  device: Record<string, unknown> | null;
  user: Record<string, unknown> | null;
  /** The attributed link's id, or null when the event has none. */
  linkId: number | null;
  scope: LinkReader | null;
  attribution: Record<string, unknown> | null;
  geo: { country: string } | null;
  purchase: PurchaseNode | null;
  timeSpent: number | null;
}

const purchaseNode = (p: Purchase): PurchaseNode => ({
  transactionId: p.transaction_id,
  version: p.version,
  amount: p.amount,
  currency: p.currency,
  productId: p.product_id,
  store: p.store,
});

export function feedEventNode(
  e: FeedEnvelope,
  linkId: number | null,
  scope: LinkReader | null = null,
): FeedEventNode {
  return {
    schemaVersion: e.schema_version,
    id: e.id,
    type: e.type,
    name: e.name ?? null,
    occurredAt: e.occurred_at,
    project: e.project,
    device: e.device ?? null,
    user: e.user ?? null,
    linkId,
    scope,
    attribution: e.attribution ?? null,
    geo: e.geo ?? null,
    purchase: e.purchase ? purchaseNode(e.purchase) : null,
    timeSpent: e.time_spent ?? null,
  };
}
