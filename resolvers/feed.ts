import type { GraphQLResolveInfo } from "graphql";
import { type FeedPage, readFeedPage } from "../services/feed/feed.ts";
import type { FeedPoint } from "../services/feed/cursor.ts";
import { FEED_SCHEMA_VERSION, type FeedEnvelope } from "../services/feed/envelope.ts";
import { bearerToken } from "../inputs/headers.ts";
import { ApiError } from "../services/errors.ts";
import { parseEnvironmentId } from "../services/projects/projects.ts";
import type { GraphQLContext } from "./context.ts";
import { withGraphQLNames } from "../graphql/errors.ts";
import type { Loaders } from "./loaders.ts";
import {
  type FeedEventNode,
  feedEventNode,
  type LinkField,
  linkFields,
  type LinkNode,
} from "./nodes.ts";
import { selectedFields } from "./selection.ts";

/** An edge of the feed: its node, and the cursor right after it. */
export interface EventFeedEdge {
  node: FeedEventNode;
  readonly cursor: string;
}

/** A page's edge, whose cursor is made only if the client asks for it (a getter). */
class PageEdge implements EventFeedEdge {
  constructor(
    readonly node: FeedEventNode,
    private readonly page: FeedPage,
    private readonly point: FeedPoint,
  ) {}
  get cursor(): string {
    return this.page.cursorAfter(this.point);
  }
}

export interface EventFeedConnection {
  schemaVersion: number;
  edges: EventFeedEdge[];
  pageInfo: { endCursor: string; hasNextPage: boolean };
}

/** The feed's REST parameters, as eventFeed's arguments. */
const FEED_ARGUMENTS: Record<string, string> = {
  limit: "first",
  "event_types[]": "eventTypes",
  after: "after",
};

/** The same read as REST's event_stream: same checks, same rate limit, same cursor. */
export async function eventFeed(
  ctx: GraphQLContext,
  args: {
    projectId: string;
    first?: number | null;
    after?: string | null;
    eventTypes?: readonly string[] | null;
  },
  info: GraphQLResolveInfo,
): Promise<EventFeedConnection> {
  // REST answers a project_id that is no number with the token's 403; here it is an argument
  // of the wrong shape, so it is said as such.
  if (parseEnvironmentId(args.projectId) === null) {
    throw new ApiError("invalid_field", "projectId must be a numeric project ID", {
      field: "projectId",
    });
  }
  const page = await withGraphQLNames(
    (field) => FEED_ARGUMENTS[field] ?? field,
    () =>
      readFeedPage(ctx.deps.sql, ctx.deps, {
        token: bearerToken(ctx.authorization),
        projectId: args.projectId,
        limit: args.first ?? undefined,
        eventTypes: args.eventTypes ?? undefined,
        after: args.after ?? undefined,
      }),
  );
  const nodes = feedEventNodes(page.events);
  // The page's links in one batch of the edge's loader, before execution reaches them: every
  // FeedEvent.link then resolves at once instead of through a promise per event.
  const selection = selectedFields(info, ["edges", "node", "link"]);
  if (selection) await primeLinks(ctx.loaders, nodes, linkFields(selection));
  return {
    schemaVersion: FEED_SCHEMA_VERSION,
    edges: page.events.map((e, i) => new PageEdge(nodes[i]!, page, e)),
    pageInfo: { endCursor: page.nextAfter, hasNextPage: page.hasMore },
  };
}

/**
 * Stored envelopes as FeedEvent nodes, each parsed once. A node's `link` is resolved through the
 * link loader (resolvers/loaders.ts) from the link id stored beside the envelope, or, for an
 * event captured before that column, from the envelope itself; `scope` gives a subscription's
 * page its own loaders.
 */
export function feedEventNodes(
  events: readonly { body: string; linkId?: number | null }[],
  scope: Loaders | null = null,
): FeedEventNode[] {
  return events.map((e) => {
    const envelope = JSON.parse(e.body) as FeedEnvelope;
    return feedEventNode(envelope, e.linkId ?? envelope.link?.id ?? null, scope);
  });
}

/** Loads the links of `nodes` with `fields` through one batch of their loader. */
export async function primeLinks(
  loaders: Loaders,
  nodes: readonly FeedEventNode[],
  fields: readonly LinkField[],
): Promise<void> {
  const ids = new Set<number>();
  for (const node of nodes) if (node.linkId !== null) ids.add(node.linkId);
  if (ids.size > 0) await loaders.links(fields).loadMany([...ids]);
}

/** FeedEvent.link: the page's links in one query, through the edge's loader. */
export function feedEventLink(
  event: FeedEventNode,
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
): LinkNode | null | Promise<LinkNode | null> {
  if (event.linkId === null) return null;
  return (event.scope ?? ctx.loaders).linkFor(info, event.linkId);
}
