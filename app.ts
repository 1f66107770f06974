import { Hono } from "hono";
import { createGraphQLHandler } from "./graphql/yoga.ts";
import { dashboardRoutes } from "./dashboard/routes.tsx";
import { accessRoutes } from "./rest/access_routes.ts";
import { adminRoutes } from "./rest/admin.ts";
import { destinationRoutes } from "./rest/destinations.ts";
import { adminDashboardRoutes } from "./rest/admin_dashboard.ts";
import type { AppEnv } from "./rest/deps.ts";
import { toErrorResponse } from "./rest/errors.ts";
import { frame, type Framed } from "./rest/frame.ts";
import { exportRoutes } from "./rest/export.ts";
import { analyticsRoutes } from "./rest/analytics.ts";
import { feedRoutes } from "./rest/feed.ts";
import { liveRoutes } from "./rest/live.ts";
import { linkHostRoutes, notFound } from "./rest/link_host.ts";
import { linkRoutes } from "./rest/links.ts";
import { linkCsvRoutes } from "./rest/link_csv.ts";
import { mcpRoutes } from "./rest/mcp.ts";
import { pageRoutes } from "./pages/routes.ts";
import { opsRoutes } from "./rest/ops.ts";
import { sdkRoutes } from "./rest/sdk.ts";
import type { AppDeps } from "./services/deps.ts";
import { LiveTails } from "./services/feed/live_tail.ts";
import { clientAddress } from "./inputs/headers.ts";

/** The app: the framed handler Deno.serve runs, and the route table it dispatches through. */
export interface App {
  fetch: Framed;
  /** Every route in the order Hono matches them (method, path): the map of who answers what. */
  routes: Hono<AppEnv>["routes"];
}

/**
 * Builds the whole HTTP app from its transports (REST, GraphQL, the dashboard, the link host);
 * main.ts and the tests serve it with Deno.serve. Transports import services and the shared
 * `inputs/`, never each other: this is the one module that knows them all. Every request is
 * framed once (rest/frame.ts) and answered by the one route below that matches it, the hot ones
 * included: the SDK link lookup (sdkRoutes), POST /graphql, the feed page (feedRoutes) and the
 * link host's redirect (linkHostRoutes, last). `deno task routes` prints the table.
 */
export function createApp(given: AppDeps): App {
  const deps: AppDeps = given.liveTails
    ? given
    : { ...given, liveTails: new LiveTails(given, { wakeup: null }) };
  const app = new Hono<AppEnv>();

  app.route("/", opsRoutes(deps));
  const graphql = createGraphQLHandler(deps);
  // GET /graphql – GraphiQL in a browser, queries, subscriptions over SSE or WebSocket;
  // POST /graphql – queries and mutations
  app.on(["GET", "POST"], "/graphql", function graphqlRoute(c) {
    return graphql(c.req.raw, {
      requestId: c.env.requestId,
      clientAddress: clientAddress(c, deps.config.trustProxy),
    });
  });
  // GET /docs (the REST reference) and the browser pages' files under /docs/assets/ and
  // /graphql/assets/
  app.route("/", pageRoutes());
  app.route("/api/v1/sdk", sdkRoutes(deps));
  app.route("/api/v1", feedRoutes(deps));
  app.route("/api/v1", liveRoutes(deps.liveTails!));
  app.route("/api/v1", adminRoutes(deps));
  app.route("/api/v1", destinationRoutes(deps));
  app.route("/api/v1", adminDashboardRoutes(deps));
  app.route("/api/v1", linkCsvRoutes(deps));
  app.route("/api/v1", linkRoutes(deps));
  app.route("/api/v1", exportRoutes(deps));
  app.route("/api/v1", accessRoutes(deps));
  app.route("/api/v1", analyticsRoutes(deps));
  app.route("/", mcpRoutes(deps));
  // The web interface for people (HTML, its own session and error pages).
  app.route("/dashboard", dashboardRoutes(deps));
  // Last: the link host answers GET/HEAD /<path> for whatever the routes above did not take.
  app.route("/", linkHostRoutes(deps));

  app.notFound(notFound);
  app.onError((err, c) => toErrorResponse(err, deps.logger, c.env.requestId));
  return {
    fetch: frame(deps.logger, app, deps.config.metricsPort !== null),
    routes: app.routes,
  };
}
