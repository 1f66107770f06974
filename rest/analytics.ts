import { Hono } from "hono";
import { queryAnalytics } from "../services/analytics/query.ts";
import { parseAnalyticsParams } from "../services/analytics/params.ts";
import { funnelAnswer, parseFunnelParams, queryFunnel } from "../services/analytics/funnel.ts";
import { ApiError } from "../services/errors.ts";
import { getEnvironmentOrThrow } from "../services/projects/projects.ts";
import { requireAccess } from "./access.ts";
import type { AppDeps } from "../services/deps.ts";
import type { AppEnv } from "./deps.ts";

const FILTER = /^filter\[([^\]]*)\]$/;

/** The funnel's parameters; analytics' others (interval, metrics, filters) are not taken. */
const FUNNEL_PARAMS = new Set(["from", "to", "tz", "link", "group_by", "limit"]);

/**
 * Analytics: GET /api/v1/projects/:project_id/analytics and …/analytics/funnel (viewer, or a
 * key with analytics:read).
 */
export function analyticsRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  // GET /api/v1/projects/:project_id/analytics – totals, a series and one breakdown of the
  // environment's events (services/analytics/)
  app.get("/projects/:project_id/analytics", requireAccess(deps), async (c) => {
    const env = await getEnvironmentOrThrow(deps.sql, c.req.param("project_id"));
    const all = c.req.queries();
    const filters: Record<string, string> = {};
    const single: Record<string, string | undefined> = {};
    for (const [name, values] of Object.entries(all)) {
      const filter = FILTER.exec(name);
      if (new Set(values).size > 1) {
        throw new ApiError("invalid_field", `${name}: given more than once`, { field: name });
      }
      if (filter) filters[filter[1]!] = values[0]!;
      else single[name] = values[0];
    }
    const query = await parseAnalyticsParams(deps.sql, env.id, {
      from: single.from,
      to: single.to,
      interval: single.interval,
      tz: single.tz,
      metrics: single.metrics,
      group_by: single.group_by,
      limit: single.limit,
      link: single.link,
      filters,
    }, deps.clock.now());
    return c.json(await queryAnalytics(deps.sql, query), 200, { "Cache-Control": "no-store" });
  });

  // GET /api/v1/projects/:project_id/analytics/funnel – views, installs, purchasers, purchases
  // and revenue of the attributed events, with each step's rate; the top links by revenue with
  // group_by=link (services/analytics/funnel.ts)
  app.get("/projects/:project_id/analytics/funnel", requireAccess(deps), async (c) => {
    const env = await getEnvironmentOrThrow(deps.sql, c.req.param("project_id"));
    const single: Record<string, string | undefined> = {};
    for (const [name, values] of Object.entries(c.req.queries())) {
      if (!FUNNEL_PARAMS.has(name)) {
        // A filter or a metric would be silently ignored: refused, as analytics refuses its own.
        if (name === "interval" || name === "metrics" || FILTER.test(name)) {
          throw new ApiError("invalid_field", `${name}: the funnel does not take it`, {
            field: name,
          });
        }
        continue;
      }
      if (new Set(values).size > 1) {
        throw new ApiError("invalid_field", `${name}: given more than once`, { field: name });
      }
      single[name] = values[0];
    }
    const query = await parseFunnelParams(deps.sql, env.id, single, deps.clock.now());
    return c.json(funnelAnswer(await queryFunnel(deps.sql, query)), 200, {
      "Cache-Control": "no-store",
    });
  });

  return app;
}
