// The one place where errors become GraphQL errors: ApiError codes map to extensions.code, and
// anything unexpected is masked (resolvers/yoga.ts logs it with the request id).
import { GraphQLError } from "graphql";
import { maskError as yogaMaskError } from "graphql-yoga";
import { z } from "zod";

import { ApiError, type ErrorCode, fieldPath } from "../services/errors.ts";

const GRAPHQL_CODE: Partial<Record<ErrorCode, string>> = {
  unauthorized: "UNAUTHENTICATED",
  forbidden: "FORBIDDEN",
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
};

/**
 * Errors outside any resolver (no `path`: a document that does not parse or validate, variables
 * of the wrong type, a malformed request) come from the client's input. Inside a resolver only
 * ApiError and ZodError do; anything else there is a bug or an outage.
 */
function isRequestError(error: unknown): boolean {
  // A bare SyntaxError is Yoga's JSON.parse of GET parameters (variables, extensions); one in a
  // resolver would reach here wrapped in a GraphQLError with a path.
  return (error instanceof GraphQLError && error.path === undefined) ||
    error instanceof SyntaxError;
}

/** True for an error no client input explains: a bug or an outage, to be logged. */
export function isUnexpected(error: unknown): boolean {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof ApiError || original instanceof z.ZodError) return false;
  return !isRequestError(error);
}

export function maskError(error: unknown, message: string, isDev?: boolean): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof ApiError) {
    const code = GRAPHQL_CODE[original.code] ?? "INTERNAL_SERVER_ERROR";
    return new GraphQLError(original.message, {
      nodes: (error as GraphQLError).nodes,
      path: (error as GraphQLError).path,
      extensions: {
        code,
        reason: original.code,
        ...(original.retryAfter === undefined ? {} : { retryAfter: original.retryAfter }),
      },
    });
  }
  if (original instanceof z.ZodError) {
    const issue = original.issues[0]!;
    return new GraphQLError(`${fieldPath(issue.path)}: ${issue.message}`, {
      nodes: (error as GraphQLError).nodes,
      path: (error as GraphQLError).path,
      extensions: { code: "BAD_USER_INPUT", reason: "invalid_field" },
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
    if (!e.originalError && e.extensions.code) return e;
    return new GraphQLError(e.message, {
      nodes: e.nodes,
      extensions: { ...e.extensions, code: e.extensions.code ?? "BAD_USER_INPUT" },
    });
  }
  const masked = yogaMaskError(error, message, isDev) as GraphQLError;
  return new GraphQLError(masked.message, {
    nodes: masked.nodes,
    path: masked.path,
    extensions: { code: "INTERNAL_SERVER_ERROR" },
  });
}
