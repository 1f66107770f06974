import { Hono } from "hono";
import { limitParam } from "../inputs/feed.ts";
import { type FeedPage, readFeedPage } from "../services/feed/feed.ts";
import { FEED_SCHEMA_VERSION } from "../services/feed/envelope.ts";
import { bearerToken } from "../inputs/headers.ts";
import type { AppDeps } from "../services/deps.ts";
import type { AppEnv } from "./deps.ts";

/** The feed API: GET /api/v1/projects/:project_id/event_stream. */
export function feedRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  // GET /api/v1/projects/:project_id/event_stream – one page of the captured feed after a cursor
  app.get("/projects/:project_id/event_stream", async (c) => {
    const page = await readFeedPage(deps.sql, deps, {
      token: bearerToken(c.req.header("Authorization")),
      projectId: c.req.param("project_id"),
      limit: limitParam(c.req.query("limit")),
      eventTypes: c.req.queries("event_types[]"),
      after: c.req.query("after"),
      bodiesOnly: true,
    });
    return c.body(feedPageJson(page), 200, {
      "Content-Type": "application/json; charset=UTF-8",
      "Cache-Control": "no-store",
    });
  });

  return app;
}

/** The REST answer, assembled from the stored envelopes without parsing them. */
function feedPageJson(page: FeedPage): string {
  let out = `{"schema_version":${FEED_SCHEMA_VERSION},"events":[`;
  for (let i = 0; i < page.bodies.length; i++) {
    if (i > 0) out += ",";
    out += page.bodies[i]!;
  }
  return `${out}],"next_after":${JSON.stringify(page.nextAfter)}}`;
}
