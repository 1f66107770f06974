import { Hono } from "hono";
import type { AppDeps } from "../services/deps.ts";
import { renderMetrics } from "../services/monitoring/scrape.ts";
import { isLinkDomain } from "../services/projects/projects.ts";
import type { AppEnv } from "./deps.ts";
import { errorResponse, toErrorResponse } from "./errors.ts";

/** What the internal routes read beyond the app's dependencies: the database they run on. */
export interface InternalDeps extends AppDeps {
  database: { embedded: boolean; poolMax: number; applicationName: string | null };
}

/**
 * The internal listener's routes, served by main.ts on METRICS_PORT with a Deno.serve of their
 * own, never on PORT: what a reverse proxy, a scraper or the compose network may reach, and a
 * client of the public port may not. No request frame: a scrape every few seconds would fill
 * the access log.
 */
export function internalRoutes(deps: InternalDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  // GET /metrics – Prometheus's text format (docs/operations.md, "Metrics")
  app.get("/metrics", async (c) => {
    const text = await renderMetrics({
      sql: deps.sql,
      clock: deps.clock,
      logger: deps.logger,
      database: deps.database,
      views: deps.views,
      liveTails: deps.liveTails,
    });
    return c.body(text, 200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" });
  });

  // GET /internal/tls/allowed?domain=<host> – a reverse proxy's on-demand TLS check (Caddy's
  // `on_demand_tls { ask … }`): 200 for a project's link domain, 404 for any other host, so that
  // a certificate is obtained only for a domain someone registered (docs/operations.md,
  // "Deploying").
  app.get("/internal/tls/allowed", async (c) => {
    const domain = c.req.query("domain");
    if (!domain) return errorResponse("invalid_field", "domain: give the host name to check");
    if (await isLinkDomain(deps.sql, domain)) return c.text("allowed\n", 200);
    return errorResponse("not_found", "domain: is not the link domain of any project");
  });

  app.notFound(() => errorResponse("not_found", "no such route"));
  app.onError((err) => toErrorResponse(err, deps.logger, undefined));
  return app;
}
