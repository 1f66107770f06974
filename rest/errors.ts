// The one place where errors become HTTP responses: services/errors.ts classifies, this writes
// the contract's error body.
import {
  type ClassifiedError,
  classifyError,
  ERROR_STATUS,
  type ErrorCode,
} from "../services/errors.ts";
import { describeError, type Logger } from "../infra/log.ts";

export function errorResponse(
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
  details: Record<string, unknown> = {},
): Response {
  const status = ERROR_STATUS[code];
  return Response.json({ error: { status, code, message }, ...details }, { status, headers });
}

/**
 * What `err` means to a client (services/errors.ts classifyError), logged as its class says. The
 * one mapping of REST's answers and of the MCP tools' errors (rest/mcp_tools.ts).
 */
export function classifyAndLog(
  err: unknown,
  logger: Logger,
  requestId: string | undefined,
): ClassifiedError {
  const e = classifyError(err);
  if (e.log !== "none") {
    logger[e.log](e.logMessage ?? e.message, { request_id: requestId, ...describeError(err) });
  }
  return e;
}

export function toErrorResponse(
  err: unknown,
  logger: Logger,
  requestId: string | undefined,
): Response {
  const e = classifyAndLog(err, logger, requestId);
  const headers: Record<string, string> = e.retryAfter === undefined
    ? {}
    : { "Retry-After": String(e.retryAfter) };
  return errorResponse(e.code, e.message, headers, e.details);
}
