import { setImmediate } from "node:timers";
import type { GraphQLResolveInfo } from "graphql";
import { type FeedPage, readFeedPage } from "../services/feed.ts";
import type { FeedPoint } from "../services/feed_cursor.ts";
import { FEED_SCHEMA_VERSION, type FeedEnvelope } from "../services/feed_envelope.ts";
import { bearerToken } from "../inputs/headers.ts";
import { listLinksByIds } from "../services/links/links.ts";
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
    page.events,
    selectedFields(info, ["edges", "node", "link"]),
  );
  return {
    schemaVersion: FEED_SCHEMA_VERSION,
    edges: page.events.map((e, i) => new PageEdge(nodes[i]!, page, e)),
    pageInfo: { endCursor: page.nextAfter, hasNextPage: page.hasMore },
  };
}

/**
 * Resolves once a query just issued has been written to its connection: postgres.js writes on
 * a later turn of the event loop (setImmediate), after the microtasks that hand the query to a
 * connection, so two turns are waited.
 */
const querySent = () =>
  new Promise((resolve) => setImmediate(resolve)).then(() =>
    new Promise((resolve) => setImmediate(resolve))
  );

/**
 * Stored envelopes as FeedEvent nodes, each parsed once, and, when the query selects `link`
 * (`linkSelection`: the names of its fields), the page's links in one query that reads only the
 * columns those fields need. The query starts before the parsing, from the link ids stored
 * beside the envelopes, so PostgreSQL reads while JavaScript parses; an envelope whose id was
 * not stored (captured before that column) has its link read once the parsing is done. Absent
 * or deleted links are null.
 */
export async function feedEventNodes(
  ctx: GraphQLContext,
  events: readonly { body: string; linkId?: number | null }[],
  linkSelection: ReadonlySet<string> | null,
): Promise<FeedEventNode[]> {
  const fields = linkSelection ? linkFields(linkSelection) : [];
  const readLinks = (ids: Set<number>) =>
    ids.size === 0 ? Promise.resolve([]) : listLinksByIds(
      ctx.deps.sql,
      [...ids],
      linkColumns(fields),
    );
  const stored = new Set<number>();
  if (linkSelection) { for (const e of events) if (e.linkId != null) stored.add(e.linkId); }
  const reading = readLinks(stored);
  // A failed read is awaited below; this only keeps it from counting as unhandled meanwhile.
  reading.catch(() => {});
  if (stored.size > 0) await querySent();
  const envelopes = events.map((e) => JSON.parse(e.body) as FeedEnvelope);
  const links = new Map<number, LinkNode>();
  if (linkSelection) {
    const missing = new Set<number>();
    for (const e of envelopes) if (e.link && !stored.has(e.link.id)) missing.add(e.link.id);
    const { config } = ctx.deps;
    for (const row of [...await reading, ...await readLinks(missing)]) {
      links.set(row.id, linkNode(row, config.linkBaseUrl, fields));
    }
  }
  return envelopes.map((e) => feedEventNode(e, e.link ? links.get(e.link.id) ?? null : null));
}
