// The objects GraphQL's types are built from, with the schema's own field names. graphql-jit
// compiles a field read under its own name to a property access; a field read under another
// name (REST's `access_path` as `accessPath`) takes a resolver call and a fresh
// GraphQLResolveInfo per object and field, which on a 1000-event page was most of the
// execution. Each service object is mapped once here, and every schema field exposes its own
// name.
import type { FeedEnvelope, Purchase } from "../services/feed_envelope.ts";
import type { Link, Redirect } from "../services/links.ts";

export interface RedirectNode {
  url: string | null;
  openAppIfInstalled: boolean | null;
}

/** REST's Link object, camelCased. */
export interface LinkNode {
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
}

const redirectNode = (r: Redirect): RedirectNode => ({
  url: r.url ?? null,
  openAppIfInstalled: r.open_app_if_installed ?? null,
});

export function linkNode(link: Link): LinkNode {
  return {
    id: link.id,
    title: link.title,
    subtitle: link.subtitle,
    path: link.path,
    accessPath: link.access_path,
    updatedAt: link.updated_at,
    generatedFromPlatform: link.generated_from_platform,
    data: link.data,
    sdkGenerated: link.sdk_generated,
    tags: link.tags.map(String),
    active: link.active,
    trackingCampaign: link.tracking_campaign,
    trackingSource: link.tracking_source,
    trackingMedium: link.tracking_medium,
    showPreview: link.show_preview,
    image: link.image,
    iosCustomRedirect: redirectNode(link.ios_custom_redirect),
    androidCustomRedirect: redirectNode(link.android_custom_redirect),
    desktopCustomRedirect: redirectNode(link.desktop_custom_redirect),
  };
}

export interface PurchaseNode {
  transactionId: string;
  version: number;
  amount: number;
  currency: string;
  productId: string;
  store: string;
}

/** A feed envelope as GraphQL's FeedEvent: absent fields are null, the link is the full one. */
export interface FeedEventNode {
  schemaVersion: number;
  id: string;
  type: FeedEnvelope["type"];
  name: string | null;
  occurredAt: string;
  project: FeedEnvelope["project"];
  device: Record<string, unknown> | null;
  user: Record<string, unknown> | null;
  link: LinkNode | null;
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

export function feedEventNode(e: FeedEnvelope, link: LinkNode | null): FeedEventNode {
  return {
    schemaVersion: e.schema_version,
    id: e.id,
    type: e.type,
    name: e.name ?? null,
    occurredAt: e.occurred_at,
    project: e.project,
    device: e.device ?? null,
    user: e.user ?? null,
    link,
    attribution: e.attribution ?? null,
    geo: e.geo ?? null,
    purchase: e.purchase ? purchaseNode(e.purchase) : null,
    timeSpent: e.time_spent ?? null,
  };
}
