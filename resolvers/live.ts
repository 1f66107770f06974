import { bearerToken } from "../inputs/headers.ts";
import { ApiError } from "../services/errors.ts";
import { parseEnvironmentId } from "../services/projects/projects.ts";
import type { GraphQLContext } from "./context.ts";
import { withGraphQLNames } from "../graphql/errors.ts";
import { type EventFeedEdge, feedEventNodes, primeLinks } from "./feed.ts";
import { linkFields } from "./nodes.ts";

const LIVE_ARGUMENTS: Record<string, string> = { "event_types[]": "eventTypes", after: "after" };

/**
 * subscription eventFeed: the live tail (services/feed/live_tail.ts) as EventFeedEdges, with the
 * query's authentication, checks and error codes. `node.link`, when the subscription selects
 * it, costs one query per page of events: each page gets loaders of its own, primed with the
 * page's link ids as it arrives (the events are then executed one at a time, each served from
 * that page's loader).
 */
export async function subscribeEventFeed(
  ctx: GraphQLContext,
  args: { projectId: string; after?: string | null; eventTypes?: readonly string[] | null },
  linkSelection: ReadonlySet<string> | null,
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
  const fields = linkFields(linkSelection ?? []);
  const edges = (async function* () {
    try {
      for await (const page of stream.pages) {
        const scope = ctx.loaders.forPage(fields);
        const nodes = feedEventNodes(page, scope);
        if (linkSelection) await primeLinks(scope, nodes, fields);
        for (let i = 0; i < page.length; i++) yield { node: nodes[i]!, cursor: page[i]!.cursor };
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
