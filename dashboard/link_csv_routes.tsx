// GET/POST /dashboard/environments/:project_id/links/import and …/links/export.csv – an
// environment's dashboard links as CSV, through the admin API's import and export services.
import type { Hono } from "hono";
import { ApiError } from "../services/errors.ts";
import type { AppDeps } from "../services/deps.ts";
import { importLinks, ImportRefused } from "../services/links/csv.ts";
import { linkExportBody, MAX_IMPORT_BYTES, readImportRows } from "../inputs/link_csv.ts";
import { describeError } from "../infra/log.ts";
import { csrfTokenMatches } from "../services/access/sessions.ts";
import { type PageKit, sentence } from "./kit.tsx";
import { envBase } from "./layout.tsx";
import { linksPage } from "./link_routes.tsx";
import { auditOf, CSRF_FIELD, type DashboardEnv } from "./security.ts";
import { openUpload, UploadCut } from "./upload.ts";

export function linkCsvPages(
  app: Hono<DashboardEnv>,
  deps: AppDeps,
  kit: PageKit,
): void {
  const { sql, clock } = deps;
  const { loadEnv } = kit;

  // POST /dashboard/environments/:project_id/links/import – a CSV file, all or nothing (the
  // admin API's import service). The body is streamed: the form token, which the form puts
  // before the file, is checked here as the body is read (security.ts leaves it to this route).
  app.post("/environments/:project_id/links/import", async (c) => {
    const ctx = await loadEnv(c);
    const upload = await openUpload(c.req.raw, {
      fileField: "file",
      accept: (fields) => csrfTokenMatches(ctx.session, fields[CSRF_FIELD]),
      maxFileBytes: MAX_IMPORT_BYTES,
    });
    if (!upload.ok) {
      if (upload.reason === "no_file") {
        return await linksPage(deps, c, ctx, {
          importReport: { message: "Choose a CSV file to import.", errors: [] },
        });
      }
      return c.text(
        "This form has expired or was not sent from the dashboard. Reload the page and try again.",
        403,
      );
    }
    try {
      const { imported } = await importLinks(
        sql,
        ctx.env.id,
        readImportRows(upload.file),
        auditOf(c),
      );
      return c.redirect(`${envBase(ctx.env.id)}/links?imported=${imported}`, 303);
    } catch (err) {
      if (err instanceof ImportRefused) {
        return await linksPage(deps, c, ctx, {
          importReport: { message: sentence(err.message), errors: err.errors },
        });
      }
      if (err instanceof ApiError && err.code === "payload_too_large") {
        return await linksPage(deps, c, ctx, {
          importReport: {
            message: `${sentence(err.message)} Nothing was imported: split it into smaller files.`,
            errors: [],
          },
        });
      }
      if (err instanceof UploadCut) {
        return await linksPage(deps, c, ctx, {
          importReport: {
            message: "The upload ended before the whole file arrived. Nothing was imported.",
            errors: [],
          },
        });
      }
      throw err;
    } finally {
      await upload.finish();
    }
  });

  // GET /dashboard/environments/:project_id/links/export.csv – the links listed here (archived
  // ones too) with their counters, streamed as the admin API's export is
  app.get("/environments/:project_id/links/export.csv", async (c) => {
    const { env } = await loadEnv(c);
    const requestId = c.env.requestId;
    const body = await linkExportBody(sql, env.id, {
      now: clock.now(),
      withSdkLinks: false,
      onError: (err) =>
        deps.logger.error("dashboard link export failed mid-stream", {
          request_id: requestId,
          ...describeError(err),
        }),
    });
    return c.body(body, 200, {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="links-${env.id}.csv"`,
    });
  });
}
