import SchemaBuilder from "@pothos/core";
import { GraphQLScalarType } from "graphql";
import { DateTimeResolver, JSONObjectResolver, SafeIntResolver } from "graphql-scalars";
import type { GraphQLContext } from "../resolvers/context.ts";

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSONObject: { Input: Record<string, unknown>; Output: Record<string, unknown> };
    /** Totals and amounts: integers beyond Int's 32 bits, up to 2^53 - 1. */
    SafeInt: { Input: number; Output: number };
  };
}>({ defaultFieldNullability: false });

// Times this service produces are already ISO 8601 in UTC (Date.toISOString, or an envelope's
// occurred_at written by it): they pass through as they are, where graphql-scalars would check
// each with a regular expression and parse it again (a twentieth of a 1000-event page's time).
// Dates, and every input, still go through graphql-scalars.
builder.addScalarType(
  "DateTime",
  new GraphQLScalarType({
    ...DateTimeResolver.toConfig(),
    serialize: (value) =>
      typeof value === "string"
        ? value
        : value instanceof Date
        ? value.toISOString()
        : DateTimeResolver.serialize(value),
  }),
);
// graphql-jit prints "Scalar with variable inputs detected for parsing AST literals. This is not
// supported." to stderr for every document with an inline JSONObject literal, because
// graphql-scalars' parseLiteral declares a second parameter (the variables), which graphql-jit
// never passes. The same function behind a rest parameter (whose length is 0) is called with
// whatever each executor passes, as before, and graphql-jit no longer warns.
const jsonObject = JSONObjectResolver.toConfig();
builder.addScalarType(
  "JSONObject",
  new GraphQLScalarType({
    ...jsonObject,
    parseLiteral: (...args: Parameters<typeof JSONObjectResolver.parseLiteral>) =>
      JSONObjectResolver.parseLiteral(...args),
  }),
);
builder.addScalarType("SafeInt", SafeIntResolver);

builder.queryType({
  description: "Errors carry extensions.code: UNAUTHENTICATED (401), FORBIDDEN (403), " +
    "PAYMENT_REQUIRED (402), BAD_USER_INPUT (400, including a value the database refuses), " +
    "NOT_FOUND, RATE_LIMITED and UNAVAILABLE (503: retry after extensions.retryAfter seconds), " +
    "or INTERNAL_SERVER_ERROR (never with an internal message). extensions.reason is the REST " +
    "error code.",
});
builder.mutationType({});
