// What the dashboard's pages need from the admin API, usable with the admin token as well:
// project search, the links made in the dashboard, and events per day.
import { Hono } from "hono";
import { chartQuery, listQuery } from "../inputs/dashboard.ts";
import { newLinkInput } from "../inputs/links.ts";
import { createDashboardLink, type DashboardLinkRow } from "../services/dashboard_links.ts";
import { listDashboardLinks } from "../services/dashboard_links.ts";
import type { AppDeps } from "../services/deps.ts";
import { eventsPerDay } from "../services/events_per_day.ts";
import { toLink } from "../services/links.ts";
import { listProjects } from "../services/projects.ts";
import { auditOf, requireAccess } from "./access.ts";
import { readBody } from "./body.ts";
import type { AppEnv } from "./deps.ts";

export function adminDashboardRoutes(deps: AppDeps): Hono<AppEnv> {
  const { sql, config } = deps;
  const app = new Hono<AppEnv>();
  const auth = requireAccess(deps);
  const withCounters = (row: DashboardLinkRow) => ({
    ...toLink(row, config.linkBaseUrl),
    counters: row.counters,
  });

  // GET /api/v1/admin/projects – every project, or those whose name contains q, newest first
  app.get("/admin/projects", auth, async (c) => {
    const query = listQuery.parse(c.req.query());
    return c.json({ projects: await listProjects(sql, { search: query.q }) });
  });

  // POST /api/v1/projects/:project_id/links – make a link as the dashboard does
  app.post("/projects/:project_id/links", auth, async (c) => {
    const body = await readBody(c, newLinkInput);
    const row = await createDashboardLink(sql, c.req.param("project_id"), body, auditOf(c));
    return c.json({ link: toLink(row, config.linkBaseUrl) }, 201);
  });

  // GET /api/v1/projects/:project_id/links – the dashboard's links, searched and paged
  app.get("/projects/:project_id/links", auth, async (c) => {
    const query = listQuery.parse(c.req.query());
    const page = await listDashboardLinks(sql, c.req.param("project_id"), {
      search: query.q,
      page: query.page,
    });
    return c.json({
      links: page.links.map(withCounters),
      page: page.page,
      per_page: page.per_page,
      total: page.total,
    });
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
