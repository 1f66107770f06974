import { Hono } from "hono";
import type { AppDeps, AppEnv } from "./deps.ts";

/** The SDK API under {base_url} = /api/v1/sdk: generate_link, link, metrics_for_project, events. */
export function sdkRoutes(_deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  return app;
}
