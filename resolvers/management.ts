// The admin screens' management fields: an environment's feed tokens, destinations and API keys,
// and the mutations that create, change and revoke them. The admin REST routes' operations
// (rest/admin.ts, rest/destinations.ts, rest/access_routes.ts), through the same input schemas
// and services, so each changes exactly what its route changes and writes the same one audit
// entry, with the caller as its actor. Secrets (a token's or key's value, a destination's
// signing secret) are answered once, by the mutation that makes them.
import { createApiKeyBody } from "../inputs/access.ts";
import { createTokenBody } from "../inputs/admin.ts";
import { createDestinationBody } from "../inputs/destinations.ts";
import {
  apiKeyHint,
  type ApiKeySummary,
  createApiKey,
  listApiKeys,
  revokeApiKey,
} from "../services/access/api_keys.ts";
import type { Scope } from "../services/access/permissions.ts";
import {
  createDestination,
  deleteDestination,
  type DestinationDeps,
  type DestinationState,
  type DestinationStatus,
  listDestinations,
  rotateDestinationSecret,
  setDestinationPaused,
  testDestination,
} from "../services/destinations/destinations.ts";
import { ApiError } from "../services/errors.ts";
import type { EventType } from "../services/feed/envelope.ts";
import { normaliseEventTypes } from "../services/feed/feed.ts";
import {
  createFeedToken,
  feedTokenHint,
  type FeedTokenSummary,
  listFeedTokens,
  revokeFeedToken,
} from "../services/feed/tokens.ts";
import type { MadeBy } from "../services/access/makers.ts";
import { authorizeField, graphqlAudit } from "./authorize.ts";
import type { GraphQLContext } from "./context.ts";
import { authorizedEnvironment, type EnvironmentNode } from "./environment.ts";
import { camelPath, withGraphQLNames } from "../graphql/errors.ts";

/** Who made it and whom it belongs to, as REST's created_by and belongs_to. */
export interface MadeByNode {
  createdBy: MadeBy["created_by"];
  belongsTo: MadeBy["belongs_to"];
}

const madeByNode = (m: MadeBy): MadeByNode => ({
  createdBy: m.created_by,
  belongsTo: m.belongs_to,
});

