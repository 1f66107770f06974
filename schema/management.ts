// The admin screens' management part of the graph: Environment.feedTokens, destinations and
// apiKeys, and their mutations (resolvers/management.ts). Each takes the operation the GraphQL
// access table gives it (services/access/graphql_fields.ts): an admin's role or an `admin` key.
import {
  type ApiKeyNode,
  createApiKeyMutation,
  createDestinationMutation,
  createFeedTokenMutation,
  deleteDestinationMutation,
  type DestinationNode,
  environmentApiKeys,
  environmentDestinations,
  environmentFeedTokens,
  type FeedTokenNode,
  type MadeByNode,
  revokeApiKeyMutation,
  revokeFeedTokenMutation,
  rotateDestinationSecretMutation,
  setDestinationPausedMutation,
  testDestinationMutation,
} from "../resolvers/management.ts";
import { SCOPES } from "../services/access/permissions.ts";
import type { DestinationState } from "../services/destinations/destinations.ts";
import { builder } from "./builder.ts";
import { Environment } from "./environment.ts";
import { FeedEventType } from "./feed.ts";
import { upperEnum } from "./refs.ts";

const ADMIN = "Takes the admin role on the project, or an API key with the `admin` scope.";

const DestinationStateEnum = builder.enumType("DestinationState", {
  description: "PAUSED while paused; FAILING after an hour without a successful delivery; " +
    "else ACTIVE.",
  values: upperEnum<DestinationState>(["active", "paused", "failing"]),
});

export const ApiKeyScope = builder.enumType("ApiKeyScope", {
  description: "What an API key may do: REST's scope names in GraphQL's spelling " +
    "(`links:read` is LINKS_READ).",
  values: Object.fromEntries(
    SCOPES.map((s) => [s.replace(":", "_").toUpperCase(), { value: s }]),
  ),
});

const MakerType = builder.enumType("MakerType", {
  description: "Who made something: a person's account, an API key, or the admin token.",
  values: upperEnum<"account" | "api_key" | "admin_token">(["account", "api_key", "admin_token"]),
});

const OwnerType = builder.enumType("OwnerType", {
  description: "Whom something belongs to: a person's account, or the instance admin.",
  values: upperEnum<"account" | "admin_token">(["account", "admin_token"]),
});

const Maker = builder.objectRef<NonNullable<MadeByNode["createdBy"]>>("Maker").implement({
  description: "Who made a feed token, destination or API key, as the audit log names an actor.",
  fields: (t) => ({
    type: t.expose("type", { type: MakerType }),
    id: t.exposeID("id", { nullable: true, description: "Null for the admin token." }),
    name: t.exposeString("name", { description: "Its name when it made this." }),
  }),
});

const Owner = builder.objectRef<NonNullable<MadeByNode["belongsTo"]>>("Owner").implement({
  description: "The person behind a chain of makers (a key made by a key is its maker's " +
    "person's), or the instance admin.",
  fields: (t) => ({
    type: t.expose("type", { type: OwnerType }),
    id: t.exposeID("id", {
      nullable: true,
      description: "The account; null for the instance admin (and a removed account's keys).",
    }),
    name: t.exposeString("name", {
      nullable: true,
      description: "The account's name; null once it is removed.",
    }),
  }),
});

const BELONGS_TO = "Whom it belongs to: the person behind the chain of makers, or the " +
  "instance admin; an API key is held to this person's role and revoked with them. Null: unknown.";

/** The fields every credential and destination shares: who made it and whom it belongs to. */
const Made = builder.interfaceRef<MadeByNode>("Made").implement({
  description: "Something a person or key made: a feed token, destination or API key.",
  fields: (t) => ({
    createdBy: t.expose("createdBy", {
      type: Maker,
      nullable: true,
      description: "Who made it; null: made before makers were recorded, by a maker no " +
        "record names.",
    }),
    belongsTo: t.expose("belongsTo", {
      type: Owner,
      nullable: true,
      description: BELONGS_TO,
    }),
  }),
});

const FeedToken = builder.objectRef<FeedTokenNode>("FeedToken").implement({
  interfaces: [Made],
  description: "A feed token (`est_…`) of the environment; its value is shown only at creation.",
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    hint: t.exposeString("hint", { description: "est_… and the value's last four characters." }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    lastUsedAt: t.expose("lastUsedAt", { type: "DateTime", nullable: true }),
  }),
});

