// The live tail over Server-Sent Events: GET /api/v1/projects/:project_id/event_stream/live.
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { bearerToken } from "../inputs/headers.ts";
import { writeLiveEvents } from "../services/feed/live_sse.ts";
import type { LiveTails } from "../services/feed/live_tail.ts";
import type { AppEnv } from "./deps.ts";

export function liveRoutes(live: LiveTails): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  // GET /api/v1/projects/:project_id/event_stream/live – the feed as it grows, as SSE
  app.get("/projects/:project_id/event_stream/live", async (c) => {
    // A reconnecting EventSource-style client sends the last id it received; that wins over
    // the `after` of the URL it first opened.
    const lastEventId = c.req.header("Last-Event-ID");
    // Every check answers here, as JSON, before the stream starts (rest/errors.ts).
    const stream = await live.open({
      token: bearerToken(c.req.header("Authorization")),
      projectId: c.req.param("project_id"),
      eventTypes: c.req.queries("event_types[]"),
      after: lastEventId !== undefined && lastEventId !== "" ? lastEventId : c.req.query("after"),
    });
    c.header("X-Accel-Buffering", "no");
    return streamSSE(c, (sse) => writeLiveEvents(stream, sse));
  });

  return app;
}
