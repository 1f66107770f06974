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

/**
 * Reads a body as text, refusing (413 payload_too_large) one over `limit` bytes before reading
 * it when its length is declared, else as soon as the bytes read pass the limit: nothing larger
 * is ever held, let alone parsed.
 */
export async function readLimitedText(c: Context, limit: number, what: string): Promise<string> {
  const tooLarge = () =>
    new ApiError("payload_too_large", `${what} is larger than ${limit / (1024 * 1024)} MiB`);
  const declared = c.req.header("Content-Length");
  if (declared !== undefined && Number(declared) > limit) throw tooLarge();
  const body = c.req.raw.body;
  if (body === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
