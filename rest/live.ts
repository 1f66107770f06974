// The live tail over Server-Sent Events: GET /api/v1/projects/:project_id/event_stream/live.
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { bearerToken } from "../inputs/headers.ts";
import type { LiveTails } from "../services/feed/live_tail.ts";
import type { AppEnv } from "./deps.ts";

/** A comment line this often keeps proxies from closing an idle stream. */
export const KEEPALIVE_MS = 15_000;

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
    return streamSSE(c, async (sse) => {
      // The client left (Deno cancels the body). Not request.signal: Deno aborts it as soon
      // as the response is returned.
      sse.onAbort(() => stream.close());
      // A stream that ends while its client is not reading would wait on a full buffer: the
      // response is cut once it has ended.
      stream.signal.addEventListener("abort", () => {
        setTimeout(() => sse.abort(), 1_000);
      }, { once: true });
      const keepalive = setInterval(() => void sse.write(": keep-alive\n\n"), KEEPALIVE_MS);
      try {
        await sse.write(": live\n\n");
        for await (const page of stream.pages) {
          for (const event of page) {
            await sse.writeSSE({ id: event.cursor, event: "feed_event", data: event.body });
          }
          if (sse.aborted) break;
        }
      } finally {
        clearInterval(keepalive);
        stream.close();
      }
    });
  });

  return app;
}
