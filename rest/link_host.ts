import { Hono } from "hono";
import type { Context } from "hono";
import {
  decideHit,
  detectPlatform,
  isPreviewCrawler,
  type LinkHit,
  redirectUrl,
  withClickId,
} from "../services/links/host.ts";
import { requestHost } from "../services/link_host/apps.ts";
import { describeVisitor, isKnownBot } from "../services/link_host/visitor.ts";
import { clientAddress } from "../inputs/headers.ts";
import { accessPath, getHostedLink, type HostedLink } from "../services/links/links.ts";
import { claimView, expiredByDate, hasViewsLeft } from "../services/links/expiry.ts";
import {
  appendUtm,
  chooseRoute,
  forwardQuery,
  type HitFacts,
  newVisitorId,
  preferredLanguage,
  type RouteChoice,
  type Routing,
  routingOf,
  VISITOR_COOKIE,
  visitorIdFromCookie,
} from "../services/links/rules.ts";
import { checkLinkPassword } from "../services/links/password_limit.ts";
import type { AppDeps } from "../services/deps.ts";
import { clickIdsFor } from "../services/attribution/click_ids.ts";
import type { AppEnv } from "./deps.ts";
import { errorResponse } from "./errors.ts";
import {
  renderExpiredPage,
  renderNotFoundPage,
  renderOpenAppPage,
  renderPasswordPage,
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

/** The password page posts to the link's own URL: its form may go there and nowhere else. */
const PASSWORD_HEADERS = {
  ...HTML_HEADERS,
  "Content-Security-Policy":
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
};

/** A password form's body at most: a password and its field name, form-encoded. */
const MAX_PASSWORD_BODY = 4 * 1024;

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

/** A visitor cookie for a year, sent back only to this host (first-party), never to scripts. */
function visitorCookie(id: string, secure: boolean): string {
  return `${VISITOR_COOKIE}=${id}; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax${
    secure ? "; Secure" : ""
  }`;
}

/** Reads a form body of at most `max` bytes, or null when it is larger or unreadable. */
async function smallForm(request: Request, max: number): Promise<URLSearchParams | null> {
  const declared = Number(request.headers.get("Content-Length") ?? "0");
  if (declared > max || !request.body) return declared > max ? null : new URLSearchParams();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  try {
    return new URLSearchParams(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return null;
  }
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
  const clickIds = clickIdsFor(deps.cursorSecret);
  const linkBaseHost = new URL(config.linkBaseUrl).hostname.toLowerCase();
  const app = new Hono<AppEnv>();
  // The association files and the open-app script: paths no link can have.
  app.route("/", linkHostAppRoutes(deps));

  /**
   * The link's usual answer to this hit: expiry, rules and split, the platform's destination,
   * the view recorded behind the response. `person`: a person's GET, or a POST with the right
   * password (which counts as the view its GET did not). `routing`: the link's compiled
   * routing (null for a plain link, whose hit takes exactly the steps it always took).
   */
  async function answer(
    c: Context<AppEnv>,
    link: HostedLink,
    routing: Routing | null,
    host: ReturnType<typeof requestHost>,
    person: boolean,
  ): Promise<Response> {
    const userAgent = c.req.header("User-Agent") ?? "";
    const platform = detectPlatform(userAgent);
    const crawler = isPreviewCrawler(userAgent);
    // A known bot is no view either (it still gets its answer).
    const counts = person && !crawler && !isKnownBot(userAgent);
    // Links without a limit or a date pass on two comparisons; a limited one claims its view
    // (or finds none left) before answering.
    if (
      expiredByDate(link, deps.clock.now()) ||
      (link.max_views !== null &&
        !(counts ? await claimView(sql, link.id) : await hasViewsLeft(sql, link.id)))
    ) {
      return expired(c, link);
    }
    // A counted view's click id, for the time the view is recorded at: the app gets it (the
    // Play Store referrer, the iOS page's copied URL, web destinations with pass_click_id) and
    // sends it back with its events (CONTRACT "Attribution"). A hit that is no view gets none.
    const click = counts ? mintClick(link) : null;
    const clickId = click?.id ?? null;
    if (routing === null) {
      const hit = decideHit(
        link,
        platform,
        crawler,
        null,
        click && link.pass_click_id ? (url) => withClickId(url, click.id) : null,
        clickId,
      );
      // Recorded behind the response (services/link_host/view_recorder.ts): the visitor never
      // waits for it.
      if (click) {
        // The address serves the country lookup and nothing else: it is not kept or logged.
        const country = deps.geoip?.country(clientAddress(c, config.trustProxy)) ?? null;
        const visitor = describeVisitor(
          userAgent,
          c.req.header("Referer"),
          [host.name, linkBaseHost],
          country,
        );
        deps.views.record(link, platform, visitor, undefined, click);
      }
      return respond(c, link, hit, null, clickId);
    }

    // The address serves the country lookup and the ip conditions, nothing else: it is not
    // kept or logged. Each fact is read once, and only when a rule or the view needs it.
    let country: string | null | undefined;
    const countryOf = () =>
      country === undefined
        ? (country = deps.geoip?.country(clientAddress(c, config.trustProxy)) ?? null)
        : country;
    let visitor: ReturnType<typeof describeVisitor> | undefined;
    const visitorOf = () =>
      visitor ??= describeVisitor(
        userAgent,
        c.req.header("Referer"),
        [host.name, linkBaseHost],
        countryOf(),
      );
    let query: URLSearchParams | undefined;
    const queryOf = () => {
      if (query) return query;
      const url = c.req.url;
      const at = url.indexOf("?");
      return query = new URLSearchParams(at === -1 ? "" : url.slice(at + 1));
    };

    let choice: RouteChoice | null = null;
    let newVisitor: string | null = null;
    // A crawler sees the link's own preview, never a rule's or a variant's.
    if (!crawler && (routing.rules.length > 0 || routing.split !== null)) {
      let address: string | undefined;
      const facts: HitFacts = {
        platform,
        now: deps.clock.now().getTime(),
        country: countryOf,
        language: () => preferredLanguage(c.req.header("Accept-Language")),
        os: () => visitorOf().os,
        query: queryOf,
        referrerHost: () => visitorOf().referrerHost,
        address: () => address ??= clientAddress(c, config.trustProxy),
      };
      choice = chooseRoute(routing, facts, link.id, () => {
        const known = visitorIdFromCookie(c.req.header("Cookie"));
        if (known) return known;
        return newVisitor = newVisitorId();
      });
    }
    const passClickId = click !== null && link.pass_click_id;
    const web = routing.forwardQuery || routing.appendUtm || passClickId
      ? (url: string) => {
        let out = routing.forwardQuery ? forwardQuery(url, queryOf()) : url;
        if (routing.appendUtm) {
          out = appendUtm(out, {
            campaign: link.tracking_campaign,
            source: link.tracking_source,
            medium: link.tracking_medium,
          });
        }
        // Last: the view's own id replaces any click_id the forwarded query brought.
        if (passClickId) out = withClickId(out, click.id);
        return out;
      }
      : null;
    const hit = decideHit(link, platform, crawler, choice?.url ?? null, web, clickId);
    if (click) {
      deps.views.record(
        link,
        platform,
        visitorOf(),
        choice && (choice.rule !== null || choice.variant !== null)
          ? { rule: choice.rule, variant: choice.variant }
          : undefined,
        click,
      );
    }
    const cookie = newVisitor === null
      ? null
      : visitorCookie(newVisitor, new URL(c.req.url).protocol === "https:" || config.trustProxy);
    return respond(c, link, hit, cookie, clickId);
  }

  /** A click id for a view of `link` happening now, and that time (the view's occurred_at). */
  function mintClick(link: HostedLink): { id: string; at: Date } {
    const at = deps.clock.now();
    return {
      id: clickIds.mint({ environmentId: link.environment_id, linkId: link.id, clickedAt: at }),
      at,
    };
  }

  /**
   * The hit's answer: its redirect or its page, with the visitor's new cookie if any. The iOS
   * open-app page copies the link's URL with the view's `click_id` for the app installed next.
   */
  function respond(
    c: Context<AppEnv>,
    link: HostedLink,
    hit: LinkHit,
    cookie: string | null,
    clickId: string | null,
  ): Response {
    if (hit.action === "redirect") {
      // A plain Response: Hono's c.body merges its own headers in on every call.
      const headers: Record<string, string> = { Location: hit.url, "Cache-Control": "no-store" };
      if (cookie) headers["Set-Cookie"] = cookie;
      return new Response(null, { status: 302, headers });
    }
    if (cookie) c.header("Set-Cookie", cookie);
    const page = {
      title: link.title,
      subtitle: link.subtitle,
      image: link.image,
      url: accessPath(config.linkBaseUrl, link),
    };
    if (hit.action === "open_app") {
      const copied = clickId === null ? page.url : withClickId(page.url, clickId);
      return c.body(renderOpenAppPage({ ...page, ...hit, url: copied }), 200, OPEN_APP_HEADERS);
    }
    return html(c, renderPreviewPage({ ...page, destination: hit.destination }), 200);
  }

  // GET /:path – redirect to the platform's destination or show the preview page; HEAD (which
  // Hono serves with this handler) answers the same without a body and is not counted as a view
  app.get("/:path", async (c) => {
    const path = c.req.param("path");
    if (RESERVED.has(path)) return c.notFound();
    // Only links of the projects served on the requested host (services/link_host/apps.ts): elsewhere
    // 404.
    const host = requestHost(c.req.header("Host"), deps.config.linkBaseUrl);
    const link = await getHostedLink(sql, host, path);
    if (!link) return html(c, renderNotFoundPage(), 404);
    const routing = routingOf(link.routing);
    // A password link shows its password page, the same for every such link, to everyone
    // (crawlers included); nothing is counted until the right password is posted.
    if (routing?.passwordProtected) {
      return c.body(renderPasswordPage({ problem: null }), 200, PASSWORD_HEADERS);
    }
    return await answer(c, link, routing, host, c.req.method === "GET");
  });

  // POST /:path – a password link's password: the right one gets the link's usual answer and
  // counts its view; a wrong one 401 and the page again; too many 503 with Retry-After
  app.post("/:path", async (c) => {
    const path = c.req.param("path");
    if (RESERVED.has(path)) return c.notFound();
    const host = requestHost(c.req.header("Host"), deps.config.linkBaseUrl);
    const link = await getHostedLink(sql, host, path);
    if (!link) return html(c, renderNotFoundPage(), 404);
    const routing = routingOf(link.routing);
    if (!routing?.passwordProtected) return c.body(null, 405, { Allow: "GET, HEAD" });
    const form = await smallForm(c.req.raw, MAX_PASSWORD_BODY);
    const password = form?.get("password") ?? "";
    const outcome = await checkLinkPassword(
      sql,
      link.id,
      clientAddress(c, config.trustProxy),
      password,
      deps.clock.now(),
    );
    if (outcome.ok) return await answer(c, link, routing, host, true);
    if (outcome.retryAfter !== null) {
      return c.body(renderPasswordPage({ problem: "limited" }), 503, {
        ...PASSWORD_HEADERS,
        "Retry-After": String(outcome.retryAfter),
      });
    }
    return c.body(renderPasswordPage({ problem: "wrong" }), 401, PASSWORD_HEADERS);
  });

  return app;
}
