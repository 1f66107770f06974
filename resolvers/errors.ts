// The one place where errors become GraphQL errors: ApiError codes map to extensions.code, and
// anything unexpected is masked (resolvers/yoga.ts logs it with the request id).
import { GraphQLError } from "graphql";
import { maskError as yogaMaskError } from "graphql-yoga";
import { z } from "zod";
import { fieldPath } from "../rest/errors.ts";
import { ApiError, type ErrorCode } from "../services/errors.ts";

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

/** True for an error no client input explains: a bug or an outage, to be logged. */
export function isUnexpected(error: unknown): boolean {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof ApiError || original instanceof z.ZodError) return false;
  return !(error instanceof GraphQLError && !error.originalError);
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
  // Errors GraphQL itself raised for the document (syntax, validation) pass through as they are.
  if (error instanceof GraphQLError && !error.originalError) return error;
  const masked = yogaMaskError(error, message, isDev) as GraphQLError;
  return new GraphQLError(masked.message, {
    nodes: masked.nodes,
    path: masked.path,
    extensions: { code: "INTERNAL_SERVER_ERROR" },
  });
}
