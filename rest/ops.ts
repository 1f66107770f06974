import { Hono } from "hono";
import { ApiError } from "../services/errors.ts";
import type { AppDeps } from "../services/deps.ts";
import type { AppEnv } from "./deps.ts";
import { OPENAPI_DOCUMENT } from "./openapi.ts";

export function opsRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  // GET /healthz – the process answers
  app.get("/healthz", (c) => c.json({ status: "ok" }));

  // GET /readyz – the database answers
  app.get("/readyz", async (c) => {
    try {
      await deps.sql`select 1`;
    } catch (cause) {
      throw new ApiError("unavailable", "database is not reachable", { cause });
    }
    return c.json({ status: "ready" });
  });

  // GET /openapi.json – OpenAPI 3.1 of every REST path
  app.get("/openapi.json", (c) => c.json(OPENAPI_DOCUMENT));

  return app;
}