const Destination = builder.objectRef<DestinationNode>("Destination").implement({
  interfaces: [Made],
  description: "A push destination (webhook) and its delivery status.",
  fields: (t) => ({
    id: t.exposeID("id"),
    url: t.exposeString("url"),
    eventTypes: t.expose("eventTypes", {
      type: [FeedEventType],
      description: "The event types it receives; empty: all.",
    }),
    state: t.expose("state", { type: DestinationStateEnum }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    lastAttemptAt: t.expose("lastAttemptAt", { type: "DateTime", nullable: true }),
    lastSuccessAt: t.expose("lastSuccessAt", { type: "DateTime", nullable: true }),
    lastError: t.exposeString("lastError", { nullable: true }),
    pending: t.exposeInt("pending", {
      description: "Matching events within the feed's seven days not yet delivered.",
    }),
    dropped: t.expose("dropped", {
      type: "SafeInt",
      description: "Matching events that left the seven days before they could be delivered.",
    }),
  }),
});

const ApiKey = builder.objectRef<ApiKeyNode>("ApiKey").implement({
  interfaces: [Made],
  description: "An API key (`sk_…`) of the environment; its value is shown only at creation.",
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    scopes: t.expose("scopes", { type: [ApiKeyScope] }),
    hint: t.exposeString("hint", { description: "sk_… and the value's last four characters." }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    expiresAt: t.expose("expiresAt", { type: "DateTime", nullable: true }),
    lastUsedAt: t.expose("lastUsedAt", { type: "DateTime", nullable: true }),
  }),
});

builder.objectFields(Environment, (t) => ({
  feedTokens: t.field({
    type: [FeedToken],
    description: `The feed tokens not revoked, oldest first. ${ADMIN}`,
    resolve: (env, _args, ctx) => environmentFeedTokens(ctx, env),
  }),
  destinations: t.field({
    type: [Destination],
    description: `Every destination, with its delivery status. ${ADMIN}`,
    resolve: (env, _args, ctx) => environmentDestinations(ctx, env),
  }),
  apiKeys: t.field({
    type: [ApiKey],
    description: `The API keys not revoked (expired ones included), oldest first. ${ADMIN}`,
    resolve: (env, _args, ctx) => environmentApiKeys(ctx, env),
  }),
}));

// --- Feed tokens ---------------------------------------------------------------------------

const CreateFeedTokenInput = builder.inputType("CreateFeedTokenInput", {
  fields: (t) => ({
    name: t.string({ required: true, description: "1 to 200 characters." }),
  }),
});

const CreateFeedTokenPayload = builder.objectRef<{ feedToken: FeedTokenNode; value: string }>(
  "CreateFeedTokenPayload",
).implement({
  fields: (t) => ({
    feedToken: t.expose("feedToken", { type: FeedToken }),
    value: t.exposeString("value", { description: "The token (`est_…`): shown here only." }),
  }),
});

builder.mutationField("createFeedToken", (t) =>
  t.field({
    type: CreateFeedTokenPayload,
    description: "As POST /api/v1/projects/:project_id/event_stream_tokens: starts the " +
      `environment's capture; the project needs Enterprise. ${ADMIN}`,
    args: {
      projectId: t.arg.id({ required: true }),
      input: t.arg({ type: CreateFeedTokenInput, required: true }),
    },
    resolve: (_root, args, ctx) => createFeedTokenMutation(ctx, args.projectId, args.input),
  }));

builder.mutationField("revokeFeedToken", (t) =>
  t.field({
    type: "Boolean",
    description: "As DELETE /api/v1/projects/:project_id/event_stream_tokens/:token_id: " +
      `the token stops working at once. ${ADMIN}`,
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => revokeFeedTokenMutation(ctx, args.projectId, args.id),
  }));

// --- Destinations --------------------------------------------------------------------------

const CreateDestinationInput = builder.inputType("CreateDestinationInput", {
  fields: (t) => ({
    url: t.string({
      required: true,
      description: "http(s), no credentials; a private or loopback address is refused.",
    }),
    eventTypes: t.field({
      type: [FeedEventType],
      description: "The event types it receives; absent or empty: all.",
    }),
  }),
});

const CreateDestinationPayload = builder.objectRef<
  { destination: DestinationNode; secret: string }
>("CreateDestinationPayload").implement({
  fields: (t) => ({
    destination: t.expose("destination", { type: Destination }),
    secret: t.exposeString("secret", {
      description: "The signing secret (`whsec_…`): shown here only.",
    }),
  }),
});

