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
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  internal: 500,
  rate_limited: 503,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The one error type services throw; the REST and GraphQL edges each map it in one place. */
export class ApiError extends Error {
  override name = "ApiError";
  readonly status: number;
  /** Seconds, for rate_limited. */
  readonly retryAfter: number | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { cause?: unknown; retryAfter?: number } = {},
  ) {
    super(message, { cause: options.cause });
    this.status = ERROR_STATUS[code];
    this.retryAfter = options.retryAfter;
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

/** PostgreSQL's unique_violation SQLSTATE. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint_name?: string } | null;
  return e?.code === "23505" &&
    (constraint === undefined || e.constraint_name === constraint);
}

// postgres.js connection error codes, and SQLSTATEs of a server that cannot serve right now
// (class 08 connection exceptions, 53 insufficient resources, 57P0x shutdown/cannot connect).
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
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
    code.startsWith("57P");
}

/** A dotted path as clients write it: `events[3].occurred_at`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    out += typeof part === "number" ? `[${part}]` : out ? `.${String(part)}` : String(part);
  }
  return out || "body";
}
