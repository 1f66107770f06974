// GET /dashboard/environments/:project_id/export[.ndjson] – an environment's events of a range of
// days as NDJSON: the form, and the streamed download through the admin API's export service.
import type { Hono } from "hono";
import { z } from "zod";
import type { AppDeps } from "../services/deps.ts";
import { ApiError, ERROR_STATUS } from "../services/errors.ts";
import { planExport, streamExport } from "../services/analytics/history_export.ts";
import { describeError } from "../infra/log.ts";
import type { PageKit } from "./kit.tsx";
import { ExportPage } from "./pages/export.tsx";
import type { DashboardEnv } from "./security.ts";

const DAY_MS = 86_400_000;
const dateInput = z.iso.date("must be a date (YYYY-MM-DD)");

export function exportPages(app: Hono<DashboardEnv>, deps: AppDeps, kit: PageKit): void {
  const { sql, clock, config } = deps;
  const { page, loadEnv } = kit;

  function defaultRange() {
    const today = clock.now().toISOString().slice(0, 10);
    const weekAgo = new Date(clock.now().getTime() - 6 * DAY_MS).toISOString().slice(0, 10);
    return { from: weekAgo, to: today };
  }

  // GET /dashboard/environments/:project_id/export – the export form
  app.get("/environments/:project_id/export", async (c) => {
    const ctx = await loadEnv(c);
    return page(
      c,
      <ExportPage
        {...ctx}
        {...defaultRange()}
        types={[]}
        retentionDays={config.analyticsRetentionDays}
      />,
    );
  });

  // GET /dashboard/environments/:project_id/export.ndjson – the streamed download; the form's
  // days are UTC and inclusive, so `to` becomes the start of the next day.
  app.get("/environments/:project_id/export.ndjson", async (c) => {
    const ctx = await loadEnv(c);
    const fromRaw = c.req.query("from") ?? "";
    const toRaw = c.req.query("to") ?? "";
    const types = c.req.queries("types") ?? [];
    const again = (error: string) =>
      page(
        c,
        <ExportPage
          {...ctx}
          from={fromRaw}
          to={toRaw}
          types={types}
          retentionDays={config.analyticsRetentionDays}
          error={error}
        />,
        400,
      );
    const from = dateInput.safeParse(fromRaw);
    const to = dateInput.safeParse(toRaw);
    if (!from.success) return again("From must be a date.");
    if (!to.success) return again("To must be a date.");
    let plan;
    try {
      plan = await planExport(sql, String(ctx.env.id), {
        from: new Date(`${from.data}T00:00:00Z`),
        to: new Date(new Date(`${to.data}T00:00:00Z`).getTime() + DAY_MS),
        eventTypes: types,
      }, { now: clock.now(), analyticsRetentionDays: config.analyticsRetentionDays });
    } catch (err) {
      if (err instanceof ApiError && ERROR_STATUS[err.code] === 400) {
        return again(
          err.code === "invalid_field" && err.message.startsWith("to: must be later")
            ? "To must not be before From."
            : err.code === "invalid_field"
            ? "One export covers at most 31 days: narrow the range."
            : "Choose event types from the list.",
        );
      }
      throw err;
    }
    const requestId = c.env.requestId;
    const body = streamExport(sql, plan, {
      onError: (err) =>
        deps.logger.error("dashboard export failed mid-stream", {
          request_id: requestId,
          ...describeError(err),
        }),
    });
    const filename = `events-${ctx.env.id}-${from.data}-to-${to.data}.ndjson`;
    return c.body(body, 200, {
      "Content-Type": "application/x-ndjson; charset=UTF-8",
      "Content-Disposition": `attachment; filename="${filename}"`,
    });
  });
}
