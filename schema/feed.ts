import {
  eventFeed,
  type EventFeedConnection,
  type EventFeedEdge,
  feedEventLink,
} from "../resolvers/feed.ts";
import { DEFAULT_FEED_LIMIT, MAX_FEED_LIMIT } from "../services/feed.ts";
import { FEED_EVENT_TYPES, type FeedEnvelope, type Purchase } from "../services/feed_envelope.ts";
import { builder } from "./builder.ts";
import { LinkRef } from "./link.ts";

/**
 * The event types, as REST spells them. New types may be added within schema_version 1: a
 * client generated from this schema should keep an unknown value readable (for example
 * graphql-codegen's `futureProofEnums`).
 */
export const FeedEventType = builder.enumType("FeedEventType", {
  description: "An event's type, spelt as in REST's `type` and `event_types[]`.",
  values: FEED_EVENT_TYPES,
});

const FeedProject = builder.objectRef<FeedEnvelope["project"]>("FeedProject").implement({
  fields: (t) => ({
    id: t.exposeString("id", { description: "The project's hashid." }),
    test: t.exposeBoolean("test", { description: "True for the test environment." }),
  }),
});

const Geo = builder.objectRef<{ country: string }>("Geo").implement({
  description: "Country-level location only.",
  fields: (t) => ({ country: t.exposeString("country") }),
});

const PurchaseRef = builder.objectRef<Purchase>("Purchase").implement({
  fields: (t) => ({
    transactionId: t.exposeString("transaction_id"),
    version: t.exposeInt("version"),
    amount: t.expose("amount", { type: "SafeInt", description: "Minor currency units." }),
    currency: t.exposeString("currency"),
    productId: t.exposeString("product_id"),
    store: t.exposeString("store"),
  }),
});

const FeedEvent = builder.objectRef<FeedEnvelope>("FeedEvent").implement({
  fields: (t) => ({
    schemaVersion: t.exposeInt("schema_version"),
    id: t.exposeString("id"),
    type: t.expose("type", { type: FeedEventType }),
    name: t.string({ nullable: true, resolve: (e) => e.name ?? null }),
    occurredAt: t.field({ type: "DateTime", resolve: (e) => e.occurred_at }),
    project: t.field({ type: FeedProject, resolve: (e) => e.project }),
    device: t.field({ type: "JSONObject", nullable: true, resolve: (e) => e.device ?? null }),
    user: t.field({ type: "JSONObject", nullable: true, resolve: (e) => e.user ?? null }),
    link: t.field({
      type: LinkRef,
      nullable: true,
      description: "The full attributed link, loaded for the whole page at once.",
      resolve: (e, _args, ctx) => feedEventLink(ctx, e),
    }),
    attribution: t.field({
      type: "JSONObject",
      nullable: true,
      resolve: (e) => e.attribution ?? null,
    }),
    geo: t.field({ type: Geo, nullable: true, resolve: (e) => e.geo ?? null }),
    purchase: t.field({ type: PurchaseRef, nullable: true, resolve: (e) => e.purchase ?? null }),
    timeSpent: t.int({
      nullable: true,
      description: "A session's length in whole seconds.",
      resolve: (e) => e.time_spent ?? null,
    }),
  }),
});

export const EventFeedEdgeRef = builder.objectRef<EventFeedEdge>("EventFeedEdge")
  .implement({
    fields: (t) => ({
      cursor: t.string({
        description: "A cursor right after this event.",
        resolve: (e) => e.cursor(),
      }),
      node: t.field({ type: FeedEvent, resolve: (e) => e.node }),
    }),
  });

const FeedPageInfo = builder.objectRef<{ endCursor: string; hasNextPage: boolean }>(
  "FeedPageInfo",
).implement({
  fields: (t) => ({
    endCursor: t.exposeString("endCursor", { description: "Exactly REST's next_after." }),
    hasNextPage: t.exposeBoolean("hasNextPage"),
  }),
});

const EventFeedConnectionRef = builder.objectRef<EventFeedConnection>("EventFeedConnection")
  .implement({
    fields: (t) => ({
      schemaVersion: t.exposeInt("schemaVersion"),
      edges: t.field({ type: [EventFeedEdgeRef], resolve: (c) => c.edges }),
      pageInfo: t.field({ type: FeedPageInfo, resolve: (c) => c.pageInfo }),
    }),
  });

builder.queryField("eventFeed", (t) =>
  t.field({
    type: EventFeedConnectionRef,
    description: "The captured feed, as REST's event_stream; authorised by `Authorization: " +
      "Bearer est_…` and counted against the same rate limit.",
    args: {
      projectId: t.arg.id({ required: true }),
      first: t.arg.int({
        defaultValue: DEFAULT_FEED_LIMIT,
        description: `Events per page, 1 to ${MAX_FEED_LIMIT}.`,
      }),
      after: t.arg.string(),
      eventTypes: t.arg({ type: [FeedEventType] }),
    },
    resolve: (_root, args, ctx) =>
      eventFeed(ctx, {
        projectId: String(args.projectId),
        first: args.first,
        after: args.after,
        eventTypes: args.eventTypes,
      }),
  }));
