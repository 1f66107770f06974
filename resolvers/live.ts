import { bearerToken } from "../inputs/headers.ts";
import { ApiError } from "../services/errors.ts";
import type { FeedEnvelope } from "../services/feed_envelope.ts";
import { parseEnvironmentId } from "../services/projects.ts";
import type { GraphQLContext } from "./context.ts";
import { withGraphQLNames } from "./errors.ts";
import type { EventFeedEdge } from "./feed.ts";
import { createLoaders } from "./loaders.ts";

const LIVE_ARGUMENTS: Record<string, string> = { "event_types[]": "eventTypes", after: "after" };

/**
 * subscription eventFeed: the live tail (services/live_tail.ts) as EventFeedEdges, with the
 * query's authentication, checks and error codes. Each page gets fresh loaders, primed with
 * its links, so `node.link` costs one query per page and no cache outlives it.
 */
export async function subscribeEventFeed(
  ctx: GraphQLContext,
  args: { projectId: string; after?: string | null; eventTypes?: readonly string[] | null },
): Promise<AsyncGenerator<EventFeedEdge, void, undefined>> {
  if (parseEnvironmentId(args.projectId) === null) {
    throw new ApiError("invalid_field", "projectId must be a numeric project ID", {
      field: "projectId",
    });
  }
  const live = ctx.deps.liveTails;
  if (!live) throw new Error("the app was built without live tails");
  const stream = await withGraphQLNames(
    (field) => LIVE_ARGUMENTS[field] ?? field,
    () =>
      live.open({
        token: bearerToken(ctx.authorization),
        projectId: args.projectId,
        eventTypes: args.eventTypes ?? undefined,
        after: args.after ?? undefined,
      }),
  );
  const edges = (async function* () {
    try {
      for await (const page of stream.pages) {
        const nodes = JSON.parse(`[${page.map((e) => e.body).join(",")}]`) as FeedEnvelope[];
        ctx.loaders = createLoaders(ctx.deps.sql, ctx.deps.config.linkBaseUrl);
        const linkIds = nodes.flatMap((n) => (n.link ? [n.link.id] : []));
        if (linkIds.length > 0) void ctx.loaders.linkById.loadMany(linkIds);
        for (let i = 0; i < page.length; i++) {
          const cursor = page[i]!.cursor;
          yield { node: nodes[i]!, cursor: () => cursor };
        }
      }
    } finally {
      stream.close();
    }
  })();
  // When the client leaves, Yoga calls return(); a generator would take it only at its next
  // yield, which may be long in coming on a quiet feed (the stream and its slot would stay
  // open). Closing the stream first ends the wait at once.
  const close = edges.return.bind(edges);
  edges.return = (value) => {
    stream.close();
    return close(value);
  };
  return edges;
}
