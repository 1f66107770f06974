import { Hono } from "hono";
import { z } from "zod";
import { ApiError } from "../services/errors.ts";
import { planExport, streamExport } from "../services/analytics/history_export.ts";
import { describeError } from "../infra/log.ts";
import { requireAccess } from "./access.ts";
import type { AppDeps } from "../services/deps.ts";
import type { AppEnv } from "./deps.ts";

// ISO 8601: a date and time with an offset (`2026-03-01T00:00:00Z`), or a date (UTC midnight).
const instant = z.union([z.iso.datetime({ offset: true }), z.iso.date()])
  .transform((value) => new Date(value));

/** `from` or `to` as a Date, or a 400 invalid_field naming the parameter. */
function parseInstant(name: "from" | "to", raw: string | undefined): Date {
  if (raw === undefined || raw === "") {
    throw new ApiError("invalid_field", `${name}: required (ISO 8601, e.g. 2026-03-01T00:00:00Z)`);
  }
  const parsed = instant.safeParse(raw);
  if (!parsed.success || Number.isNaN(parsed.data.getTime())) {
    throw new ApiError(
      "invalid_field",
      `${name}: must be an ISO 8601 date and time with an offset, e.g. 2026-03-01T00:00:00Z`,
    );
  }
  const year = parsed.data.getUTCFullYear();
  if (year < 1970 || year > 9999) {
    throw new ApiError("invalid_field", `${name}: must be between 1970 and 9999`);
  }
  return parsed.data;
}

/** The history export: GET /api/v1/projects/:project_id/export (instance admin). */
export function exportRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  // GET /api/v1/projects/:project_id/export – the environment's analytics history as NDJSON
  app.get("/projects/:project_id/export", requireAccess(deps), async (c) => {
    const plan = await planExport(deps.sql, c.req.param("project_id"), {
      from: parseInstant("from", c.req.query("from")),
      to: parseInstant("to", c.req.query("to")),
      eventTypes: c.req.queries("event_types[]") ?? [],
    }, {
      now: deps.clock.now(),
      analyticsRetentionDays: deps.config.analyticsRetentionDays,
    });
    const requestId = c.env.requestId;
    const body = streamExport(deps.sql, plan, {
      // Headers are gone by then: the client sees a cut-off stream, the operator this line.
      onError: (err) =>
        deps.logger.error("export failed mid-stream", {
          request_id: requestId,
          ...describeError(err),
        }),
    });
    return c.body(body, 200, {
      "Content-Type": "application/x-ndjson; charset=UTF-8",
      "Cache-Control": "no-store",
      // Events received before this instant are outside the analytics retention window.
      "Retained-Since": plan.retentionCutoff.toISOString(),
    });
  });

  return app;
}
