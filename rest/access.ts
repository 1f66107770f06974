import type { Context, MiddlewareHandler } from "hono";
import { type AuditContext, auditContext } from "../services/access/audit.ts";
import { authenticateBearer } from "../services/access/authenticate.ts";
import { authorize } from "../services/access/authorize.ts";
import { isOperation } from "../services/access/permissions.ts";
import { routeAccess } from "../services/access/routes.ts";
import type { AppDeps } from "../services/deps.ts";
import { bearerToken, clientAddress } from "../inputs/headers.ts";
import type { AppEnv } from "./deps.ts";

/**
 * The admin routes' guard: authenticates the bearer (an API key, or the admin token through its
 * one check and limit: services/access/authenticate.ts), then checks the operation the permission
 * table gives this route (services/access/routes.ts, looked up by the route's pattern) against
 * the route's environment or project. Per route rather than app.use("*"): mounted under
 * /api/v1, a wildcard would also guard the SDK and feed routes there.
 */
export function requireAccess(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const operation = routeAccess(c.req.method, c.req.routePath);
    if (operation === undefined || !isOperation(operation)) {
      // A programming error, caught by tests/access_routes_test.ts: refuse rather than allow.
      throw new Error(`${c.req.method} ${c.req.routePath} has no operation in the access table`);
    }
    const principal = await authenticateBearer(deps, {
      presented: bearerToken(c.req.header("Authorization")),
      address: clientAddress(c, deps.config.trustProxy),
    });
    await authorize(deps.sql, principal, operation, {
      environmentId: c.req.param("project_id"),
      projectHashid: c.req.param("hashid"),
    });
    c.set("principal", principal);
    c.set("clock", deps.clock);
    await next();
  };
}

/** Who is changing something in this request, for the audit entry the service writes. */
export function auditOf(c: Context<AppEnv>): AuditContext {
  return auditContext(c.get("principal"), c.env.requestId, c.get("clock").now());
}
