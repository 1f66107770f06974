// What every dashboard response carries and every dashboard request is checked for: security
// headers, the session cookie, and cross-site request protection.
import type { Context, MiddlewareHandler } from "hono";
import type { RequestBindings } from "../inputs/headers.ts";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { Config } from "../config.ts";
import { type AuditContext, auditContext } from "../services/access/audit.ts";
import { matchedRoutes } from "hono/route";
import { authorize, memberRole } from "../services/access/authorize.ts";
import {
  isOperation,
  type Operation,
  type Permission,
  PERMISSIONS,
  roleAtLeast,
} from "../services/access/permissions.ts";
import { DEVICE_COOKIE, DEVICE_COOKIE_MS } from "../services/access/devices.ts";
import { routeAccess } from "../services/access/routes.ts";
import type { AppDeps } from "../services/deps.ts";
import type { Clock } from "../infra/clock.ts";
import { isCrossSite as isCrossSiteRequest } from "../inputs/headers.ts";
import {
  csrfTokenMatches,
  resumeSession,
  type Session,
  SESSION_COOKIE,
} from "../services/access/sessions.ts";

export { SESSION_COOKIE };
export const CSRF_FIELD = "_csrf";
export const BASE = "/dashboard";
/** The one form posted as a streamed upload (the links CSV import). */
export const UPLOAD_PATH = /^\/dashboard\/environments\/[^/]+\/links\/import$/;

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

export interface DashboardEnv {
  Bindings: RequestBindings;
  Variables: { session: Session; clock: Clock };
}

/** On every dashboard response, pages, redirects, errors and assets alike. */
export const securityHeaders: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  await next();
  const h = c.res.headers;
  h.set("Content-Security-Policy", CONTENT_SECURITY_POLICY);
  h.set("X-Frame-Options", "DENY");
  h.set("X-Content-Type-Options", "nosniff");
  h.set("Referrer-Policy", "same-origin");
  h.set("Cross-Origin-Opener-Policy", "same-origin");
  // Pages may show a secret once: no cache may keep them. Assets set their own policy.
  if (!h.has("Cache-Control")) h.set("Cache-Control", "no-store");
};

/** Whether the browser reached us over https (through a trusted proxy, if configured). */
export function isHttps(c: Context, config: Config): boolean {
  if (new URL(c.req.url).protocol === "https:") return true;
  return config.trustProxy && c.req.header("X-Forwarded-Proto")?.split(",")[0]?.trim() === "https";
}

/**
 * The paths the session cookie is sent to: the dashboard, and /graphql, where the session
 * authenticates the admin graph (mutations also need the session's X-CSRF-Token).
 */
export const SESSION_COOKIE_PATHS = [BASE, "/graphql"] as const;

export function setSessionCookie(c: Context, token: string, config: Config): void {
  for (const path of SESSION_COOKIE_PATHS) {
    setCookie(c, SESSION_COOKIE, token, {
      path,
      httpOnly: true,
      sameSite: "Strict",
      secure: isHttps(c, config),
    });
  }
}

/**
 * Marks this browser as one the person signed in from (services/access/devices.ts): after the
 * session cookie, for the dashboard's forms only.
 */
export function setDeviceCookie(c: Context, value: string, config: Config): void {
  setCookie(c, DEVICE_COOKIE, value, {
    path: BASE,
    httpOnly: true,
    sameSite: "Strict",
    secure: isHttps(c, config),
    maxAge: Math.floor(DEVICE_COOKIE_MS / 1000),
  });
}

export function clearSessionCookie(c: Context, config: Config): void {
  for (const path of SESSION_COOKIE_PATHS) {
    deleteCookie(c, SESSION_COOKIE, { path, secure: isHttps(c, config) });
  }
}

/** A request another site made the browser send (inputs/headers.ts isCrossSite). */
export function isCrossSite(c: Context): boolean {
  return isCrossSiteRequest((name) => c.req.header(name), c.req.url);
}

