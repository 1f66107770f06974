// The one place where errors become HTTP responses: services/errors.ts classifies, this writes
// the contract's error body.
import { classifyError, ERROR_STATUS, type ErrorCode } from "../services/errors.ts";
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

export function toErrorResponse(
  err: unknown,
  logger: Logger,
  requestId: string | undefined,
): Response {
  const e = classifyError(err);
  if (e.log !== "none") {
    logger[e.log](e.logMessage ?? e.message, { request_id: requestId, ...describeError(err) });
  }
  const headers: Record<string, string> = e.retryAfter === undefined
    ? {}
    : { "Retry-After": String(e.retryAfter) };
  return errorResponse(e.code, e.message, headers, e.details);
}
