// Managing an environment's links (CONTRACT.md, "Managing links"): list, create with a chosen
// path and expiry, edit, archive, delete. Behind the access guard (rest/access.ts), as every
// admin route.
import { Hono } from "hono";
import {
  createManagedLinkBody,
  listLimit,
  listLinksQuery,
  patchLinkBody,
} from "../inputs/links.ts";
import { limitParam } from "../inputs/feed.ts";
import type { AppDeps } from "../services/deps.ts";
import {
  createManagedLink,
  deleteLink,
  listLinks,
  type ManagedLinkRow,
  toManagedLink,
  updateLink,
} from "../services/links/manage.ts";
import { auditOf, requireAccess } from "./access.ts";
import { readBody } from "./body.ts";
import type { AppEnv } from "./deps.ts";

export function linkRoutes(deps: AppDeps): Hono<AppEnv> {
  const { sql, config, clock } = deps;
  const app = new Hono<AppEnv>();
  const auth = requireAccess(deps);
  const managed = (row: ManagedLinkRow) => toManagedLink(row, config.linkBaseUrl, clock.now());

  // GET /api/v1/projects/:project_id/links – the environment's links, filtered, cursor-paged
  app.get("/projects/:project_id/links", auth, async (c) => {
    const limit = listLimit(limitParam(c.req.query("limit")));
    const query = listLinksQuery.parse(c.req.query());
    const after = c.req.query("after");
    const page = await listLinks(sql, c.req.param("project_id"), {
      ...query,
      limit,
      after: after === "" ? undefined : after,
    }, clock.now());
    return c.json({ links: page.links.map(managed), next_after: page.next_after });
  });

  // POST /api/v1/projects/:project_id/links – a link with generate_link's fields, a chosen path
  // and expiry
  app.post("/projects/:project_id/links", auth, async (c) => {
    const body = await readBody(c, createManagedLinkBody);
    const row = await createManagedLink(
      sql,
      c.req.param("project_id"),
      body,
      "api",
      auditOf(c),
    );
    return c.json({ link: managed(row) }, 201);
  });

  // PATCH /api/v1/projects/:project_id/links/:link_path – edit, (de)activate, archive, expiry
  app.patch("/projects/:project_id/links/:link_path", auth, async (c) => {
    const body = await readBody(c, patchLinkBody);
    const row = await updateLink(
      sql,
      c.req.param("project_id"),
      c.req.param("link_path"),
      body,
      auditOf(c),
    );
    return c.json({ link: managed(row) });
  });

  // DELETE /api/v1/projects/:project_id/links/:link_path – the link and its counters; the path
  // is retired
  app.delete("/projects/:project_id/links/:link_path", auth, async (c) => {
    await deleteLink(sql, c.req.param("project_id"), c.req.param("link_path"), auditOf(c));
    return c.body(null, 204);
  });

  return app;
}
