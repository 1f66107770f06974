import { Hono } from "hono";
import { createGraphQLHandler, type GraphQLHandler } from "./resolvers/yoga.ts";
import { dashboardRoutes } from "./dashboard/routes.tsx";
import { accessRoutes } from "./rest/access_routes.ts";
import { adminRoutes } from "./rest/admin.ts";
import { destinationRoutes } from "./rest/destinations.ts";
import { adminDashboardRoutes } from "./rest/admin_dashboard.ts";
import type { AppEnv } from "./rest/deps.ts";
import { errorResponse, toErrorResponse } from "./rest/errors.ts";
import { answerFramed, declaredWithinLimit, requestFrame } from "./rest/middleware.ts";
import { exportRoutes } from "./rest/export.ts";
import { analyticsRoutes } from "./rest/analytics.ts";
import { feedRoutes } from "./rest/feed.ts";
import { liveRoutes } from "./rest/live.ts";
import { linkHostRoutes } from "./rest/link_host.ts";
import { linkRoutes } from "./rest/links.ts";
import { linkCsvRoutes } from "./rest/link_csv.ts";
import { pageRoutes } from "./pages/routes.ts";
import { opsRoutes } from "./rest/ops.ts";
import { sdkLinkFastPath, sdkRoutes } from "./rest/sdk.ts";
import type { AppDeps } from "./services/deps.ts";
import { LiveTails } from "./services/feed/live_tail.ts";
import { clientAddress } from "./inputs/headers.ts";

/**
 * Builds the whole HTTP app from its transports (REST, GraphQL, the link host); main.ts and the
 * tests serve it with Deno.serve. Transports import services and the shared `inputs/`, never
 * each other: this is the one module that knows them all.
 */
export function createApp(given: AppDeps): Hono<AppEnv> {
  const deps: AppDeps = given.liveTails
    ? given
    : { ...given, liveTails: new LiveTails(given, { wakeup: null }) };
  const app = new Hono<AppEnv>();
  // Request id, access log line and body limit (rest/middleware.ts).
  app.use("*", requestFrame(deps.logger));

  app.route("/", opsRoutes(deps));
  const graphql = createGraphQLHandler(deps);
  // GET /graphql – GraphiQL in a browser, queries otherwise; POST /graphql – queries, mutations
  // (a POST with a Content-Length within the limit is answered before hono: graphqlPost below)
  app.on(
    ["GET", "POST"],
    "/graphql",
    (c) =>
      graphql(c.req.raw, {
        requestId: c.get("requestId"),
        clientAddress: clientAddress(c, deps.config.trustProxy),
      }),
  );
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
  // The web interface for people (HTML, its own session and error pages).
  app.route("/dashboard", dashboardRoutes(deps));
  // Last: the link host answers GET/HEAD /<path> for whatever the routes above did not take.
  app.route("/", linkHostRoutes(deps));

  app.notFound(() => errorResponse("not_found", "no such route"));
  app.onError((err, c) => toErrorResponse(err, deps.logger, c.get("requestId")));

  // The hottest routes, answered before hono's routing and context with the same frame
  // (rest/middleware.ts answerFramed): the SDK link lookup and POST /graphql; every other
  // request goes through hono.
  const lookup = sdkLinkFastPath(deps);
  const post = graphqlPost(deps, graphql);
  const dispatch = app.fetch;
  app.fetch = (req, env, ctx) => lookup(req) ?? post(req, env) ?? dispatch(req, env, ctx);
  return app;
}

/**
 * POST /graphql before hono (hono's dispatch and its frame as a middleware cost a small query a
 * sixth of its CPU): the same handler, request id, log line and error mapping. Only a body whose
 * Content-Length is within the limit is taken (as HTTP clients send it); hono's frame counts any
 * other body, and refuses one over the limit with its 413, before it is read.
 */
function graphqlPost(
  deps: AppDeps,
  graphql: GraphQLHandler,
): (req: Request, env: unknown) => Promise<Response> | null {
  const { logger, config } = deps;
  return (req, env) => {
    if (req.method !== "POST") return null;
    const url = req.url;
    const pathStart = url.indexOf("/", url.indexOf(":") + 3);
    if (!url.startsWith(GRAPHQL_PATH, pathStart)) return null;
    const end = pathStart + GRAPHQL_PATH.length;
    if (end !== url.length && url[end] !== "?") return null;
    if (!declaredWithinLimit(req)) return null;
    const addressed = {
      req: { header: (name: string) => req.headers.get(name) ?? undefined },
      env,
    };
    return answerFramed(logger, req, GRAPHQL_PATH, (requestId) =>
      graphql(req, {
        requestId,
        clientAddress: clientAddress(addressed, config.trustProxy),
      }));
  };
}

const GRAPHQL_PATH = "/graphql";
