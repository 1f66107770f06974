import { Hono } from "hono";
import type { AppDeps, AppEnv } from "./deps.ts";

/** The link host: GET/HEAD /<path> on the service's root. Mounted last. */
export function linkHostRoutes(_deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  return app;
}
