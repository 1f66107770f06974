import type { GraphQLResolveInfo } from "graphql";
import { type FeedPage, readFeedPage } from "../services/feed.ts";
import type { FeedPoint } from "../services/feed_cursor.ts";
import { FEED_SCHEMA_VERSION, type FeedEnvelope } from "../services/feed_envelope.ts";
import { bearerToken } from "../inputs/headers.ts";
import { listLinksByIds } from "../services/links.ts";
import { ApiError } from "../services/errors.ts";
import { parseEnvironmentId } from "../services/projects.ts";
import type { GraphQLContext } from "./context.ts";
import { withGraphQLNames } from "./errors.ts";
import {
  type FeedEventNode,
  feedEventNode,
  linkColumns,
  linkFields,
  type LinkNode,
  linkNode,
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
  const nodes = await feedEventNodes(
    ctx,
    page.events.map((e) => e.body),
    selectedFields(info, ["edges", "node", "link"]),
  );
  return {
    schemaVersion: FEED_SCHEMA_VERSION,
    edges: page.events.map((e, i) => new PageEdge(nodes[i]!, page, e)),
    pageInfo: { endCursor: page.nextAfter, hasNextPage: page.hasMore },
  };
}

/**
 * Stored envelopes as FeedEvent nodes, each parsed once, and, when the query selects `link`
 * (`linkSelection`: the names of its fields), every link of the page in one query that reads
 * only the columns those fields need. Absent or deleted links are null.
 */
export async function feedEventNodes(
  ctx: GraphQLContext,
  bodies: readonly string[],
  linkSelection: ReadonlySet<string> | null,
): Promise<FeedEventNode[]> {
  const envelopes = bodies.map((b) => JSON.parse(b) as FeedEnvelope);
  const links = new Map<number, LinkNode>();
  if (linkSelection) {
    const ids = new Set<number>();
    for (const e of envelopes) if (e.link) ids.add(e.link.id);
    if (ids.size > 0) {
      const { sql, config } = ctx.deps;
      const fields = linkFields(linkSelection);
      for (const row of await listLinksByIds(sql, [...ids], linkColumns(fields))) {
        links.set(row.id, linkNode(row, config.linkBaseUrl, fields));
      }
    }
  }
  return envelopes.map((e) => feedEventNode(e, e.link ? links.get(e.link.id) ?? null : null));
}
