// The one place where errors become GraphQL errors: services/errors.ts classifies (as it does for
// REST), this translates the contract's codes to extensions.code; internal errors are masked
// (graphql/yoga.ts logs what the classification says to log, with the request id).
import { GraphQLError } from "graphql";
import { maskError as yogaMaskError } from "graphql-yoga";
import {
  ApiError,
  type ClassifiedError,
  classifyError,
  type ErrorCode,
} from "../services/errors.ts";

const GRAPHQL_CODE: Partial<Record<ErrorCode, string>> = {
  unauthorized: "UNAUTHENTICATED",
  forbidden: "FORBIDDEN",
  insufficient_scope: "FORBIDDEN",
  conflict: "CONFLICT",
  enterprise_required: "PAYMENT_REQUIRED",
  rate_limited: "RATE_LIMITED",
  malformed_json: "BAD_USER_INPUT",
  invalid_field: "BAD_USER_INPUT",
  invalid_environment: "BAD_USER_INPUT",
  bad_cursor: "BAD_USER_INPUT",
  invalid_limit: "BAD_USER_INPUT",
  invalid_event_type: "BAD_USER_INPUT",
  not_found: "NOT_FOUND",
  payload_too_large: "BAD_USER_INPUT",
  unavailable: "UNAVAILABLE",
  internal: "INTERNAL_SERVER_ERROR",
};

/**
 * Errors outside any resolver (no `path`: a document that does not parse or validate, variables
 * of the wrong type, a malformed request) come from the client's input. Inside a resolver the
 * shared classification decides.
 */
function isRequestError(error: unknown): boolean {
  // A bare SyntaxError is Yoga's JSON.parse of GET parameters (variables, extensions); one in a
  // resolver would reach here wrapped in a GraphQLError with a path.
  return (error instanceof GraphQLError && error.path === undefined) ||
    error instanceof SyntaxError;
}

/** The classification of an error raised inside a resolver, or null for a request error. */
export function classifyResolverError(error: unknown): ClassifiedError | null {
  if (isRequestError(error)) return null;
  return classifyError(error instanceof GraphQLError ? error.originalError ?? error : error);
}

export function maskError(error: unknown, message: string, isDev?: boolean): Error {
  const classified = classifyResolverError(error);
  if (classified && classified.code !== "internal") {
    const e = error as GraphQLError;
    return new GraphQLError(classified.message, {
      nodes: e.nodes,
      path: e.path,
      extensions: {
        code: GRAPHQL_CODE[classified.code] ?? "INTERNAL_SERVER_ERROR",
        reason: classified.code,
        ...(classified.retryAfter === undefined ? {} : { retryAfter: classified.retryAfter }),
      },
    });
  }
  // Document and variable errors keep GraphQL's message, which names what is wrong.
  if (error instanceof SyntaxError) {
    return new GraphQLError(`request parameters are not valid JSON: ${error.message}`, {
      extensions: { code: "BAD_USER_INPUT", http: { status: 400 } },
    });
  }
  if (isRequestError(error)) {
    const e = error as GraphQLError;
    if (!e.originalError && e.extensions?.code) return e;
    // A request error Yoga did not mark (variables of the wrong type or missing): marked as
    // Yoga marks parse and validation errors, so that GraphQL over HTTP's rule holds
    // for all of them: 400 in application/graphql-response+json, 200 in application/json.
    const http = { spec: true, status: 400, ...(e.extensions?.http as object | undefined) };
    return new GraphQLError(e.message, {
      nodes: e.nodes,
      extensions: { ...e.extensions, code: e.extensions?.code ?? "BAD_USER_INPUT", http },
    });
  }
  const masked = yogaMaskError(error, message, isDev) as GraphQLError;
  return new GraphQLError(masked.message, {
    nodes: masked.nodes,
    path: masked.path,
    extensions: { code: "INTERNAL_SERVER_ERROR" },
  });
}

/** REST's snake_case input path in GraphQL's camelCase: `ios_custom_redirect.url` → `iosCustomRedirect.url`. */
export function camelPath(field: string): string {
  return field.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/**
 * Runs a service call for a resolver, naming the inputs in its errors in GraphQL's words: the
 * services speak REST's (`limit`, `event_types[]`, `ios_custom_redirect.url`), and `rename`
 * gives the argument or input-field path the GraphQL client actually sent.
 */
export async function withGraphQLNames<T>(
  rename: (field: string) => string,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const c = classifyError(err);
    if (c.field === undefined || !c.message.startsWith(c.field)) throw err;
    const field = rename(c.field);
    throw new ApiError(c.code, field + c.message.slice(c.field.length), {
      cause: err,
      field,
      ...(c.retryAfter === undefined ? {} : { retryAfter: c.retryAfter }),
    });
  }
}
