// Who may use the admin graph (`environment`, the management mutations, `Link.metrics` and
// `Link.analytics`): the one function every such field calls before it reads or changes anything.
//
// The caller is authenticated once per request, however many fields ask:
// - an `Authorization` header is the REST admin routes' bearer (services/access/authenticate.ts:
//   an `sk_` API key, or the instance admin token through its one check and its limit on wrong
//   tokens);
// - without one, the dashboard's session cookie is that session's principal (the instance admin
//   or a person's account), resumed as a dashboard page resumes it (12 hours idle end it);
// - with neither, the request is unauthenticated.
// Each field's operation then comes from the GraphQL access table
// (services/access/graphql_fields.ts) and is checked against the one permission table
// (services/access/authorize.ts), as every REST route's is. A mutation under a session must also
// prove it comes from this service's own pages: the session's synchronizer token in
// `X-CSRF-Token`, and no Origin (or Sec-Fetch-Site) of another site.
import { authenticateBearer } from "../services/access/authenticate.ts";
import { authorize } from "../services/access/authorize.ts";
import { type AuditContext, auditContext } from "../services/access/audit.ts";
import { type AdminField, fieldOperations } from "../services/access/graphql_fields.ts";
import type { Operation } from "../services/access/permissions.ts";
import type { Principal } from "../services/access/principal.ts";
import { ApiError } from "../services/errors.ts";
import { csrfTokenMatches, resumeSession, SESSION_COOKIE } from "../services/access/sessions.ts";
import { bearerToken, cookieValue, isCrossSite } from "../inputs/headers.ts";
import type { GraphQLContext } from "./context.ts";

/** The header a session's mutation carries its synchronizer token in. */
export const CSRF_HEADER = "X-CSRF-Token";

async function authenticate(ctx: GraphQLContext): Promise<Principal> {
  if (ctx.authorization === null) {
    // Only here is the Cookie header read: requests with credentials of their own never are.
    const token = cookieValue(ctx.request.headers.get("Cookie"), SESSION_COOKIE);
    if (token !== undefined) {
      const session = await resumeSession(ctx.deps, token);
      if (!session) {
        throw new ApiError(
          "unauthorized",
          "the dashboard session has ended (signed out, 12 hours without a request, past its lifetime, or the admin token changed): sign in again",
        );
      }
      ctx.session = session;
      return session.principal;
    }
  }
  return await authenticateBearer(ctx.deps, {
    presented: bearerToken(ctx.authorization),
    address: ctx.clientAddress,
  });
}

/** The caller of this request, authenticated on the first ask (a wrong token counts once). */
export function callerOf(ctx: GraphQLContext): Promise<Principal> {
  return ctx.principal ??= authenticate(ctx);
}

/**
 * A session's mutation comes from this service's pages: not from another site (Origin, or
 * Sec-Fetch-Site without one), and with the session's synchronizer token. Bearer credentials
 * are not sent by browsers on their own, so they need neither.
 */
function assertSameOrigin(ctx: GraphQLContext): void {
  const session = ctx.session;
  if (!session) return;
  const headers = ctx.request.headers;
  if (isCrossSite((name) => headers.get(name), ctx.request.url)) {
    throw new ApiError("forbidden", "this mutation came from another site and was refused");
  }
  if (!csrfTokenMatches(session, headers.get(CSRF_HEADER) ?? undefined)) {
    throw new ApiError(
      "forbidden",
      `a mutation under a dashboard session needs the session's token in the ${CSRF_HEADER} header`,
    );
  }
}

/**
 * Resolves to the caller when the request may perform the field's operation (any of them, when
 * the table gives several) on the environment `environmentId`, else throws: `unauthorized`
 * (UNAUTHENTICATED) for a missing, wrong, revoked or expired credential or an ended session,
 * `rate_limited` while the limit on wrong admin tokens holds, `forbidden` for another
 * environment's key, a role below the operation's, a non-member, or a session's mutation without
 * its same-origin proof, `insufficient_scope` for a key without the operation's scope.
 */
export async function authorizeField(
  ctx: GraphQLContext,
  field: AdminField,
  environmentId: number,
): Promise<Principal> {
  const principal = await callerOf(ctx);
  if (field.startsWith("Mutation.")) assertSameOrigin(ctx);
  let refusal: unknown;
  for (const operation of fieldOperations(field)) {
    try {
      await check(ctx, principal, operation, environmentId);
      return principal;
    } catch (err) {
      refusal ??= err;
    }
  }
  throw refusal;
}

/** authorize(), once a request per operation and environment (its answer cannot change). */
function check(
  ctx: GraphQLContext,
  principal: Principal,
  operation: Operation,
  environmentId: number,
): Promise<void> {
  const checks = ctx.checks ??= new Map();
  const key = `${operation}:${environmentId}`;
  let checked = checks.get(key);
  if (!checked) {
    checked = authorize(ctx.deps.sql, principal, operation, { environmentId });
    // Awaited by the field that asked; a later field sharing it awaits it too.
    checked.catch(() => {});
    checks.set(key, checked);
  }
  return checked;
}

/** The audit entry's actor and request of a change, once authorizeField allowed it. */
export async function graphqlAudit(ctx: GraphQLContext): Promise<AuditContext> {
  if (!ctx.principal) throw new Error("graphqlAudit before authorizeField");
  const principal = await ctx.principal;
  return auditContext(principal, ctx.requestId, ctx.deps.clock.now());
}
