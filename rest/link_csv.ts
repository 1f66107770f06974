// Links as CSV: POST …/links/import (all or nothing, streamed) and GET …/links/export (streamed).
// The CSV text is read and written by inputs/link_csv.ts, which the dashboard's upload
// and download use too.
import { Hono } from "hono";
import { ApiError } from "../services/errors.ts";
import type { AppDeps } from "../services/deps.ts";
import { importLinks } from "../services/links/csv.ts";
import { linkExportBody, readImportRows } from "../inputs/link_csv.ts";
import { describeError } from "../infra/log.ts";
import { auditOf, requireAccess } from "./access.ts";
import type { AppEnv } from "./deps.ts";

export function linkCsvRoutes(deps: AppDeps): Hono<AppEnv> {
  const { sql } = deps;
  const app = new Hono<AppEnv>();
  const auth = requireAccess(deps);

  // POST /api/v1/projects/:project_id/links/import – CSV of links, all or nothing
  app.post("/projects/:project_id/links/import", auth, async (c) => {
    const type = c.req.header("Content-Type") ?? "";
    if (type !== "" && !/^text\/(csv|plain)\b/i.test(type)) {
      throw new ApiError("invalid_field", "Content-Type: must be text/csv", {
        field: "Content-Type",
      });
    }
    const result = await importLinks(
      sql,
      c.req.param("project_id"),
      readImportRows(c.req.raw.body),
      auditOf(c),
    );
    return c.json(result, 201);
  });

  // GET /api/v1/projects/:project_id/links/export – every link with its counters, as CSV
  app.get("/projects/:project_id/links/export", auth, async (c) => {
    const requestId = c.env.requestId;
    const body = await linkExportBody(sql, c.req.param("project_id"), {
      now: deps.clock.now(),
      withSdkLinks: true,
      onError: (err) =>
        deps.logger.error("link export failed mid-stream", {
          request_id: requestId,
          ...describeError(err),
        }),
    });
    return c.body(body, 200, {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="links-${c.req.param("project_id")}.csv"`,
      "Cache-Control": "no-store",
    });
  });

  return app;
}
