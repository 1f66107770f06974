import { subscribeEventFeed } from "../resolvers/live.ts";
import type { EventFeedEdge } from "../resolvers/feed.ts";
import { selectedFields } from "../resolvers/selection.ts";
import { builder } from "./builder.ts";
import { EventFeedEdgeRef, FeedEventType } from "./feed.ts";

builder.subscriptionType({
  description: "Served as GraphQL over SSE (POST /graphql with `Accept: text/event-stream`) " +
    "and over WebSocket (GET /graphql, subprotocol graphql-transport-ws; the feed token in " +
    "connection_init's payload as `Authorization`).",
});

builder.subscriptionField("eventFeed", (t) =>
  t.field({
    type: EventFeedEdgeRef,
    description: "The captured feed as it grows (REST's event_stream/live): every event after " +
      "`after`, then each new one as it is captured. Authorised by `Authorization: Bearer " +
      "est_…`; opening counts as one read; at most 2 open streams per token; a stream ends " +
      "after 1 h or within 5 s of the token's revocation. Resume from the last edge's cursor.",
    args: {
      projectId: t.arg.id({ required: true }),
      after: t.arg.string(),
      eventTypes: t.arg({ type: [FeedEventType] }),
    },
    subscribe: (_root, args, ctx, info) =>
      subscribeEventFeed(ctx, {
        projectId: String(args.projectId),
        after: args.after,
        eventTypes: args.eventTypes,
      }, selectedFields(info, ["node", "link"])),
    resolve: (edge: EventFeedEdge) => edge,
  }));
