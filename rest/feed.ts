import { Hono } from "hono";
import type { AppDeps, AppEnv } from "./deps.ts";

/** The feed API: GET /api/v1/projects/:project_id/event_stream. */
export function feedRoutes(_deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  return app;
}
