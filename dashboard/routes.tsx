// GET/POST /dashboard/… – the dashboard's web interface: server-rendered pages over the same
// services as the admin API (no SQL here), forms that work without JavaScript. This file composes
// the areas (one *_routes.tsx module each) behind the checks every page shares, and holds the
// pages' one error mapper.
import { Hono } from "hono";
import type { AppDeps } from "../services/deps.ts";
import { classifyError, ERROR_STATUS } from "../services/errors.ts";
import { describeError } from "../infra/log.ts";
import { accessPages } from "./access_routes.tsx";
import { analyticsPages } from "./analytics_routes.tsx";
import { getAsset } from "./assets.ts";
import { destinationPages } from "./destination_routes.tsx";
import { exportPages } from "./export_routes.tsx";
import { page, pageKit, sentence } from "./kit.tsx";
import { linkCsvPages } from "./link_csv_routes.tsx";
import { linkPages } from "./link_routes.tsx";
import { linkRulesPages } from "./link_rules_routes.tsx";
import { livePages } from "./live_routes.tsx";
import { ErrorPage } from "./pages/error.tsx";
import { projectPages } from "./project_routes.tsx";
import {
  BASE,
  type DashboardEnv,
  requireAccess,
  requireSameSiteForm,
  requireSession,
  securityHeaders,
} from "./security.ts";
import { settingsPages } from "./settings_routes.tsx";
import { isOpenPath, signInPages, signOutPage } from "./signin_routes.tsx";
import { tokenPages } from "./token_routes.tsx";

export function dashboardRoutes(deps: AppDeps): Hono<DashboardEnv> {
  const app = new Hono<DashboardEnv>();
  const kit = pageKit(deps);

  app.use("*", securityHeaders);

  // GET /dashboard/assets/:name – the stylesheet and script (versioned URLs, cached a year)
  app.get("/assets/:name", (c) => {
    const asset = getAsset(c.req.param("name"));
    if (!asset) return c.text("no such asset", 404);
    return c.body(asset.body, 200, {
      "Content-Type": asset.type,
      "Cache-Control": "public, max-age=31536000, immutable",
    });
  });

  // /sign-in…, /setup – open to anyone
  signInPages(app, deps);

  // Everything below needs a live session, forms must come from the dashboard itself, and the
  // permission table decides every page and form.
  const open = (path: string) => path.startsWith("/assets/") || isOpenPath(path);
  const session = requireSession(deps);
  const access = requireAccess(deps);
  for (const check of [session, requireSameSiteForm, access]) {
    app.use("*", async (c, next) => {
      if (open(c.req.path.slice(BASE.length))) return await next();
      return await check(c, next);
    });
  }

  // Registration order decides between a fixed segment and a parameter (…/links/new before
  // …/links/:path), so the areas go in this order.
  signOutPage(app, deps);
  // /, /projects/:hashid… – projects, their settings, link domain and apps
  projectPages(app, deps, kit);
  settingsPages(app, deps, kit);
  // …/tokens – feed tokens
  tokenPages(app, deps, kit);
  // …/destinations/… – push destinations, their delivery state, tests and secrets
  destinationPages(app, deps, kit);
  // …/metrics[/analytics.csv] and …/links/:path/analytics.csv – the analytics panels' figures
  analyticsPages(app, deps, kit);
  // …/api-keys, /projects/:hashid/members, …/audit, /accounts, /account – team access
  accessPages(app, deps, kit);
  // …/links/import, …/links/export.csv, then the links and each link's page
  linkCsvPages(app, deps, kit);
  // …/links/:path/rules, …/links/:path/qr[-image] – rules and split, the QR designer
  linkRulesPages(app, deps, kit);
  linkPages(app, deps, kit);
  // …/live[/stream] – events as captured
  livePages(app, deps, kit);
  // …/export[.ndjson] – events of a range of days
  exportPages(app, deps, kit);

  // Anything else under /dashboard: an HTML 404, not the API's JSON one.
  app.get("*", (c) => {
    return page(
      c,
      <ErrorPage status={404} message="There is no such page." session={c.get("session")} />,
      404,
    );
  });

  // The pages' one error mapper: services/errors.ts classifies (as for REST and GraphQL), this
  // turns the result into an HTML page.
  app.onError((err, c) => {
    const e = classifyError(err);
    const httpStatus = ERROR_STATUS[e.code];
    // A page answers 402 as 403: browsers show no useful default for 402.
    const status = (httpStatus === 402
      ? 403
      : [400, 401, 403, 404, 503].includes(httpStatus)
      ? httpStatus
      : httpStatus >= 500
      ? 500
      : 400) as 400 | 401 | 403 | 404 | 500 | 503;
    const message = e.code === "enterprise_required"
      ? "This needs Enterprise access on the project: turn it on in the project's settings."
      : e.code === "unavailable"
      ? "The database is not answering. Try again in a moment."
      : e.code === "internal"
      ? "The dashboard hit an error. Try again; if it persists, check the server log."
      : sentence(e.message);
    if (e.retryAfter !== undefined) {
      c.header("Retry-After", String(e.retryAfter));
    }
    if (e.log !== "none") {
      deps.logger[e.log](`dashboard: ${e.logMessage ?? e.message}`, {
        request_id: c.env.requestId,
        ...describeError(err),
      });
    }
    return page(
      c,
      <ErrorPage status={status} message={message} session={c.get("session")} />,
      status,
    );
  });

  return app;
}
