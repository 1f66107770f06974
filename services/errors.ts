import { z } from "zod";

/** The contract's error codes and the HTTP status each one answers with. */
export const ERROR_STATUS = {
  malformed_json: 400,
  invalid_field: 400,
  invalid_environment: 400,
  bad_cursor: 400,
  invalid_limit: 400,
  invalid_event_type: 400,
  unauthorized: 401,
  enterprise_required: 402,
  forbidden: 403,
  insufficient_scope: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  internal: 500,
  rate_limited: 503,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The one error type services throw; the REST and GraphQL edges each map it in one place. */
export class ApiError extends Error {
  override name = "ApiError";
  /** Seconds, for rate_limited. */
  readonly retryAfter: number | undefined;
  /**
   * The input the error is about, in REST's words (`limit`, `events[3].occurred_at`); the
   * message starts with it, so another transport can name it in its own words.
   */
  readonly field: string | undefined;
  /** Keys REST adds beside `error` in the body (an import's `errors` list). */
  readonly details: Record<string, unknown> | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: {
      cause?: unknown;
      retryAfter?: number;
      field?: string;
      details?: Record<string, unknown>;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.retryAfter = options.retryAfter;
    this.field = options.field;
    this.details = options.details;
  }
}

export function notFound(what: string): ApiError {
  return new ApiError("not_found", `${what} not found`);
}

/**
 * A PostgreSQL data exception (SQLSTATE class 22: a value it cannot store or compute). Input is
 * validated before it reaches SQL; this is the net under that, so such a value is a 400.
 */
export function isDataException(err: unknown): boolean {
  const e = err as { code?: unknown; severity?: unknown } | null;
  return typeof e?.code === "string" && e.code.startsWith("22") && e.severity !== undefined;
}

/** PostgreSQL's unique_violation SQLSTATE (of `constraint`, when given). */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint_name?: string; message?: unknown } | null;
  if (e?.code !== "23505") return false;
  if (constraint === undefined || e.constraint_name === constraint) return true;
  // On Citus the error is a shard's, relayed by the coordinator without the constraint's field:
  // its name, the shard's (suffixed with the shard's id), is only in the message.
  return e.constraint_name === undefined && typeof e.message === "string" &&
    new RegExp(`unique constraint "${constraint}(_\\d+)?"`).test(e.message);
}

/** PostgreSQL's foreign_key_violation SQLSTATE: a row refers to one that is not (or no longer) there. */
export function isForeignKeyViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === "23503";
}

// postgres.js connection error codes, and SQLSTATEs of a server that cannot serve right now
// (class 08 connection exceptions, 53 insufficient resources, 57P0x shutdown/cannot connect).
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  // A query written to a connection the server had just closed ("This socket has been ended
  // by the other party"): seen when PostgreSQL terminates the service's connections.
  "EPIPE",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  // A deadlock or serialisation failure: transient, the retry the client makes will pass.
  "40P01",
  "40001",
]);

/** True when the database, not the request, is why a query failed: answer 503, not 500. */
export function isDatabaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return false;
  return UNAVAILABLE_CODES.has(code) || code.startsWith("08") || code.startsWith("53") ||
    code.startsWith("57P") || (code === "XX000" && isCitusWorkerLost(err));
}

/**
 * Citus (docs/SCALING.md): a transaction that had written on a worker lost its connection to it.
 * Citus raises that with no SQLSTATE of its own (XX000), unlike its other connection failures
 * (08006); the transaction is rolled back, so a retry is what the client should do.
 */
function isCitusWorkerLost(err: unknown): boolean {
  const message = (err as { message?: unknown }).message;
  return typeof message === "string" &&
    message.startsWith("failure on connection marked as essential");
}

/** A dotted path as clients write it: `events[3].occurred_at`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    out += typeof part === "number" ? `[${part}]` : out ? `.${String(part)}` : String(part);
  }
  return out || "body";
}

/** What any error means to a client, whichever transport answers it. */
export interface ClassifiedError {
  code: ErrorCode;
  message: string;
  /** Seconds before a retry can pass (rate_limited, unavailable). */
  retryAfter?: number;
  /** The input the message starts with, in REST's words (see ApiError.field). */
  field?: string;
  /** Keys beside `error` in REST's body (see ApiError.details). */
  details?: Record<string, unknown>;
  /** How the server logs it: not at all (the client's doing), a warning, or an error. */
  log: "none" | "warn" | "error";
  /** The log line's text, when it is logged. */
  logMessage?: string;
}

/**
 * The one classification of errors, called by REST's mapper (rest/errors.ts) and GraphQL's
 * (graphql/errors.ts), which only translate the result to their wire formats: domain errors
 * keep their code; validation errors are invalid_field naming the field; PostgreSQL data
 * exceptions (class 22) are the request's fault; outages (connection classes 08, 53, 57P and
 * transient 40P01/40001) are retryable; anything else is an internal error, masked and logged.
 */
export function classifyError(err: unknown): ClassifiedError {
  if (err instanceof ApiError) {
    return {
      code: err.code,
      message: err.message,
      log: "none",
      ...(err.retryAfter === undefined ? {} : { retryAfter: err.retryAfter }),
      ...(err.field === undefined ? {} : { field: err.field }),
      ...(err.details === undefined ? {} : { details: err.details }),
    };
  }
  if (err instanceof z.ZodError) {
    const issue = err.issues[0]!;
    const field = fieldPath(issue.path);
    return { code: "invalid_field", message: `${field}: ${issue.message}`, field, log: "none" };
  }
  if (isDataException(err)) {
    return {
      code: "invalid_field",
      message: "a value in the request cannot be stored",
      log: "warn",
      logMessage: "value refused by the database",
    };
  }
  if (isDatabaseUnavailable(err)) {
    return {
      code: "unavailable",
      message: "the service is unavailable; retry with backoff",
      retryAfter: 1,
      log: "error",
      logMessage: "database unavailable",
    };
  }
  return {
    code: "internal",
    message: "internal error; retry with backoff",
    log: "error",
    logMessage: "unhandled error",
  };
}
