import { Hono } from "hono";
import { createApiKeyBody } from "../inputs/access.ts";
import { createApiKey, listApiKeys, revokeApiKey } from "../services/access/api_keys.ts";
import { listAudit, parseAuditPage } from "../services/access/audit.ts";
import type { AppDeps } from "../services/deps.ts";
import { getEnvironmentOrThrow } from "../services/projects.ts";
import { auditOf, requireAccess } from "./access.ts";
import { readBody } from "./body.ts";
import type { AppEnv } from "./deps.ts";

/** Team access over REST: an environment's API keys, the audit logs. */
export function accessRoutes(deps: AppDeps): Hono<AppEnv> {
  const { sql, clock } = deps;
  const app = new Hono<AppEnv>();
  const auth = requireAccess(deps);
  const keys = "/projects/:project_id/api_keys";

  // POST /api/v1/projects/:project_id/api_keys – create a key, its value shown once
  app.post(keys, auth, async (c) => {
    const body = await readBody(c, createApiKeyBody);
    const key = await createApiKey(
      sql,
      clock,
      c.get("principal"),
      c.req.param("project_id"),
      body,
      auditOf(c),
    );
    return c.json({ api_key: key }, 201);
  });

  // GET /api/v1/projects/:project_id/api_keys – keys not revoked, values hidden
  app.get(keys, auth, async (c) => {
    return c.json({ api_keys: await listApiKeys(sql, c.req.param("project_id")) });
  });

  // DELETE /api/v1/projects/:project_id/api_keys/:key_id – revoke: the next request is a 401
  app.delete(`${keys}/:key_id`, auth, async (c) => {
    await revokeApiKey(
      sql,
      clock,
      c.req.param("project_id"),
      c.req.param("key_id"),
      auditOf(c),
    );
    return c.body(null, 204);
  });

  // GET /api/v1/projects/:project_id/audit_log – the project's changes, newest first
  app.get("/projects/:project_id/audit_log", auth, async (c) => {
    const page = parseAuditPage({ limit: c.req.query("limit"), after: c.req.query("after") });
    const env = await getEnvironmentOrThrow(sql, c.req.param("project_id"));
    return c.json(await listAudit(sql, env.projectId, page));
  });

  // GET /api/v1/admin/audit_log – the whole instance's changes, newest first
  app.get("/admin/audit_log", auth, async (c) => {
    const page = parseAuditPage({ limit: c.req.query("limit"), after: c.req.query("after") });
    return c.json(await listAudit(sql, null, page));
  });

  return app;
}
