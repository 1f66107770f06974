// Who may use the admin graph (`environment`, `createLink`, …, and `Link.metrics`/`analytics`):
// the one function every such field calls before it reads or changes anything.
//
// The bearer is authenticated as the REST admin routes' is (services/access/authenticate.ts: an
// `sk_` API key, or the instance admin token through its one check and its limit on wrong
// tokens), once per request however many fields ask; each field's operation is then checked
// against the one permission table (services/access/authorize.ts), as every REST route's is.
import { authenticateBearer } from "../services/access/authenticate.ts";
import { authorize } from "../services/access/authorize.ts";
import type { AuditContext } from "../services/access/audit.ts";
import type { Operation } from "../services/access/permissions.ts";
import { actorOf, type Principal } from "../services/access/principal.ts";
import { bearerToken } from "../inputs/headers.ts";
import type { GraphQLContext } from "./context.ts";

/** What a field of the admin graph does, in the permission table's words. */
export type AdminOperation = Extract<
  Operation,
  "project.read" | "links.read" | "links.write" | "links.delete" | "analytics.read"
>;

/**
 * Resolves to the caller when the request may perform `operation` on the environment
 * `environmentId`, else throws: `unauthorized` (UNAUTHENTICATED) for a missing, wrong, revoked
 * or expired credential, `rate_limited` while the limit on wrong admin tokens holds, `forbidden`
 * for another environment's key, `insufficient_scope` for a key without the operation's scope.
 */
export async function authorizeAdmin(
  ctx: GraphQLContext,
  operation: AdminOperation,
  environmentId: number,
): Promise<Principal> {
  // One authentication a request: a wrong token counts once against the limit.
  ctx.principal ??= authenticateBearer(ctx.deps, {
    presented: bearerToken(ctx.authorization),
    address: ctx.clientAddress,
  });
  const principal = await ctx.principal;
  await authorize(ctx.deps.sql, principal, operation, { environmentId });
  return principal;
}

/**
 * Resolves when the request may perform any of `operations` on the environment (the first
 * refusal is thrown when none is allowed): an environment is visible to whoever may read
 * something in it, an `sk_` key of any scope included, though only people see its project.
 */
export async function authorizeAny(
  ctx: GraphQLContext,
  operations: readonly AdminOperation[],
  environmentId: number,
): Promise<void> {
  let refusal: unknown;
  for (const operation of operations) {
    try {
      await authorizeAdmin(ctx, operation, environmentId);
      return;
    } catch (err) {
      refusal ??= err;
    }
  }
  throw refusal;
}

/** The audit entry's actor and request of a change, once authorizeAdmin allowed it. */
export async function graphqlAudit(ctx: GraphQLContext): Promise<AuditContext> {
  if (!ctx.principal) throw new Error("graphqlAudit before authorizeAdmin");
  const principal = await ctx.principal;
  return { actor: actorOf(principal), requestId: ctx.requestId, at: ctx.deps.clock.now() };
}
