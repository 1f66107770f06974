import {
  eventFeed,
  type EventFeedConnection,
  type EventFeedEdge,
  feedEventLink,
} from "../resolvers/feed.ts";
import type { FeedEventNode, PurchaseNode } from "../resolvers/nodes.ts";
import { DEFAULT_FEED_LIMIT, MAX_FEED_LIMIT } from "../services/feed/feed.ts";
import { FEED_EVENT_TYPES, type FeedEnvelope } from "../services/feed/envelope.ts";
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

// Every field exposes its own name: resolvers/nodes.ts says why.
const PurchaseRef = builder.objectRef<PurchaseNode>("Purchase").implement({
  fields: (t) => ({
    transactionId: t.exposeString("transactionId"),
    version: t.exposeInt("version"),
    amount: t.expose("amount", { type: "SafeInt", description: "Minor currency units." }),
    currency: t.exposeString("currency"),
    productId: t.exposeString("productId"),
    store: t.exposeString("store"),
  }),
});

const FeedEvent = builder.objectRef<FeedEventNode>("FeedEvent").implement({
  fields: (t) => ({
    schemaVersion: t.exposeInt("schemaVersion"),
    id: t.exposeString("id"),
    type: t.expose("type", { type: FeedEventType }),
    name: t.exposeString("name", { nullable: true }),
    occurredAt: t.expose("occurredAt", { type: "DateTime" }),
    project: t.expose("project", { type: FeedProject }),
    device: t.expose("device", { type: "JSONObject", nullable: true }),
    user: t.expose("user", { type: "JSONObject", nullable: true }),
    link: t.field({
      type: LinkRef,
      nullable: true,
      description: "The full attributed link, loaded for the whole page at once.",
      resolve: (event, _args, ctx, info) => feedEventLink(event, ctx, info),
    }),
    attribution: t.expose("attribution", { type: "JSONObject", nullable: true }),
    geo: t.expose("geo", { type: Geo, nullable: true }),
    purchase: t.expose("purchase", { type: PurchaseRef, nullable: true }),
    timeSpent: t.exposeInt("timeSpent", {
      nullable: true,
      description: "A session's length in whole seconds.",
    }),
  }),
});

export const EventFeedEdgeRef = builder.objectRef<EventFeedEdge>("EventFeedEdge")
  .implement({
    fields: (t) => ({
      cursor: t.exposeString("cursor", { description: "A cursor right after this event." }),
      node: t.expose("node", { type: FeedEvent }),
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
      edges: t.expose("edges", { type: [EventFeedEdgeRef] }),
      pageInfo: t.expose("pageInfo", { type: FeedPageInfo }),
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
    resolve: (_root, args, ctx, info) =>
      eventFeed(ctx, {
        projectId: String(args.projectId),
        first: args.first,
        after: args.after,
        eventTypes: args.eventTypes,
      }, info),
  }));
