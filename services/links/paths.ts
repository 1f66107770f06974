// Paths chosen by people (the admin API, the dashboard, imports): which ones a link may take.
import type { Db } from "../../db/connect.ts";
import { ApiError } from "../errors.ts";

export const MAX_CHOSEN_PATH = 64;

/**
 * First segments the service answers itself, now or as it is likely to grow, in lower case: a
 * link there would be unreachable, or would shadow a page of the service. Compared without
 * case, so that `Dashboard` cannot pass for `dashboard` on a case-insensitive proxy.
 */
export const RESERVED_PATHS: ReadonlySet<string> = new Set([
  "api",
  "graphql",
  "dashboard",
  "docs",
  "openapi.json",
  "healthz",
  "readyz",
  ".well-known",
  "well-known",
  "assets",
  "static",
  "favicon.ico",
  "robots.txt",
  "sitemap.xml",
  "open-app.js",
  "admin",
  "sdk",
  "metrics",
  "health",
  "status",
  "login",
  "logout",
  "signin",
  "signout",
  "auth",
  "oauth",
  "oidc",
  "callback",
  "apple-app-site-association",
  "assetlinks.json",
  "mcp",
  "llms.txt",
]);

/** Why `path` cannot be chosen (a sentence without the field name), or null if it can. */
export function chosenPathProblem(path: string): string | null {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(path)) {
    return `must be 1 to ${MAX_CHOSEN_PATH} of A-Z, a-z, 0-9, - and _`;
  }
  if (RESERVED_PATHS.has(path.toLowerCase())) return "is reserved by the service";
  return null;
}

export function checkChosenPath(path: string): void {
  const problem = chosenPathProblem(path);
  if (problem) throw new ApiError("invalid_field", `path: ${problem}`, { field: "path" });
}

export function pathTaken(): ApiError {
  return new ApiError("invalid_field", "path: is taken (by a link, now or in the past)", {
    field: "path",
  });
}

/**
 * Serialises the transactions that give a chosen path to a link and those that retire one
 * (until the transaction ends): a path is a link's or retired, never free in between.
 */
export async function lockPath(db: Db, path: string): Promise<void> {
  await db`select pg_advisory_xact_lock(hashtextextended(${"link_path:" + path}, 0))`;
}
