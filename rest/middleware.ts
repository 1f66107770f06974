import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Logger } from "../services/log.ts";
import type { AppEnv } from "./deps.ts";
import { errorResponse } from "./errors.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

export const limitBody: MiddlewareHandler<AppEnv> = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => errorResponse("payload_too_large", "request body is larger than 1 MiB"),
});

/** One log line per request: no headers, no query string, no body, so no secret can leak. */
export function accessLog(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const start = performance.now();
    await next();
    logger.info("request", {
      request_id: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - start) * 10) / 10,
    });
  };
}