export interface FeedTokenNode extends MadeByNode {
  id: string;
  name: string;
  hint: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface DestinationNode extends MadeByNode {
  id: string;
  url: string;
  eventTypes: EventType[];
  state: DestinationState;
  createdAt: string;
  lastAttemptAt: string | null;
  lastSuccessAt: string | null;
  lastError: string | null;
  pending: number;
  dropped: number;
}

export interface ApiKeyNode extends MadeByNode {
  id: string;
  name: string;
  scopes: Scope[];
  hint: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

const feedTokenNode = (t: FeedTokenSummary): FeedTokenNode => ({
  ...madeByNode(t),
  id: String(t.id),
  name: t.name,
  hint: t.hint,
  createdAt: t.created_at,
  lastUsedAt: t.last_used_at,
});

const destinationNode = (d: DestinationStatus): DestinationNode => ({
  ...madeByNode(d),
  id: String(d.id),
  url: d.url,
  // Written through normaliseEventTypes: only the feed's types.
  eventTypes: d.event_types as EventType[],
  state: d.state,
  createdAt: d.created_at,
  lastAttemptAt: d.last_attempt_at,
  lastSuccessAt: d.last_success_at,
  lastError: d.last_error,
  pending: d.pending,
  dropped: d.dropped,
});

const apiKeyNode = (k: ApiKeySummary): ApiKeyNode => ({
  ...madeByNode(k),
  id: String(k.id),
  name: k.name,
  scopes: k.scopes,
  hint: k.hint,
  createdAt: k.created_at,
  expiresAt: k.expires_at,
  lastUsedAt: k.last_used_at,
});

/** REST's body paths as the input's: `expires_at` → `input.expiresAt`. */
const inputName = (field: string) => (field === "body" ? "input" : `input.${camelPath(field)}`);

/** A validation in the input's words: runs `parse` and names what it refuses as sent. */
function parseInput<T>(parse: () => T): Promise<T> {
  return withGraphQLNames(inputName, () => Promise.resolve().then(parse));
}

/** An `id` argument: a token's, destination's or key's numeric ID, or BAD_USER_INPUT. */
function idArg(id: string | number): string {
  const value = String(id);
  if (!/^[1-9][0-9]{0,8}$/.test(value)) {
    throw new ApiError("invalid_field", "id must be a numeric ID", { field: "id" });
  }
  return value;
}

function destinationDeps(ctx: GraphQLContext): DestinationDeps {
  const { clock, cursorSecret, config } = ctx.deps;
  return { clock, cursorSecret, allowPrivate: config.destinationsAllowPrivate };
}

// --- Environment's lists -------------------------------------------------------------------

/** Environment.feedTokens: the tokens not revoked, oldest first, without their values. */
export async function environmentFeedTokens(
  ctx: GraphQLContext,
  env: EnvironmentNode,
): Promise<FeedTokenNode[]> {
  await authorizeField(ctx, "Environment.feedTokens", env.environmentId);
  return (await listFeedTokens(ctx.deps.sql, String(env.environmentId))).map(feedTokenNode);
}

/** Environment.destinations: every destination with its delivery status. */
export async function environmentDestinations(
  ctx: GraphQLContext,
  env: EnvironmentNode,
): Promise<DestinationNode[]> {
  await authorizeField(ctx, "Environment.destinations", env.environmentId);
  const list = await listDestinations(ctx.deps.sql, ctx.deps.clock, String(env.environmentId));
  return list.map(destinationNode);
}

/** Environment.apiKeys: the keys not revoked (expired ones included), without their values. */
export async function environmentApiKeys(
  ctx: GraphQLContext,
  env: EnvironmentNode,
): Promise<ApiKeyNode[]> {
  await authorizeField(ctx, "Environment.apiKeys", env.environmentId);
  return (await listApiKeys(ctx.deps.sql, String(env.environmentId))).map(apiKeyNode);
}

// --- Feed tokens ---------------------------------------------------------------------------

export async function createFeedTokenMutation(
  ctx: GraphQLContext,
  projectId: string | number,
  input: { name: string },
): Promise<{ feedToken: FeedTokenNode; value: string }> {
  const id = await authorizedEnvironment(ctx, projectId, "Mutation.createFeedToken");
  const body = await parseInput(() => createTokenBody.parse({ name: input.name }));
  const { sql, clock } = ctx.deps;
  const made = await createFeedToken(sql, clock, String(id), body.name, await graphqlAudit(ctx));
  return {
    feedToken: {
      ...madeByNode(made),
      id: String(made.id),
      name: made.name,
      hint: feedTokenHint(made.value),
      createdAt: made.created_at,
      lastUsedAt: null,
    },
    value: made.value,
  };
}

export async function revokeFeedTokenMutation(
  ctx: GraphQLContext,
  projectId: string | number,
  tokenId: string | number,
): Promise<boolean> {
  const env = await authorizedEnvironment(ctx, projectId, "Mutation.revokeFeedToken");
  const id = idArg(tokenId);
  await revokeFeedToken(ctx.deps.sql, ctx.deps.clock, String(env), id, await graphqlAudit(ctx));
  return true;
}

// --- Destinations --------------------------------------------------------------------------

export async function createDestinationMutation(
  ctx: GraphQLContext,
  projectId: string | number,
  input: { url: string; eventTypes?: string[] | null },
): Promise<{ destination: DestinationNode; secret: string }> {
  const env = await authorizedEnvironment(ctx, projectId, "Mutation.createDestination");
  const body = await parseInput(() =>
    createDestinationBody.parse({ url: input.url, event_types: input.eventTypes ?? undefined })
  );
  const eventTypes = normaliseEventTypes(body.event_types ?? []);
  const made = await withGraphQLNames(
    inputName,
    async () =>
      createDestination(ctx.deps.sql, destinationDeps(ctx), String(env), {
        url: body.url,
        eventTypes,
      }, await graphqlAudit(ctx)),
  );
  const { secret, ...status } = made;
  return { destination: destinationNode(status), secret };
}

export async function setDestinationPausedMutation(
  ctx: GraphQLContext,
  projectId: string | number,
  destinationId: string | number,
  paused: boolean,
): Promise<DestinationNode> {
  const env = await authorizedEnvironment(
    ctx,
    projectId,
    paused ? "Mutation.pauseDestination" : "Mutation.resumeDestination",
  );
  const id = idArg(destinationId);
  const { sql, clock } = ctx.deps;
  const status = await setDestinationPaused(
    sql,
    clock,
    String(env),
    id,
    paused,
    await graphqlAudit(ctx),
  );
  return destinationNode(status);
}

export async function rotateDestinationSecretMutation(
  ctx: GraphQLContext,
  projectId: string | number,
  destinationId: string | number,
): Promise<{ secret: string }> {
  const env = await authorizedEnvironment(ctx, projectId, "Mutation.rotateDestinationSecret");
  const id = idArg(destinationId);
  const secret = await rotateDestinationSecret(
    ctx.deps.sql,
    destinationDeps(ctx),
    String(env),
    id,
    await graphqlAudit(ctx),
  );
  return { secret };
}

export async function testDestinationMutation(
  ctx: GraphQLContext,
  projectId: string | number,
  destinationId: string | number,
): Promise<{ status: number | null; error: string | null; durationMs: number }> {
  const env = await authorizedEnvironment(ctx, projectId, "Mutation.testDestination");
  const id = idArg(destinationId);
  const r = await testDestination(ctx.deps.sql, destinationDeps(ctx), String(env), id);
  return { status: r.status, error: r.error, durationMs: r.durationMs };
}

export async function deleteDestinationMutation(
  ctx: GraphQLContext,
  projectId: string | number,
  destinationId: string | number,
): Promise<boolean> {
  const env = await authorizedEnvironment(ctx, projectId, "Mutation.deleteDestination");
  const id = idArg(destinationId);
  await deleteDestination(ctx.deps.sql, String(env), id, await graphqlAudit(ctx));
  return true;
}

// --- API keys ------------------------------------------------------------------------------

export async function createApiKeyMutation(
  ctx: GraphQLContext,
  projectId: string | number,
  input: { name: string; scopes: string[]; expiresAt?: Date | null },
): Promise<{ apiKey: ApiKeyNode; value: string }> {
  const env = await authorizedEnvironment(ctx, projectId, "Mutation.createApiKey");
  const body = await parseInput(() =>
    createApiKeyBody.parse({
      name: input.name,
      scopes: input.scopes,
      expires_at: input.expiresAt?.toISOString() ?? null,
    })
  );
  const creator = await ctx.principal!;
  const made = await withGraphQLNames(
    inputName,
    async () =>
      createApiKey(
        ctx.deps.sql,
        ctx.deps.clock,
        creator,
        String(env),
        body,
        await graphqlAudit(ctx),
      ),
  );
  return {
    apiKey: {
      ...madeByNode(made),
      id: String(made.id),
      name: made.name,
      scopes: made.scopes,
      hint: apiKeyHint(made.value),
      createdAt: made.created_at,
      expiresAt: made.expires_at,
      lastUsedAt: null,
    },
    value: made.value,
  };
}

export async function revokeApiKeyMutation(
  ctx: GraphQLContext,
  projectId: string | number,
  keyId: string | number,
): Promise<boolean> {
  const env = await authorizedEnvironment(ctx, projectId, "Mutation.revokeApiKey");
  const id = idArg(keyId);
  await revokeApiKey(ctx.deps.sql, ctx.deps.clock, String(env), id, await graphqlAudit(ctx));
  return true;
}
