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
import { getEnvironmentOrThrow } from "../services/projects/projects.ts";
import { getManagedLinkOrThrow } from "../services/links/manage.ts";
import { accessPath } from "../services/links/links.ts";
import { splitFigures, splitOf, splitResults } from "../services/links/split_results.ts";
import { qrOptionsQuery } from "../inputs/qr.ts";
import { checkColours, qrPng, qrSvg } from "../services/links/qr.ts";
import { getQrLogoOrThrow } from "../services/links/qr_logo.ts";
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

  // GET /api/v1/projects/:project_id/links/:link_path/split – a split's results per variant,
  // with the probability that each is best
  app.get("/projects/:project_id/links/:link_path/split", auth, async (c) => {
    const env = await getEnvironmentOrThrow(sql, c.req.param("project_id"));
    const link = await getManagedLinkOrThrow(sql, env.id, c.req.param("link_path"));
    const rule = c.req.query("rule");
    const { label, split } = splitOf(link, rule === "" ? undefined : rule);
    const figures = await splitFigures(sql, env.id, [link.id]);
    return c.json(splitResults(label, split, figures.get(link.id) ?? []));
  });

  // GET /api/v1/projects/:project_id/links/:link_path/qr – the link's QR code, SVG or PNG
  app.get("/projects/:project_id/links/:link_path/qr", auth, async (c) => {
    const options = qrOptionsQuery.parse(c.req.query());
    checkColours(options.fg, options.bg);
    const env = await getEnvironmentOrThrow(sql, c.req.param("project_id"));
    const link = await getManagedLinkOrThrow(sql, env.id, c.req.param("link_path"));
    const logo = options.logo ? await getQrLogoOrThrow(sql, env.id) : null;
    const url = accessPath(config.linkBaseUrl, link);
    const qr = { ...options, logo };
    const headers = {
      "Cache-Control": "private, no-cache",
      "X-Content-Type-Options": "nosniff",
      // An SVG opened on its own is a document: nothing in it may run or load.
      "Content-Security-Policy": "default-src 'none'; img-src data:; style-src 'unsafe-inline'",
      "Content-Disposition": `inline; filename="qr-${link.path}.${options.format}"`,
    };
    if (options.format === "png") {
      return c.body(qrPng(url, qr) as Uint8Array<ArrayBuffer>, 200, {
        ...headers,
        "Content-Type": "image/png",
      });
    }
    return c.body(qrSvg(url, qr), 200, { ...headers, "Content-Type": "image/svg+xml" });
  });

  return app;
}
