import { Hono } from "hono";
import { authorizeProjectUpdate } from "../services/access/authorize.ts";
import { createFeedToken, listFeedTokens, revokeFeedToken } from "../services/feed/tokens.ts";
import {
  createProject,
  getProjectOrThrow,
  regenerateProjectKey,
  updateProject,
} from "../services/projects/projects.ts";
import { readBody } from "./body.ts";
import { createProjectBody, createTokenBody, updateProjectBody } from "../inputs/admin.ts";
import type { AppDeps } from "../services/deps.ts";
import { auditOf, requireAccess } from "./access.ts";
import type { AppEnv } from "./deps.ts";

/** The dashboard's operations: CONTRACT.md's instance-admin table. */
export function adminRoutes(deps: AppDeps): Hono<AppEnv> {
  const { sql, clock, config } = deps;
  const app = new Hono<AppEnv>();
  const auth = requireAccess(deps);

  // POST /api/v1/admin/projects – create a project with both environments; the key is shown once
  app.post("/admin/projects", auth, async (c) => {
    const body = await readBody(c, createProjectBody);
    const { project, projectKey } = await createProject(sql, body, auditOf(c));
    return c.json({ project: { ...project, project_key: projectKey } }, 201);
  });

  // GET /api/v1/admin/projects/:hashid – a project without its key
  app.get("/admin/projects/:hashid", auth, async (c) => {
    return c.json({ project: await getProjectOrThrow(sql, c.req.param("hashid")) });
  });

  // PATCH /api/v1/admin/projects/:hashid – rename, Enterprise, link domain and apps
  app.patch("/admin/projects/:hashid", auth, async (c) => {
    const body = await readBody(c, updateProjectBody);
    await authorizeProjectUpdate(sql, c.get("principal"), c.req.param("hashid"), body);
    return c.json({
      project: await updateProject(sql, c.req.param("hashid"), body, auditOf(c), {
        defaultHost: new URL(config.linkBaseUrl).hostname,
      }),
    });
  });

  // POST /api/v1/admin/projects/:hashid/regenerate_key – new key, the old one stops at once
  app.post("/admin/projects/:hashid/regenerate_key", auth, async (c) => {
    return c.json({
      project_key: await regenerateProjectKey(sql, c.req.param("hashid"), auditOf(c)),
    });
  });

  // POST /api/v1/projects/:project_id/event_stream_tokens – create a feed token, shown once
  app.post("/projects/:project_id/event_stream_tokens", auth, async (c) => {
    const body = await readBody(c, createTokenBody);
    const token = await createFeedToken(
      sql,
      clock,
      c.req.param("project_id"),
      body.name,
      auditOf(c),
    );
    return c.json({ token }, 201);
  });

  // GET /api/v1/projects/:project_id/event_stream_tokens – active tokens, values hidden
  app.get("/projects/:project_id/event_stream_tokens", auth, async (c) => {
    return c.json({ tokens: await listFeedTokens(sql, c.req.param("project_id")) });
  });

  // DELETE /api/v1/projects/:project_id/event_stream_tokens/:token_id – revoke
  app.delete("/projects/:project_id/event_stream_tokens/:token_id", auth, async (c) => {
    await revokeFeedToken(
      sql,
      clock,
      c.req.param("project_id"),
      c.req.param("token_id"),
      auditOf(c),
    );
    return c.body(null, 204);
  });

  return app;
}
