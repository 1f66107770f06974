import { Hono } from "hono";
import type { Context } from "hono";
import { createAccountBody, createApiKeyBody, putMemberBody } from "../inputs/access.ts";
import { createAccount, deleteAccount, listAccounts } from "../services/access/accounts.ts";
import { listMembers, removeMember, setMemberRole } from "../services/access/members.ts";
import { revokeEverythingMadeBy } from "../services/access/revoke_made.ts";
import { createApiKey, listApiKeys, revokeApiKey } from "../services/access/api_keys.ts";
import { listAudit, parseAuditPage } from "../services/access/audit.ts";
import type { AppDeps } from "../services/deps.ts";
import { getEnvironmentOrThrow } from "../services/projects/projects.ts";
import { auditOf, requireAccess } from "./access.ts";
import { readBody } from "./body.ts";
import type { AppEnv } from "./deps.ts";

/**
 * Where a person opens the dashboard: this request's origin, or the one the trusted proxy names.
 */
function publicOrigin(c: Context<AppEnv>, trustProxy: boolean): string {
  const url = new URL(c.req.url);
  if (trustProxy) {
    const proto = c.req.header("X-Forwarded-Proto")?.split(",")[0]?.trim();
    const host = c.req.header("X-Forwarded-Host")?.split(",")[0]?.trim();
    if (proto === "https" || proto === "http") url.protocol = `${proto}:`;
    if (host && /^[A-Za-z0-9.:[\]-]{1,300}$/.test(host)) url.host = host;
  }
  return url.origin;
}

/** Team access over REST: accounts, members, an environment's API keys, the audit logs. */
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

  // POST /api/v1/admin/accounts – an account and its setup link (shown once, valid 7 days)
  app.post("/admin/accounts", auth, async (c) => {
    const body = await readBody(c, createAccountBody);
    const { account, setupToken } = await createAccount(sql, clock, body, auditOf(c));
    const setupUrl = `${publicOrigin(c, deps.config.trustProxy)}/dashboard/setup?token=${
      encodeURIComponent(setupToken)
    }`;
    return c.json({ account, setup_url: setupUrl }, 201);
  });

  // GET /api/v1/admin/accounts – every account
  app.get("/admin/accounts", auth, async (c) => {
    return c.json({ accounts: await listAccounts(sql) });
  });

  // DELETE /api/v1/admin/accounts/:account_id – its sessions and keys stop on the next request
  app.delete("/admin/accounts/:account_id", auth, async (c) => {
    await deleteAccount(sql, clock, c.req.param("account_id"), auditOf(c));
    return c.body(null, 204);
  });

  // POST /api/v1/admin/accounts/:account_id/revoke_made – revoke everything the person made
  app.post("/admin/accounts/:account_id/revoke_made", auth, async (c) => {
    const revoked = await revokeEverythingMadeBy(
      sql,
      clock,
      c.req.param("account_id"),
      auditOf(c),
    );
    return c.json({ revoked });
  });

  const members = "/admin/projects/:hashid/members";

  // GET /api/v1/admin/projects/:hashid/members – the project's members and their roles
  app.get(members, auth, async (c) => {
    return c.json({ members: await listMembers(sql, c.req.param("hashid")) });
  });

  // PUT /api/v1/admin/projects/:hashid/members/:account_id – add a member or change its role
  app.put(`${members}/:account_id`, auth, async (c) => {
    const body = await readBody(c, putMemberBody);
    const member = await setMemberRole(
      sql,
      c.req.param("hashid"),
      c.req.param("account_id"),
      body.role,
      c.get("principal"),
      auditOf(c),
    );
    return c.json({ member });
  });

  // DELETE /api/v1/admin/projects/:hashid/members/:account_id – remove; its keys are revoked
  app.delete(`${members}/:account_id`, auth, async (c) => {
    await removeMember(
      sql,
      clock,
      c.req.param("hashid"),
      c.req.param("account_id"),
      c.get("principal"),
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
