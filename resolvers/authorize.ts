// Who may use the admin graph (`environment`, `createLink`, …, and `Link.metrics`/`analytics`):
// the one function every such field calls before it reads or changes anything.
//
// Today the instance admin token is the only credential here, checked by the same function as
// the REST admin routes' (services/admin_token_limit.ts: its limit on wrong tokens included),
// once per request however many fields ask. The operations are named as the access
// permission table names them, so that `sk_` API keys and members' sessions can be routed
// through that table here, and nowhere else, when team access lands.
import { checkAdminToken } from "../services/admin_token_limit.ts";
import { bearerToken } from "../inputs/headers.ts";
import type { GraphQLContext } from "./context.ts";

/** What a field of the admin graph does, in the access permission table's words. */
export type AdminOperation =
  /** See an environment and its project. */
  | "project.read"
  /** Read links (list, search, one link). */
  | "links.read"
  /** Create, edit, activate, archive links. */
  | "links.write"
  /** Delete links. */
  | "links.delete"
  /** Link metrics and analytics. */
  | "analytics.read";

/**
 * Resolves when the request may perform `operation` on the environment `environmentId`, else
 * throws: `unauthorized` (UNAUTHENTICATED) when the admin token is missing or wrong, and
 * `rate_limited` when its limit on wrong tokens holds. With the admin token every operation on
 * every environment is allowed, so `operation` and `environmentId` only matter once other
 * principals (API keys, members) are checked here.
 */
export async function authorizeAdmin(
  ctx: GraphQLContext,
  _operation: AdminOperation,
  _environmentId: number,
): Promise<void> {
  // One check a request: a wrong token counts once against the limit, however many fields ask.
  ctx.adminCheck ??= checkAdminToken(
    ctx.deps.sql,
    ctx.deps.clock,
    ctx.deps.adminTokenHash,
    { presented: bearerToken(ctx.authorization), address: ctx.clientAddress },
  );
  await ctx.adminCheck;
}
