// Building blocks shared by the resource schemas. Every string that reaches PostgreSQL goes
// through `text` or `jsonObject`: a NUL character or an unpaired surrogate would make PostgreSQL
// refuse the value (a 500), so both are refused here with a 400.
import { z } from "zod";
import { isHttpUrl } from "../services/links/links.ts";
// zod's messages in words, installed for every schema (inputs/messages.ts).
import "./messages.ts";

const UNCLEAN = "must not contain NUL characters or unpaired surrogates";

export function isCleanString(value: string): boolean {
  return !value.includes("\0") && value.isWellFormed();
}

/** A string of at most `max` characters that PostgreSQL accepts as text. */
export function text(max: number) {
  return z.string().max(max, `must be at most ${max} characters`).refine(isCleanString, UNCLEAN);
}

/**
 * An absolute http(s) URL; `javascript:`, `data:` and every other scheme are refused. It is
 * kept in its normalised form (percent-encoded, punycode host): the link host puts it in a
 * Location header, which takes nothing else. Control characters, which the URL parser would
 * silently drop, are refused instead.
 */
export const httpUrl = z.string()
  .max(2048, "must be at most 2048 characters")
  .refine(isCleanString, UNCLEAN)
  // deno-lint-ignore no-control-regex -- finding control characters is the point
  .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), "must not contain control characters")
  .refine(isHttpUrl, "must be an http(s) URL")
  .transform((v) => new URL(v).href);

/** `null` reads as omitted, so clients that send `"field": null` are not refused for it. */
export function optional<S extends z.ZodType>(schema: S) {
  return z.preprocess((v) => (v === null ? undefined : v), schema.optional());
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Why a parsed JSON value cannot be stored and served as it is (or null if it can), and an upper
 * bound of its serialised UTF-8 size. The walk is iterative so a hostile nesting cannot exhaust
 * the stack here, and the depth bound keeps it from doing so later in JSON.stringify or in
 * PostgreSQL's jsonb parser.
 */
export function inspectJson(
  value: unknown,
  maxDepth: number,
): { problem: string | null; maxBytes: number } {
  // Bounds: a UTF-16 unit serialises to at most 6 bytes (`\uXXXX`), a number to at most 24.
  let maxBytes = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v === "string") {
      if (!isCleanString(v)) return { problem: UNCLEAN, maxBytes };
      maxBytes += 6 * v.length + 3;
      continue;
    }
    if (typeof v !== "object" || v === null) {
      maxBytes += 25;
      continue;
    }
    if (depth > maxDepth) {
      return { problem: `must not be nested more than ${maxDepth} levels deep`, maxBytes };
    }
    maxBytes += 2;
    if (Array.isArray(v)) {
      for (const item of v) stack.push([item, depth + 1]);
    } else {
      for (const key in v) {
        if (!isCleanString(key)) return { problem: UNCLEAN, maxBytes };
        maxBytes += 6 * key.length + 4;
        stack.push([(v as Record<string, unknown>)[key], depth + 1]);
      }
    }
  }
  return { problem: null, maxBytes };
}

const encoder = new TextEncoder();

/** The UTF-8 size of a string, or its length when that alone shows it is within `limit`. */
export function utf8Size(value: string, limit: number): number {
  return value.length * 3 <= limit ? value.length : encoder.encode(value).length;
}

export const MAX_JSON_DEPTH = 32;

/** A JSON object of at most `maxBytes` bytes once serialised. */
export function jsonObject(maxBytes: number) {
  return z.custom<Record<string, unknown>>(isPlainObject, { message: "must be a JSON object" })
    .superRefine((value, ctx) => {
      const inspected = inspectJson(value, MAX_JSON_DEPTH);
      if (inspected.problem) {
        ctx.addIssue({ code: "custom", message: inspected.problem });
      } else if (
        // Serialise only when the cheap bound leaves the size in doubt.
        inspected.maxBytes > maxBytes && utf8Size(JSON.stringify(value), maxBytes) > maxBytes
      ) {
        ctx.addIssue({ code: "custom", message: `must be at most ${maxBytes} bytes serialised` });
      }
    });
}

/** A string holding JSON (as `generate_link` takes `data` and `tags`), parsed, then `inner`. */
export function stringifiedJson<S extends z.ZodType>(
  inner: S,
  what: string,
  maxChars: number,
) {
  const message = `must be a string holding ${what}`;
  return z.string({ error: message })
    .max(maxChars, `must be at most ${maxChars} characters`)
    .transform((value, ctx): unknown => {
      try {
        return JSON.parse(value);
      } catch {
        ctx.issues.push({ code: "custom", message, input: value });
        return z.NEVER;
      }
    })
    .pipe(inner);
}
