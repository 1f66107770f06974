// graphql-js answers a misspelt name with the schema's own names: "Did you mean "title"?" for a
// field, argument, type or input field, "Did you mean the enum value "ADMIN"?" for an enum value
// (in the document, or in a variable, which fails only when the operation executes). With
// introspection off those hints would hand out the schema a name at a time, so every one is
// removed, from validation's errors and from execution's. Armor's blockFieldSuggestion did the
// first kind only (its pattern needs a quote right after "Did you mean"), so this plugin replaces
// it.
import { GraphQLError } from "graphql";
import type { Plugin } from "graphql-yoga";

/** Every suggestion graphql-js 16 writes: "Did you mean …?" up to its question mark. */
const SUGGESTION = / *Did you mean [^?]*\?/g;

/** The error, its suggestion taken out of the message (the same error when it had none). */
export function withoutSuggestion<E>(error: E): E {
  if (!(error instanceof GraphQLError) || !error.message.includes("Did you mean")) return error;
  error.message = error.message.replace(SUGGESTION, "").trim();
  return error;
}

export function useHiddenSuggestions(): Plugin {
  return {
    onValidate: () => ({ valid, result, setResult }) => {
      if (!valid) setResult(result.map(withoutSuggestion));
    },
    // A variable of the wrong enum value fails when the operation starts, before any resolver.
    onExecute: () => ({ onExecuteDone: ({ result }) => stripResult(result) }),
    onSubscribe: () => ({ onSubscribeResult: ({ result }) => stripResult(result) }),
  };
}

/** A result's errors without suggestions (a stream's own events carry none of these). */
function stripResult(result: unknown): void {
  const errors = (result as { errors?: readonly GraphQLError[] } | null)?.errors;
  if (Array.isArray(errors)) errors.forEach(withoutSuggestion);
}