const DestinationSecretPayload = builder.objectRef<{ secret: string }>("DestinationSecretPayload")
  .implement({
    fields: (t) => ({
      secret: t.exposeString("secret", {
        description: "The new signing secret (`whsec_…`): shown here only. For 24 hours " +
          "deliveries carry signatures by the old and the new secret.",
      }),
    }),
  });

const DestinationTestResult = builder.objectRef<
  { status: number | null; error: string | null; durationMs: number }
>("DestinationTestResult").implement({
  fields: (t) => ({
    status: t.exposeInt("status", {
      nullable: true,
      description: "The receiver's HTTP status; null when none came.",
    }),
    error: t.exposeString("error", { nullable: true }),
    durationMs: t.exposeInt("durationMs"),
  }),
});

builder.mutationField("createDestination", (t) =>
  t.field({
    type: CreateDestinationPayload,
    description: "As POST /api/v1/projects/:project_id/destinations: it receives the events " +
      `captured from now on. ${ADMIN}`,
    args: {
      projectId: t.arg.id({ required: true }),
      input: t.arg({ type: CreateDestinationInput, required: true }),
    },
    resolve: (_root, args, ctx) => createDestinationMutation(ctx, args.projectId, args.input),
  }));

builder.mutationField("pauseDestination", (t) =>
  t.field({
    type: Destination,
    description: 'As PATCH …/destinations/:id with {"paused": true}: deliveries stop, the ' +
      `destination keeps its place in the feed. ${ADMIN}`,
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => setDestinationPausedMutation(ctx, args.projectId, args.id, true),
  }));

builder.mutationField("resumeDestination", (t) =>
  t.field({
    type: Destination,
    description: 'As PATCH …/destinations/:id with {"paused": false}: deliveries resume ' +
      `from where they stopped, at once. ${ADMIN}`,
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) =>
      setDestinationPausedMutation(ctx, args.projectId, args.id, false),
  }));

builder.mutationField("rotateDestinationSecret", (t) =>
  t.field({
    type: DestinationSecretPayload,
    description: `As POST …/destinations/:id/rotate_secret. ${ADMIN}`,
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => rotateDestinationSecretMutation(ctx, args.projectId, args.id),
  }));

builder.mutationField("testDestination", (t) =>
  t.field({
    type: DestinationTestResult,
    description: "As POST …/destinations/:id/test: one signed delivery with no events and " +
      `"test": true, now; the destination's state is untouched. ${ADMIN}`,
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => testDestinationMutation(ctx, args.projectId, args.id),
  }));

builder.mutationField("deleteDestination", (t) =>
  t.field({
    type: "Boolean",
    description: `As DELETE …/destinations/:id: deliveries stop. ${ADMIN}`,
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => deleteDestinationMutation(ctx, args.projectId, args.id),
  }));

// --- API keys ------------------------------------------------------------------------------

const CreateApiKeyInput = builder.inputType("CreateApiKeyInput", {
  fields: (t) => ({
    name: t.string({ required: true, description: "1 to 200 characters." }),
    scopes: t.field({
      type: [ApiKeyScope],
      required: true,
      description: "At least one; never beyond what the creator's role (or key) allows.",
    }),
    expiresAt: t.field({
      type: "DateTime",
      description: "When it stops working; absent or null: never.",
    }),
  }),
});

const CreateApiKeyPayload = builder.objectRef<{ apiKey: ApiKeyNode; value: string }>(
  "CreateApiKeyPayload",
).implement({
  fields: (t) => ({
    apiKey: t.expose("apiKey", { type: ApiKey }),
    value: t.exposeString("value", { description: "The key (`sk_…`): shown here only." }),
  }),
});

builder.mutationField("createApiKey", (t) =>
  t.field({
    type: CreateApiKeyPayload,
    description: `As POST /api/v1/projects/:project_id/api_keys. ${ADMIN}`,
    args: {
      projectId: t.arg.id({ required: true }),
      input: t.arg({ type: CreateApiKeyInput, required: true }),
    },
    resolve: (_root, args, ctx) => createApiKeyMutation(ctx, args.projectId, args.input),
  }));

builder.mutationField("revokeApiKey", (t) =>
  t.field({
    type: "Boolean",
    description: "As DELETE /api/v1/projects/:project_id/api_keys/:key_id: the next request " +
      `with it is refused, on every instance. ${ADMIN}`,
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => revokeApiKeyMutation(ctx, args.projectId, args.id),
  }));
