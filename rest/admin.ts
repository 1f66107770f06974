import { Hono } from "hono";
import { authorizeProjectUpdate } from "../services/access/authorize.ts";
import { createFeedToken, listFeedTokens, revokeFeedToken } from "../services/feed/tokens.ts";
import {
  createProject,
  getProjectOrThrow,
  regenerateProjectKey,
  updateProject,
} from "../services/projects/projects.ts";
import { readBody, readLimitedText } from "./body.ts";
import { MAX_ECB_FILE_BYTES, parseEcbRates } from "../services/fx/ecb.ts";
import { storeRates } from "../services/fx/rates.ts";
import { createProjectBody, createTokenBody, updateProjectBody } from "../inputs/admin.ts";
import type { AppDeps } from "../services/deps.ts";
import { auditOf, requireAccess } from "./access.ts";
import type { AppEnv } from "./deps.ts";
import { ApiError } from "../services/errors.ts";
import { setQrLogo } from "../services/links/qr_logo.ts";
import { MAX_LOGO_BYTES } from "../services/links/qr.ts";

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

  // PUT /api/v1/admin/projects/:hashid/qr_logo – the logo drawn in the project's QR codes (PNG
  // or SVG, the body itself, at most 256 KiB)
  app.put("/admin/projects/:hashid/qr_logo", auth, async (c) => {
    const declared = Number(c.req.header("Content-Length") ?? "0");
    const tooLarge = () =>
      new ApiError("payload_too_large", `the logo is larger than ${MAX_LOGO_BYTES / 1024} KiB`);
    if (declared > MAX_LOGO_BYTES) throw tooLarge();
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    if (bytes.length > MAX_LOGO_BYTES) throw tooLarge();
    if (bytes.length === 0) {
      throw new ApiError("invalid_field", "logo: the body is empty", { field: "logo" });
    }
    const logo = await setQrLogo(
      sql,
      c.req.param("hashid"),
      bytes,
      c.req.header("Content-Type") ?? "",
      auditOf(c),
    );
    return c.json({ qr_logo: logo });
  });

  // POST /api/v1/admin/fx_rates – store the ECB's reference rates (the body is its XML file) and
  // reconvert the purchases they change; a malformed file stores nothing
  app.post("/admin/fx_rates", auth, async (c) => {
    const xml = await readLimitedText(c, MAX_ECB_FILE_BYTES, "the rates file");
    const result = await storeRates(sql, parseEcbRates(xml));
    return c.json({
      fx_rates: {
        rates: result.rates,
        changed: result.changed,
        reconverted: result.reconverted,
        last_day: result.lastDay,
      },
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
