import type { Context } from "hono";
import type { z } from "zod";
import { ApiError } from "../services/errors.ts";

/** Reads a JSON body; an empty body reads as `{}` so that all-optional endpoints accept it. */
export async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError("malformed_json", "request body is not valid JSON");
  }
}

/** Reads and validates a JSON body; a ZodError reaches the error mapper as invalid_field. */
export async function readBody<S extends z.ZodType>(
  c: Context,
  schema: S,
): Promise<z.output<S>> {
  return schema.parse(await readJson(c));
}
