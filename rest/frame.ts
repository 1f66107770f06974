// Every request's frame, around the one route table (app.ts): the request id, the body limit,
// one access log line, and errors mapped by rest/errors.ts. It wraps Hono's `fetch` rather than
// running as a middleware, so that a route with a single handler (every hot route) is dispatched
// by Hono without composing a middleware chain.
import type { Hono } from "hono";
import type { Logger } from "../infra/log.ts";
import { observeRequest } from "../services/monitoring/metrics.ts";
import type { RequestBindings } from "../inputs/headers.ts";
import type { AppEnv } from "./deps.ts";
import { errorResponse, toErrorResponse } from "./errors.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The links CSV imports (the admin API's and the dashboard's upload) stream their body under a
 * limit of their own (inputs/link_csv.ts).
 */
const IMPORT_PATH = /^\/(api\/v1\/projects|dashboard\/environments)\/[^/]+\/links\/import$/;
/** The ECB's rate files (the full history is about 6 MB): read under their own limit. */
const FX_RATES_PATH = "/api/v1/admin/fx_rates";

// Request ids: a random prefix per process and a counter, unique across instances and cheaper
// than a UUID per request.
const idPrefix = crypto.randomUUID().slice(0, 8);
let idCounter = 0;
export function nextRequestId(): string {
  return `${idPrefix}-${(++idCounter).toString(36)}`;
}

/** A client's own X-Request-Id is kept when it is short and plain (hono's request-id rule). */
const PLAIN_ID = /^[\w\-=]{1,255}$/;

/** The request's id: the client's X-Request-Id when plain, else a new one. */
function requestIdOf(req: Request): string {
  const given = req.headers.get("X-Request-Id");
  return given !== null && PLAIN_ID.test(given) ? given : nextRequestId();
}

/** The path of a request URL, without its query (as Hono's `c.req.path` reads it). */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf(":") + 3);
  const query = url.indexOf("?", start);
  return url.slice(start, query === -1 ? undefined : query);
}

export type Framed = (req: Request, info?: Deno.ServeHandlerInfo) => Promise<Response>;

/**
 * The app's handler: for each request
 * - its id, the client's X-Request-Id when plain, else nextRequestId(): handed to the routes as
 *   `c.env.requestId` and sent back as the X-Request-Id header of every response;
 * - a body over 1 MiB refused with 413 before any route reads it (bodyWithinLimit);
 * - dispatch through the route table; an error no route mapped is mapped here, as Hono's
 *   onError maps the others;
 * - one log line: no headers, no query string, no body, so no secret can leak;
 * - when the metrics are served, the request in them, by the template of the route that answered
 *   it (routeTemplate, a second match of the router: not paid when they are not).
 */
export function frame(
  logger: Logger,
  routes: Hono<AppEnv>,
  /** Whether the metrics are served (METRICS_PORT): else nothing is counted per request. */
  metrics: boolean,
): Framed {
  return async (req, info) => {
    const start = performance.now();
    const requestId = requestIdOf(req);
    const path = pathOf(req.url);
    let res: Response;
    try {
      const admitted = await bodyWithinLimit(req, path);
      if (admitted === null) {
        res = errorResponse("payload_too_large", "request body is larger than 1 MiB");
      } else {
        const env: RequestBindings = { requestId, remoteAddr: info?.remoteAddr };
        res = await routes.fetch(admitted, env);
      }
    } catch (err) {
      res = toErrorResponse(err, logger, requestId);
    }
    if (res.status !== 101) res = withRequestId(res, requestId);
    const ms = performance.now() - start;
    logger.info("request", {
      request_id: requestId,
      method: req.method,
      path,
      status: res.status,
      ms: Math.round(ms * 10) / 10,
    });
    if (metrics) {
      observeRequest(routeTemplate(routes, req.method, path), req.method, res.status, ms);
    }
    return res;
  };
}

/**
 * The template of the route that answers `method` `path` (`/api/v1/sdk/link/:link_path`), never
 * the path itself: the first route the table matches that is not a middleware, the one Hono
 * dispatches to (a route answers without calling the next); "unmatched" for the table's
 * notFound. One more match of Hono's router, which keeps the routes with their templates.
 */
function routeTemplate(routes: Hono<AppEnv>, method: string, path: string): string {
  const [matched] = routes.router.match(method === "HEAD" ? "GET" : method, path);
  for (const [[, route]] of matched) {
    if (route.method !== "ALL") return route.path;
  }
  return "unmatched";
}

/**
 * The request if its body is within MAX_BODY_BYTES, else null. GET and HEAD carry none the app
 * reads, and a declared Content-Length answers without reading; a body of unknown length
 * (chunked) is read here up to the limit and handed on as bytes. The CSV imports and the
 * exchange rates pass: they read under their own limits.
 */
async function bodyWithinLimit(req: Request, path: string): Promise<Request | null> {
  if (req.method === "GET" || req.method === "HEAD" || req.body === null) return req;
  if (req.method === "POST" && (IMPORT_PATH.test(path) || path === FX_RATES_PATH)) return req;
  const length = req.headers.get("Content-Length");
  if (length !== null && !req.headers.has("Transfer-Encoding")) {
    return Number(length) <= MAX_BODY_BYTES ? req : null;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req.body) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  const headers = new Headers(req.headers);
  headers.delete("Transfer-Encoding");
  headers.set("Content-Length", String(size));
  return new Request(req.url, { method: req.method, headers, body, signal: req.signal });
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
