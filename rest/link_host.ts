import { Hono } from "hono";
import type { Context } from "hono";
import {
  countsAsView,
  decideHit,
  detectPlatform,
  isPreviewCrawler,
  redirectUrl,
} from "../services/links/host.ts";
import { requestHost } from "../services/link_host/apps.ts";
import { describeVisitor, isKnownBot } from "../services/link_host/visitor.ts";
import { clientAddress } from "../inputs/headers.ts";
import { accessPath, getHostedLink, type HostedLink } from "../services/links/links.ts";
import { claimView, expiredByDate, hasViewsLeft } from "../services/links/expiry.ts";
import type { AppDeps } from "../services/deps.ts";
import type { AppEnv } from "./deps.ts";
import { errorResponse } from "./errors.ts";
import {
  renderExpiredPage,
  renderNotFoundPage,
  renderOpenAppPage,
  renderPreviewPage,
} from "./link_host_html.ts";
import { linkHostAppRoutes } from "./link_host_apps.ts";

/** First segments that belong to the API, never to a link: they keep the JSON 404. */
const RESERVED = new Set(["api", "graphql", "healthz", "readyz", "openapi.json", "docs"]);

const HTML_HEADERS = {
  "Content-Type": "text/html; charset=utf-8",
  // Every hit must reach the host to be counted, and a link may be deactivated at any time.
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Content-Security-Policy":
    "default-src 'none'; style-src 'unsafe-inline'; img-src http: https: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

/** The open-app page runs its script, served from this host, and nothing else. */
const OPEN_APP_HEADERS = {
  ...HTML_HEADERS,
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src http: https: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

function html(c: Context<AppEnv>, body: string, status: 200 | 404 | 410): Response {
  return c.body(body, status, HTML_HEADERS);
}

/** An expired link: 302 to its expired_url when it has one, else the 410 page; never a view. */
function expired(c: Context<AppEnv>, link: HostedLink): Response {
  const url = redirectUrl(link.expired_url === null ? null : { url: link.expired_url });
  if (url) {
    return new Response(null, {
      status: 302,
      headers: { Location: url, "Cache-Control": "no-store" },
    });
  }
  return html(c, renderExpiredPage(), 410);
}

/**
 * What the app answers a request no route took: the link host's HTML 404 page for a GET or HEAD
 * of a path outside the API's own first segments (GET / and GET /<anything>/<more> are never a
 * link), else the JSON 404 of every API.
 */
export function notFound(c: Context<AppEnv>): Response {
  const method = c.req.method;
  const first = c.req.path.split("/")[1] ?? "";
  if ((method === "GET" || method === "HEAD") && !RESERVED.has(first)) {
    return html(c, renderNotFoundPage(), 404);
  }
  return errorResponse("not_found", "no such route");
}

/** The link host: GET/HEAD /<path> on the service's root. Mounted last. */
export function linkHostRoutes(deps: AppDeps): Hono<AppEnv> {
  const { sql, config } = deps;
  const linkBaseHost = new URL(config.linkBaseUrl).hostname.toLowerCase();
  const app = new Hono<AppEnv>();
  // The association files and the open-app script: paths no link can have.
  app.route("/", linkHostAppRoutes(deps));

  // GET /:path – redirect to the platform's destination or show the preview page; HEAD (which
  // Hono serves with this handler) answers the same without a body and is not counted as a view
  app.get("/:path", async (c) => {
    const path = c.req.param("path");
    if (RESERVED.has(path)) return c.notFound();
    // Only links of the projects served on the requested host (services/link_host/apps.ts): elsewhere 404.
    const host = requestHost(c.req.header("Host"), deps.config.linkBaseUrl);
    const link = await getHostedLink(sql, host, path);
    if (!link) return html(c, renderNotFoundPage(), 404);

    const userAgent = c.req.header("User-Agent") ?? "";
    const platform = detectPlatform(userAgent);
    const crawler = isPreviewCrawler(userAgent);
    // A known bot is no view either (it still gets its answer).
    const counts = countsAsView(c.req.method, crawler || isKnownBot(userAgent));
    // Links without a limit or a date pass on two comparisons; a limited one claims its view
    // (or finds none left) before answering.
    if (
      expiredByDate(link, deps.clock.now()) ||
      (link.max_views !== null &&
        !(counts ? await claimView(sql, link.id) : await hasViewsLeft(sql, link.id)))
    ) {
      return expired(c, link);
    }
    const hit = decideHit(link, platform, crawler);

    // Recorded behind the response (services/link_host/view_recorder.ts): the visitor never waits for it.
    if (counts) {
      // The address serves the country lookup and nothing else: it is not kept or logged.
      const country = deps.geoip?.country(clientAddress(c, config.trustProxy)) ?? null;
      const visitor = describeVisitor(
        userAgent,
        c.req.header("Referer"),
        [host.name, linkBaseHost],
        country,
      );
      deps.views.record(link, platform, visitor);
    }
    if (hit.action === "redirect") {
      // A plain Response: Hono's c.body merges its own headers in on every call.
      return new Response(null, {
        status: 302,
        headers: { Location: hit.url, "Cache-Control": "no-store" },
      });
    }
    const page = {
      title: link.title,
      subtitle: link.subtitle,
      image: link.image,
      url: accessPath(config.linkBaseUrl, link),
    };
    if (hit.action === "open_app") {
      return c.body(renderOpenAppPage({ ...page, ...hit }), 200, OPEN_APP_HEADERS);
    }
    return html(c, renderPreviewPage({ ...page, destination: hit.destination }), 200);
  });

  return app;
}
