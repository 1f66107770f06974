// What a field needs, said in words: zod's own wording ("Invalid input: expected number,
// received undefined") becomes "is required" or "must be a number, not a string". Installed
// once for the whole process as zod's error map; a message written on a schema still wins.
// The field's name is not part of the message: the transports put the path in front of it.
import { z } from "zod";

const NOUNS: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  bigint: "a whole number",
  boolean: "true or false",
  object: "a JSON object",
  array: "an array",
  date: "a date",
  null: "null",
};

/** What a JSON value is, as a person would name it. */
function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") return Number.isInteger(value) ? "a whole number" : "a number";
  return NOUNS[typeof value] ?? typeof value;
}

function list(values: readonly unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join(", ");
}

function unit(origin: string, n: number | bigint): string {
  if (origin === "string") return n === 1 ? " character" : " characters";
  if (origin === "array" || origin === "set") return n === 1 ? " item" : " items";
  return "";
}

export function describeIssue(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type": {
      if (issue.input === undefined) return "is required";
      const noun = NOUNS[issue.expected] ?? issue.expected;
      if (issue.expected === "int" && typeof issue.input === "number") return `must be ${noun}`;
      return `must be ${noun}, not ${describe(issue.input)}`;
    }
    case "too_small": {
      const n = issue.minimum;
      if (issue.origin === "string" && Number(n) === 1) return "must not be empty";
      if (issue.origin === "array" && Number(n) === 1) return "must not be empty";
      const bound = issue.inclusive === false ? "greater than" : "at least";
      return issue.origin === "array" || issue.origin === "set"
        ? `must have ${bound} ${n}${unit(issue.origin, n)}`
        : `must be ${bound} ${n}${unit(issue.origin, n)}`;
    }
    case "too_big": {
      const n = issue.maximum;
      const bound = issue.inclusive === false ? "less than" : "at most";
      return issue.origin === "array" || issue.origin === "set"
        ? `must have ${bound} ${n}${unit(issue.origin, n)}`
        : `must be ${bound} ${n}${unit(issue.origin, n)}`;
    }
    case "invalid_value":
      if (issue.input === undefined) return "is required";
      return issue.values.length === 1
        ? `must be ${list(issue.values)}`
        : `must be one of ${list(issue.values)}`;
    case "unrecognized_keys":
      return `has unknown field${issue.keys.length === 1 ? "" : "s"} ${list(issue.keys)}`;
    case "invalid_format":
      return `must be a valid ${issue.format}`;
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    case "invalid_union":
      return "does not have any of the accepted forms";
    default:
      return undefined;
  }
}

z.config({ customError: describeIssue });
