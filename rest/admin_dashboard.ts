// What the dashboard's pages need from the admin API, usable with the admin token as well:
// project search and events per day (links: rest/links.ts).
import { Hono } from "hono";
import { chartQuery, listQuery } from "../inputs/dashboard.ts";
import type { AppDeps } from "../services/deps.ts";
import { eventsPerDay } from "../services/analytics/events_per_day.ts";
import { listProjects } from "../services/projects/projects.ts";
import { requireAccess } from "./access.ts";
import type { AppEnv } from "./deps.ts";

export function adminDashboardRoutes(deps: AppDeps): Hono<AppEnv> {
  const { sql } = deps;
  const app = new Hono<AppEnv>();
  const auth = requireAccess(deps);

  // GET /api/v1/admin/projects – every project, or those whose name contains q, newest first
  app.get("/admin/projects", auth, async (c) => {
    const query = listQuery.parse(c.req.query());
    return c.json({ projects: await listProjects(sql, { search: query.q }) });
  });

  // GET /api/v1/projects/:project_id/events_per_day – events by UTC day and type
  app.get("/projects/:project_id/events_per_day", auth, async (c) => {
    const query = chartQuery.parse(c.req.query());
    const days = await eventsPerDay(sql, c.req.param("project_id"), {
      now: deps.clock.now(),
      days: query.days,
    });
    return c.json({ days });
  });

  return app;
}
