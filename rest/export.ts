import { Hono } from "hono";
import type { AppDeps, AppEnv } from "./deps.ts";

/** The history export: GET /api/v1/projects/:project_id/export (instance admin). */
export function exportRoutes(_deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  return app;
}
