import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { routePath } from "hono/route";
import type { Logger } from "../services/log.ts";
import { observeRequest } from "../services/monitoring/metrics.ts";
import type { AppEnv } from "./deps.ts";
import { errorResponse, toErrorResponse } from "./errors.ts";

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

/** A client's own X-Request-Id is kept when it is short and plain (hono's request-id rule). */
const PLAIN_ID = /^[\w\-=]{1,255}$/;

/**
 * Every request's frame, as one middleware rather than three (request id, access log, body
 * limit: each level of hono's chain cost the hottest paths a dispatch of its own):
 * - the request id: the client's X-Request-Id when plain, else nextRequestId(); set as
 *   `requestId` and sent back as the X-Request-Id header of every response, also the plain
 *   Responses the hot paths build (hono's request-id middleware only reached answers built
 *   through the context);
 * - bodies over 1 MiB refused (limitBody);
 * - one log line per request: no headers, no query string, no body, so no secret can leak;
 * - the request in the metrics, by the template of the route that answered it (hono's
 *   routePath: `/:link_path`, never the path itself).
 */
export function requestFrame(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const start = performance.now();
    const id = requestIdOf(c.req.raw);
    c.set("requestId", id);
    // A refused body's 413 is returned, not set: hono's chain would have set it.
    const refused = await limitBody(c, next);
    if (refused instanceof Response) c.res = refused;
    let res = c.res;
    if (res.status !== 101) {
      const sent = withRequestId(res, id);
      if (sent !== res) {
        c.res = undefined;
        c.res = res = sent;
      }
    }
    logRequest(logger, id, c.req.method, c.req.path, res.status, start);
    observeRequest(routePath(c), c.req.method, res.status, performance.now() - start);
  };
}

/** The response with its X-Request-Id header: itself, or a copy when its headers are immutable. */
function withRequestId(res: Response, id: string): Response {
  try {
    res.headers.set("X-Request-Id", id);
    return res;
  } catch {
    // Immutable headers (a fetched or redirect Response): a copy with them.
    const copy = new Response(res.body, res);
    copy.headers.set("X-Request-Id", id);
    return copy;
  }
}

/**
 * A request answered before hono's routing and context (the hottest routes: rest/sdk.ts
 * sdkLinkFastPath, app.ts's POST /graphql) with requestFrame's frame: the same request id and
 * X-Request-Id header, the same log line (`path` is hono's c.req.path: no query string), errors
 * mapped by rest/errors.ts as app.onError maps them, the same metrics under `route` (the
 * template hono would have matched; `path` when it has no parameter). The body limit is the
 * caller's to check.
 */
export async function answerFramed(
  logger: Logger,
  req: Request,
  path: string,
  answer: (requestId: string) => Promise<Response>,
  route: string = path,
): Promise<Response> {
  const start = performance.now();
  const id = requestIdOf(req);
  let res: Response;
  try {
    res = await answer(id);
  } catch (err) {
    res = toErrorResponse(err, logger, id);
  }
  res = withRequestId(res, id);
  logRequest(logger, id, req.method, path, res.status, start);
  observeRequest(route, req.method, res.status, performance.now() - start);
  return res;
}

/**
 * Whether requestFrame would let this request's body through without reading it: a
 * Content-Length within the limit and no Transfer-Encoding (hono's bodyLimit rule). Any other
 * body (chunked, no length, over the limit) goes through hono, which counts or refuses it.
 */
export function declaredWithinLimit(req: Request): boolean {
  const length = req.headers.get("content-length");
  return length !== null && !req.headers.has("transfer-encoding") &&
    parseInt(length, 10) <= MAX_BODY_BYTES;
}

/** The request's id: the client's X-Request-Id when plain, else a new one. */
export function requestIdOf(req: Request): string {
  const given = req.headers.get("X-Request-Id");
  return given !== null && PLAIN_ID.test(given) ? given : nextRequestId();
}

/** The access log line of a request that started at `start` (performance.now()). */
export function logRequest(
  logger: Logger,
  id: string,
  method: string,
  path: string,
  status: number,
  start: number,
): void {
  logger.info("request", {
    request_id: id,
    method,
    path,
    status,
    ms: Math.round((performance.now() - start) * 10) / 10,
  });
}
