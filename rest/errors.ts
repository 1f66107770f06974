// The one place where errors become HTTP responses.
import { z } from "zod";
import {
  ApiError,
  ERROR_STATUS,
  type ErrorCode,
  fieldPath,
  isDatabaseUnavailable,
  isDataException,
} from "../services/errors.ts";
import { describeError, type Logger } from "../services/log.ts";

export function errorResponse(
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): Response {
  const status = ERROR_STATUS[code];
  return Response.json({ error: { status, code, message } }, { status, headers });
}

export function toErrorResponse(
  err: unknown,
  logger: Logger,
  requestId: string | undefined,
): Response {
  if (err instanceof ApiError) {
    const headers: Record<string, string> = err.retryAfter === undefined
      ? {}
      : { "Retry-After": String(err.retryAfter) };
    return errorResponse(err.code, err.message, headers);
  }
  if (err instanceof z.ZodError) {
    const issue = err.issues[0]!;
    const field = fieldPath(issue.path);
    return errorResponse("invalid_field", `${field}: ${issue.message}`);
  }
  if (isDataException(err)) {
    logger.warn("value refused by the database", { request_id: requestId, ...describeError(err) });
    return errorResponse("invalid_field", "a value in the request cannot be stored");
  }
  if (isDatabaseUnavailable(err)) {
    logger.error("database unavailable", { request_id: requestId, ...describeError(err) });
    return errorResponse("unavailable", "the service is unavailable; retry with backoff", {
      "Retry-After": "1",
    });
  }
  logger.error("unhandled error", { request_id: requestId, ...describeError(err) });
  return errorResponse("internal", "internal error; retry with backoff");
}
