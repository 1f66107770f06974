import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Logger } from "../services/log.ts";
import type { AppEnv } from "./deps.ts";
import { errorResponse } from "./errors.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

const limit: MiddlewareHandler<AppEnv> = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => errorResponse("payload_too_large", "request body is larger than 1 MiB"),
});

/**
 * The links CSV imports (the admin API's and the dashboard's upload) stream their body under a
 * limit of their own (services/links/csv_text.ts).
 */
const IMPORT_PATH = /^\/(api\/v1\/projects|dashboard\/environments)\/[^/]+\/links\/import$/;

/**
 * Bodies over 1 MiB are refused (413). GET and HEAD requests carry none the app reads, so the
 * hottest paths (link lookup, the link host) skip the check's per-request cost.
 */
export const limitBody: MiddlewareHandler<AppEnv> = (c, next) =>
  c.req.method === "GET" || c.req.method === "HEAD" ||
    (c.req.method === "POST" && IMPORT_PATH.test(c.req.path))
    ? next()
    : limit(c, next);

// Request ids: a random prefix per process and a counter, unique across instances and cheaper
// than a UUID per request (a twentieth of a link lookup's time went to randomUUID).
const idPrefix = crypto.randomUUID().slice(0, 8);
let idCounter = 0;
export function nextRequestId(): string {
  return `${idPrefix}-${(++idCounter).toString(36)}`;
}

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
