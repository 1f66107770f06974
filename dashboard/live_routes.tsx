// GET /dashboard/environments/:project_id/live[/stream] – an environment's events as they are
// captured: the page, and its Server-Sent Events (the REST live tail's loop, for a session).
import type { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { authorize } from "../services/access/authorize.ts";
import type { AppDeps } from "../services/deps.ts";
import { ApiError, ERROR_STATUS } from "../services/errors.ts";
import { readAdmittedPage } from "../services/feed/feed.ts";
import { writeLiveEvents } from "../services/feed/live_sse.ts";
import { LiveTails } from "../services/feed/live_tail.ts";
import { sessionStands } from "../services/access/sessions.ts";
import type { PageKit } from "./kit.tsx";
import { LivePage } from "./pages/live.tsx";
import type { DashboardEnv } from "./security.ts";

export function livePages(app: Hono<DashboardEnv>, deps: AppDeps, kit: PageKit): void {
  const { sql } = deps;
  const { page, loadEnv } = kit;
  const liveTails = deps.liveTails ?? new LiveTails(deps, { wakeup: null });

  // GET /dashboard/environments/:project_id/live – the environment's events as captured
  app.get("/environments/:project_id/live", async (c) => {
    const ctx = await loadEnv(c);
    return page(c, <LivePage {...ctx} />);
  });

  // GET /dashboard/environments/:project_id/live/stream – the same as Server-Sent Events, for
  // live.js: from the feed's head, or after the Last-Event-ID an EventSource resends.
  app.get("/environments/:project_id/live/stream", async (c) => {
    const { env } = await loadEnv(c);
    const lastEventId = c.req.header("Last-Event-ID");
    const after = lastEventId !== undefined && lastEventId !== "" ? lastEventId : undefined;
    if (after !== undefined) {
      // A cursor that is not this environment's is refused before the stream starts.
      try {
        await readAdmittedPage(sql, deps, env.id, { limit: 1, after });
      } catch (err) {
        if (err instanceof ApiError && ERROR_STATUS[err.code] === 400) {
          return c.text("Last-Event-ID is not a cursor of this environment.", 400);
        }
        throw err;
      }
    }
    // The stream ends with its session (sign-out, 12 hours idle, the account removed) or the
    // person's right to live events here (removed from the project, demoted), checked as often
    // as a feed token's right is. A database that does not answer ends nothing: the next check
    // decides.
    const session = c.get("session");
    const stillAllowed = async () =>
      await sessionStands(deps, session.token) &&
      await authorize(sql, session.principal, "events.live", { environmentId: env.id }).then(
        () => true,
        (err) => {
          if (err instanceof ApiError) return false;
          throw err;
        },
      );
    const stream = await liveTails.openForAdmin(env.id, after, stillAllowed);
    c.header("X-Accel-Buffering", "no");
    return streamSSE(c, (sse) => writeLiveEvents(stream, sse));
  });
}