/** Resumes the session from its cookie or sends the browser to sign in. */
export function requireSession(deps: AppDeps): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    const session = await resumeSession(deps, getCookie(c, SESSION_COOKIE));
    if (!session) {
      if (getCookie(c, SESSION_COOKIE) !== undefined) clearSessionCookie(c, deps.config);
      const expired = getCookie(c, SESSION_COOKIE) !== undefined ? "?expired=1" : "";
      return c.redirect(`${BASE}/sign-in${expired}`, 303);
    }
    c.set("session", session);
    await next();
  };
}

/**
 * Every state-changing request carries the session's synchronizer token in its form, and comes
 * from this site. A refusal is a 403 and changes nothing.
 */
export const requireSameSiteForm: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  if (c.req.method === "GET" || c.req.method === "HEAD") return await next();
  if (isCrossSite(c)) return forbidden(c, "This request came from another site and was refused.");
  const type = c.req.header("Content-Type") ?? "";
  if (
    !type.startsWith("application/x-www-form-urlencoded") &&
    !type.startsWith("multipart/form-data")
  ) {
    return forbidden(c, "This request was not sent by a dashboard form and was refused.");
  }
  // The streamed upload's token is checked as its body is read, before the file (upload.ts):
  // parsing the form here would hold the whole file in memory.
  if (UPLOAD_PATH.test(c.req.path)) return await next();
  const form = await c.req.parseBody();
  if (!csrfTokenMatches(c.get("session"), form[CSRF_FIELD])) {
    return forbidden(
      c,
      "This form has expired or was not sent from the dashboard. Reload the page and try again.",
    );
  }
  await next();
};

function forbidden(c: Context, message: string): Response {
  return c.text(message, 403);
}

/** Who is changing something through this page, for the audit entry the service writes. */
export function auditOf(c: Context<DashboardEnv>): AuditContext {
  return auditContext(c.get("session").principal, c.env.requestId, c.get("clock").now());
}

/** The values of a route pattern's `:name` segments in `path` (dashboard patterns are plain). */
function paramsOf(pattern: string, path: string): Record<string, string> {
  const names = pattern.split("/");
  const values = path.split("/");
  const params: Record<string, string> = {};
  names.forEach((name, i) => {
    if (name.startsWith(":") && values[i] !== undefined) {
      params[name.slice(1)] = decodeURIComponent(values[i]!);
    }
  });
  return params;
}

/**
 * After requireSession: the session may perform the operation the permission table gives the
 * route that will answer (services/access/routes.ts), on its environment or project; a refusal
 * is the dashboard's 403 page and changes nothing.
 */
export function requireAccess(deps: AppDeps): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    // The first route (not middleware) that matched is the one that answers.
    const route = matchedRoutes(c).find((r) => r.method !== "ALL");
    if (!route) return await next();
    const access = routeAccess(c.req.method, route.path);
    if (access === undefined) {
      throw new Error(`${c.req.method} ${route.path} has no entry in the access table`);
    }
    c.set("clock", deps.clock);
    const session = c.get("session");
    session.role = session.principal.type === "admin_token" ? "instance" : null;
    if (isOperation(access)) {
      let params: Record<string, string>;
      try {
        params = paramsOf(route.path, c.req.path);
      } catch {
        return c.text("There is no such page.", 404);
      }
      const target = { environmentId: params["project_id"], projectHashid: params["hashid"] };
      await authorize(deps.sql, session.principal, access, target);
      if (session.principal.type === "account") {
        session.role = await memberRole(deps.sql, session.principal.id, target);
      }
    }
    await next();
  };
}

/** Whether the page's session may perform `operation` on the page's project (for navigation). */
export function may(session: Session | undefined, operation: Operation): boolean {
  const role = session?.role;
  if (role === "instance") return true;
  const needed: Permission["role"] = PERMISSIONS[operation].role;
  return role !== undefined && role !== null && needed !== "instance" &&
    roleAtLeast(role, needed);
}
