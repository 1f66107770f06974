// GET /openapi.json: OpenAPI 3.1 of every REST path. The paths, their parameters and answers are
// written here, one entry a route; every schema comes from zod (rest/openapi_schemas.ts: the
// request bodies the handlers parse with, and the output shapes checked against the services'
// types). tests/openapi_test.ts checks every served route is described, with an operationId,
// security and a 4xx; CI runs `redocly lint` on it (.ci/run, redocly.yaml).
import { MAX_EVENTS } from "../inputs/events.ts";
import { MAX_FEED_LIMIT } from "../services/feed/feed.ts";
import { FEED_EVENT_TYPES } from "../services/feed/envelope.ts";
import { LINK_ENVIRONMENTS, METRICS_ENVIRONMENTS } from "../services/access/sdk_auth.ts";
import { type ComponentName, componentSchemas } from "./openapi_schemas.ts";
import { DIMENSIONS, INTERVALS, METRICS } from "../services/analytics/query.ts";

const json = "application/json";
const ref = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });
const error = (description: string) => ({
  description,
  content: { [json]: { schema: ref("Error") } },
});
const ok = (description: string, schema: unknown, type = json) => ({
  description,
  content: { [type]: { schema } },
});
/** A JSON object answer whose listed keys are always present. */
const object = (properties: Record<string, unknown>) => ({
  type: "object",
  required: Object.keys(properties),
  properties,
});
const body = (name: ComponentName) => ({
  required: true,
  content: { [json]: { schema: ref(name) } },
});
const pathParam = (name: string, schema: unknown = { type: "string" }) => ({
  name,
  in: "path",
  required: true,
  schema,
});
const projectId = pathParam("project_id", { type: "integer" });
const query = (name: string, schema: unknown, description?: string) => ({
  name,
  in: "query",
  schema,
  ...(description ? { description } : {}),
});
/** ENVIRONMENT is a plain header with a closed set of values, not a credential. */
const environment = (values: ReadonlyMap<string, string>) => ({
  name: "ENVIRONMENT",
  in: "header",
  required: true,
  schema: { type: "string", enum: [...values.keys()] },
});
const linkEnvironment = environment(LINK_ENVIRONMENTS);
const sdkSecurity = [{ projectKey: [] }];
const agentSecurity = [{ agentKey: [] }];
/** A JSON-RPC 2.0 message (MCP's requests, notifications and responses). */
const jsonRpcMessage = {
  type: "object",
  required: ["jsonrpc"],
  properties: {
    jsonrpc: { const: "2.0" },
    id: { type: ["string", "integer", "null"] },
    method: { type: "string" },
    params: { type: "object" },
    result: { type: "object" },
    error: { type: "object" },
  },
};
/** The transport's own refusals: a JSON-RPC error without an id. */
const jsonRpcError = {
  type: "object",
  required: ["jsonrpc", "error", "id"],
  properties: {
    jsonrpc: { const: "2.0" },
    error: {
      type: "object",
      required: ["code", "message"],
      properties: { code: { type: "integer" }, message: { type: "string" } },
    },
    id: { type: "null" },
  },
};
const adminSecurity = [{ adminToken: [] }];
/** Public routes (operations, the link host) say so explicitly. */
const publicRoute: never[] = [];
/**
 * Every admin route's refusals: the bearer (the admin token, through its one check and its limit
 * on wrong tokens, or an API key) and the permission table. A route with a narrower 403 says so
 * after these.
 */
const adminRefusals = {
  401: error("Admin token or API key missing, wrong, revoked or expired"),
  403: error(
    "Not allowed by the permission table: an API key of another environment, or on a route no " +
      "key may use (forbidden), or without the route's scope (insufficient_scope)",
  ),
  503: {
    ...error(
      "Too many wrong admin tokens from this address (rate_limited), " +
        "or the database is unreachable",
    ),
    headers: {
      "Retry-After": {
        description: "With rate_limited: seconds until an attempt is accepted again",
        schema: { type: "integer", minimum: 1 },
      },
    },
  },
};
/** An SDK write over the project key's limits (services/sdk_limits.ts). */
const sdkWriteLimited = {
  503: {
    ...error(
      "More SDK writes (links and events) in the last 60 s than the project allows for its key " +
        "or for this address (rate_limited), or the database is unreachable",
    ),
    headers: {
      "Retry-After": {
        description: "With rate_limited: seconds until the write would fit",
        schema: { type: "integer", minimum: 1 },
      },
    },
  },
};
/** The only 4xx a route without input can give: the HTTP server refuses the request itself. */
const malformedRequest = { $ref: "#/components/responses/MalformedRequest" };
const eventTypesParam = {
  name: "event_types[]",
  in: "query",
  schema: { type: "array", items: { type: "string", enum: [...FEED_EVENT_TYPES] } },
  style: "form",
  explode: true,
};

const auditPageParams = [
  { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100 } },
  {
    name: "after",
    in: "query",
    description: "a previous page's next_after",
    schema: { type: "string" },
  },
];

export const OPENAPI_DOCUMENT = {
  openapi: "3.1.0",
  info: {
    title: "Link and event feed API",
    version: "1",
    description: "SDK API ({base_url} = /api/v1/sdk), feed API, instance admin and operations.",
    // The project's licence (LICENSE); OpenAPI 3.1 takes an SPDX identifier or a URL, not both.
    license: { name: "Apache-2.0", identifier: "Apache-2.0" },
  },
  servers: [{ url: "/", description: "this instance (the origin serving this document)" }],
  components: {
    securitySchemes: {
      projectKey: { type: "apiKey", in: "header", name: "PROJECT-KEY" },
      feedToken: { type: "http", scheme: "bearer", description: "est_… feed token" },
      agentKey: {
        type: "http",
        scheme: "bearer",
        description: "An sk_… API key: its environment and scopes (docs/agents.md)",
      },
      adminToken: {
        type: "http",
        scheme: "bearer",
        description: "The instance ADMIN_TOKEN; on routes under /api/v1/projects/{project_id}/, " +
          "also an sk_… API key of that environment with the route's scope (docs/access.md)",
      },
    },
    responses: {
      MalformedRequest: {
        description: "A malformed request, or more headers than the HTTP server takes " +
          "(answered by the HTTP server, without a body)",
      },
    },
    schemas: componentSchemas(),
  },
  paths: {
    "/api/v1/sdk/generate_link": {
      post: {
        operationId: "generateLink",
        summary: "Generate a link",
        security: sdkSecurity,
        parameters: [linkEnvironment],
        requestBody: body("GenerateLinkBody"),
        responses: {
          200: ok("The link's short URL", object({ link: { type: "string" } })),
          400: error("Malformed JSON, a field of the wrong shape, or a bad ENVIRONMENT"),
          401: error("PROJECT-KEY missing or unknown"),
          ...sdkWriteLimited,
        },
      },
    },
    "/api/v1/sdk/link/{link_path}": {
      get: {
        operationId: "getLink",
        summary: "Get link details",
        security: sdkSecurity,
        parameters: [pathParam("link_path"), linkEnvironment],
        responses: {
          200: ok("The link", object({ link: ref("Link") })),
          400: error("Bad ENVIRONMENT"),
          401: error("PROJECT-KEY missing or unknown"),
          404: error("No such link in this environment"),
        },
      },
    },
    "/api/v1/sdk/metrics_for_project": {
      get: {
        operationId: "getProjectMetrics",
        summary: "Lifetime metrics of the active links, by views",
        security: sdkSecurity,
        parameters: [
          environment(METRICS_ENVIRONMENTS),
          {
            name: "If-None-Match",
            in: "header",
            description: "an ETag of an earlier answer: 304 while the metrics are unchanged",
            schema: { type: "string" },
          },
        ],
        responses: {
          200: {
            ...ok("Metrics", { type: "array", items: ref("LinkMetrics") }),
            headers: { ETag: { description: "the answer's tag", schema: { type: "string" } } },
          },
          304: { description: "Not modified (If-None-Match names the current ETag)" },
          400: error("ENVIRONMENT is not production or test"),
          401: error("PROJECT-KEY missing or unknown"),
        },
      },
    },
    "/api/v1/sdk/events": {
      post: {
        operationId: "ingestEvents",
        summary: `Ingest app events (1–${MAX_EVENTS} a batch, all or nothing)`,
        security: sdkSecurity,
        parameters: [linkEnvironment],
        requestBody: body("IngestBody"),
        responses: {
          202: ok(
            "Stored",
            object({ accepted: { type: "integer" }, duplicates: { type: "integer" } }),
          ),
          400: error("An invalid event (the message names index and field)"),
          401: error("PROJECT-KEY missing or unknown"),
          413: error("Body over 1 MiB"),
          ...sdkWriteLimited,
        },
      },
    },
    "/api/v1/projects/{project_id}/event_stream": {
      get: {
        operationId: "readEventFeed",
        summary: "Read the event feed",
        security: [{ feedToken: [] }],
        parameters: [
          projectId,
          { name: "after", in: "query", schema: { type: "string" } },
          {
            name: "limit",
            in: "query",
            schema: { type: "integer", minimum: 1, maximum: MAX_FEED_LIMIT },
          },
          eventTypesParam,
        ],
        responses: {
          200: ok(
            "A feed page",
            object({
              schema_version: { type: "integer" },
              events: { type: "array", items: ref("FeedEvent") },
              next_after: { type: "string" },
            }),
          ),
          400: error("Bad cursor, limit or event type"),
          401: error("Token missing, unknown or revoked"),
          402: error("No Enterprise access"),
          403: error("Token not of this project_id"),
          503: {
            ...error("Over 120 requests a minute (rate_limited), or the database is unreachable"),
            headers: {
              "Retry-After": {
                description: "With rate_limited: seconds until a request is accepted again",
                schema: { type: "integer", minimum: 1 },
              },
            },
          },
        },
      },
    },
    "/api/v1/projects/{project_id}/event_stream/live": {
      get: {
        summary: "Follow the event feed live (Server-Sent Events)",
        operationId: "streamEventFeed",
        description: "The same token, checks, filters and cursors as event_stream. One message " +
          "per event: `id:` the cursor just after it, `event: feed_event`, `data:` the " +
          "envelope; a comment every 15 s. Resume with `Last-Event-ID` (or `after`). Opening " +
          "counts as one read; at most 2 open streams per token; a stream ends after 1 h and " +
          "within 5 s of the token's revocation or the loss of Enterprise.",
        security: [{ feedToken: [] }],
        parameters: [
          projectId,
          { name: "after", in: "query", schema: { type: "string" } },
          { name: "Last-Event-ID", in: "header", schema: { type: "string" } },
          eventTypesParam,
        ],
        responses: {
          200: ok(
            "An event stream; each message's data is a FeedEvent",
            { type: "string" },
            "text/event-stream",
          ),
          400: error("Bad cursor or event type"),
          401: error("Token missing, unknown or revoked"),
          402: error("No Enterprise access"),
          403: error("Token not of this project_id"),
          503: {
            ...error(
              "Over 120 reads a minute or 2 streams already open (rate_limited), or unavailable",
            ),
            headers: {
              "Retry-After": {
                description: "With rate_limited: seconds until a stream may be opened again",
                schema: { type: "integer", minimum: 1 },
              },
            },
          },
        },
      },
    },
    "/api/v1/admin/projects": {
      get: {
        operationId: "listProjects",
        summary: "List projects, newest first; q keeps those whose name contains it",
        security: adminSecurity,
        parameters: [{ name: "q", in: "query", schema: { type: "string", maxLength: 200 } }],
        responses: {
          200: ok("The projects", {
            type: "object",
            properties: { projects: { type: "array", items: ref("Project") } },
          }),
          400: error("Invalid q"),
          ...adminRefusals,
        },
      },
      post: {
        operationId: "createProject",
        summary: "Create a project (its key is shown once)",
        security: adminSecurity,
        requestBody: body("CreateProjectBody"),
        responses: {
          201: ok("Created", object({ project: ref("Project") })),
          400: error("Invalid body"),
          ...adminRefusals,
        },
      },
    },
    "/api/v1/admin/projects/{hashid}": {
      get: {
        operationId: "getProject",
        summary: "Read a project",
        security: adminSecurity,
        parameters: [pathParam("hashid")],
        responses: {
          200: ok("The project", object({ project: ref("Project") })),
          ...adminRefusals,
          404: error("No such project"),
        },
      },
      patch: {
        operationId: "updateProject",
        summary: "Rename, grant or withdraw Enterprise, set the link domain, apps and SDK limits",
        description: "For link_domain, apps.ios, apps.android, sdk_limits.per_key and " +
          "sdk_limits.per_address: absent leaves the setting, null removes it (a limit returns " +
          "to its default), a value replaces it. A domain used by another project, or any " +
          "malformed value, is 400 invalid_field naming the field, and nothing changes.",
        security: adminSecurity,
        parameters: [pathParam("hashid")],
        requestBody: body("UpdateProjectBody"),
        responses: {
          200: ok("The project", object({ project: ref("Project") })),
          400: error("Invalid body"),
          ...adminRefusals,
          404: error("No such project"),
        },
      },
    },
    "/api/v1/admin/projects/{hashid}/regenerate_key": {
      post: {
        operationId: "regenerateProjectKey",
        summary: "Replace the project key (the old one stops at once)",
        security: adminSecurity,
        parameters: [pathParam("hashid")],
        responses: {
          200: ok("The new key", {
            type: "object",
            properties: { project_key: { type: "string" } },
          }),
          ...adminRefusals,
          404: error("No such project"),
        },
      },
    },
    "/api/v1/admin/projects/{hashid}/qr_logo": {
      put: {
        operationId: "putQrLogo",
        summary: "Set the logo drawn in the middle of the project's QR codes (logo=1)",
        description: "The body is the image itself: a PNG (image/png) or an SVG " +
          "(image/svg+xml) without scripts, event handlers or external references, at most " +
          "256 KiB. An SVG logo is drawn on SVG codes only.",
        security: adminSecurity,
        parameters: [pathParam("hashid")],
        requestBody: {
          required: true,
          content: {
            "image/png": { schema: { type: "string", contentMediaType: "image/png" } },
            "image/svg+xml": { schema: { type: "string" } },
          },
        },
        responses: {
          200: ok(
            "The stored logo",
            object({
              qr_logo: object({
                type: { type: "string", enum: ["image/png", "image/svg+xml"] },
                bytes: { type: "integer" },
              }),
            }),
          ),
          400: error("Not a PNG or a plain SVG, or empty (invalid_field, field logo)"),
          ...adminRefusals,
          404: error("No such project"),
          413: error("Over 256 KiB"),
        },
      },
    },
    "/api/v1/admin/fx_rates": {
      post: {
        operationId: "loadFxRates",
        summary: "Load the European Central Bank's reference rates (its XML file)",
        description: "The body is one of the ECB's reference-rate files as published " +
          "(eurofxref-daily.xml, eurofxref-hist-90d.xml or eurofxref-hist.xml), at most 16 MiB. " +
          "Rates new or different from those stored are stored, and every purchase whose " +
          "conversion into its project's reporting currency they change is reconverted, in one " +
          "transaction. A malformed file stores nothing. The instance also fetches the daily " +
          "file itself when it can reach the ECB (FX_RATES_URL).",
        security: adminSecurity,
        requestBody: {
          required: true,
          content: {
            "application/xml": { schema: { type: "string" } },
            "text/xml": { schema: { type: "string" } },
          },
        },
        responses: {
          200: ok(
            "Stored",
            object({
              fx_rates: object({
                rates: { type: "integer", description: "rates in the file" },
                changed: { type: "integer", description: "rates new or changed" },
                reconverted: { type: "integer", description: "purchases reconverted" },
                last_day: {
                  type: ["string", "null"],
                  format: "date",
                  description: "the latest day of the file",
                },
              }),
            }),
          ),
          400: error("Not an ECB reference-rate file (invalid_field, field body)"),
          ...adminRefusals,
          413: error("Over 16 MiB"),
        },
      },
    },
    "/api/v1/projects/{project_id}/event_stream_tokens": {
      post: {
        operationId: "createFeedToken",
        summary: "Create a feed token (its value is shown once; starts capture)",
        security: adminSecurity,
        parameters: [projectId],
        requestBody: body("CreateFeedTokenBody"),
        responses: {
          201: ok("Created", object({ token: ref("CreatedFeedToken") })),
          400: error("Invalid body"),
          ...adminRefusals,
          402: error("No Enterprise access"),
          404: error("No such project_id"),
        },
      },
      get: {
        operationId: "listFeedTokens",
        summary: "List active feed tokens",
        security: adminSecurity,
        parameters: [projectId],
        responses: {
          200: ok("Tokens", object({ tokens: { type: "array", items: ref("FeedToken") } })),
          ...adminRefusals,
          404: error("No such project_id"),
        },
      },
    },
    "/api/v1/projects/{project_id}/event_stream_tokens/{token_id}": {
      delete: {
        operationId: "revokeFeedToken",
        summary: "Revoke a feed token",
        security: adminSecurity,
        parameters: [projectId, pathParam("token_id", { type: "integer" })],
        responses: {
          204: { description: "Revoked" },
          ...adminRefusals,
          404: error("No such token"),
        },
      },
    },
    "/api/v1/projects/{project_id}/api_keys": {
      post: {
        operationId: "createApiKey",
        summary: "Create an API key (its value is shown once)",
        description: "Scopes: links:read, links:write, analytics:read, events:read, admin. " +
          "A key created by another key cannot have a scope its creator lacks.",
        security: adminSecurity,
        parameters: [projectId],
        requestBody: body("CreateApiKeyBody"),
        responses: {
          201: ok("Created", object({ api_key: ref("CreatedApiKey") })),
          400: error("Invalid body, or expires_at not in the future"),
          ...adminRefusals,
          404: error("No such project_id"),
        },
      },
      get: {
        operationId: "listApiKeys",
        summary: "List the API keys not revoked (values hidden)",
        security: adminSecurity,
        parameters: [projectId],
        responses: {
          200: ok("Keys", object({ api_keys: { type: "array", items: ref("ApiKey") } })),
          ...adminRefusals,
          404: error("No such project_id"),
        },
      },
    },
    "/api/v1/projects/{project_id}/api_keys/{key_id}": {
      delete: {
        operationId: "revokeApiKey",
        summary: "Revoke an API key (refused from the next request on)",
        security: adminSecurity,
        parameters: [projectId, pathParam("key_id", { type: "integer" })],
        responses: {
          204: { description: "Revoked" },
          ...adminRefusals,
          404: error("No such key"),
        },
      },
    },
    "/api/v1/admin/accounts": {
      post: {
        operationId: "createAccount",
        summary: "Create a person's account and its setup link (shown once, valid 7 days)",
        security: adminSecurity,
        requestBody: body("CreateAccountBody"),
        responses: {
          201: ok(
            "Created",
            object({
              account: ref("Account"),
              setup_url: {
                type: "string",
                description: "where the person sets a password; works once",
              },
            }),
          ),
          400: error("Invalid body"),
          ...adminRefusals,
          403: error("Not the instance admin"),
          409: error("An account with this email exists"),
        },
      },
      get: {
        operationId: "listAccounts",
        summary: "List every account",
        security: adminSecurity,
        responses: {
          200: ok("Accounts", object({ accounts: { type: "array", items: ref("Account") } })),
          ...adminRefusals,
          403: error("Not the instance admin"),
        },
      },
    },
    "/api/v1/admin/accounts/{account_id}": {
      delete: {
        operationId: "deleteAccount",
        summary: "Remove an account: its sessions and keys stop on the next request",
        security: adminSecurity,
        parameters: [pathParam("account_id", { type: "integer" })],
        responses: {
          204: { description: "Removed" },
          ...adminRefusals,
          403: error("Not the instance admin"),
          404: error("No such account"),
          409: error("The only owner of a project that has other members"),
        },
      },
    },
    "/api/v1/admin/accounts/{account_id}/revoke_made": {
      post: {
        operationId: "revokeMadeByAccount",
        summary: "Revoke everything a person made: the API keys, feed tokens and destinations " +
          "that belong to the account (made by them or by a key of theirs); destinations are " +
          "paused. Works for a removed account too.",
        security: adminSecurity,
        parameters: [pathParam("account_id", { type: "integer" })],
        responses: {
          200: ok(
            "What was revoked",
            object({
              revoked: object({
                api_keys: { type: "integer" },
                feed_tokens: { type: "integer" },
                destinations_paused: { type: "integer" },
              }),
            }),
          ),
          ...adminRefusals,
          403: error("Not the instance admin"),
          404: error("No such account, and nothing made by one with this id"),
        },
      },
    },
    "/api/v1/admin/projects/{hashid}/members": {
      get: {
        operationId: "listMembers",
        summary: "The project's members and their roles",
        security: adminSecurity,
        parameters: [pathParam("hashid")],
        responses: {
          200: ok("Members", object({ members: { type: "array", items: ref("Member") } })),
          ...adminRefusals,
          403: error("Not allowed by the permission table"),
          404: error("No such project"),
        },
      },
    },
    "/api/v1/admin/projects/{hashid}/members/{account_id}": {
      put: {
        operationId: "setMember",
        summary: "Add an account to the project with a role, or change its role",
        security: adminSecurity,
        parameters: [pathParam("hashid"), pathParam("account_id", { type: "integer" })],
        requestBody: body("PutMemberBody"),
        responses: {
          200: ok("The member", object({ member: ref("Member") })),
          400: error("Invalid role"),
          ...adminRefusals,
          403: error("Not allowed by the permission table"),
          404: error("No such project or account"),
          409: error("The project would have members but no owner"),
        },
      },
      delete: {
        operationId: "removeMember",
        summary: "Remove a member; the API keys that are theirs in the project (made by them or " +
          "by a key of theirs) are revoked",
        security: adminSecurity,
        parameters: [pathParam("hashid"), pathParam("account_id", { type: "integer" })],
        responses: {
          204: { description: "Removed" },
          ...adminRefusals,
          403: error("Not allowed by the permission table"),
          404: error("No such project or member"),
          409: error("The last owner, even when no other member would stay"),
        },
      },
    },
    "/api/v1/projects/{project_id}/audit_log": {
      get: {
        operationId: "listProjectAuditLog",
        summary: "The project's audit log (both environments), newest first",
        security: adminSecurity,
        parameters: [projectId, ...auditPageParams],
        responses: {
          200: ok("A page of entries", ref("AuditLogPage")),
          400: error("Bad limit (invalid_limit) or after (bad_cursor)"),
          ...adminRefusals,
          404: error("No such project_id"),
        },
      },
    },
    "/api/v1/admin/audit_log": {
      get: {
        operationId: "listInstanceAuditLog",
        summary: "The whole instance's audit log, newest first",
        security: adminSecurity,
        parameters: auditPageParams,
        responses: {
          200: ok("A page of entries", ref("AuditLogPage")),
          400: error("Bad limit (invalid_limit) or after (bad_cursor)"),
          ...adminRefusals,
          403: error("Not the instance admin"),
        },
      },
    },
    "/api/v1/projects/{project_id}/destinations": {
      post: {
        operationId: "createDestination",
        summary: "Register a push destination (starts capture); its signing secret is shown once",
        description: "See docs/webhooks.md. Loopback, private, link-local, multicast and " +
          "unspecified addresses, and IPv6 forms carrying such an IPv4 address (mapped, " +
          "compatible, NAT64, 6to4, Teredo), are refused unless DESTINATIONS_ALLOW_PRIVATE=true.",
        security: adminSecurity,
        parameters: [projectId],
        requestBody: body("CreateDestinationBody"),
        responses: {
          201: ok("Created", {
            type: "object",
            properties: {
              destination: {
                allOf: [ref("Destination"), {
                  type: "object",
                  properties: { secret: { type: "string", description: "whsec_…, shown once" } },
                }],
              },
            },
          }),
          400: error("Invalid body, unknown event type or refused address"),
          ...adminRefusals,
          404: error("No such project_id"),
        },
      },
      get: {
        operationId: "listDestinations",
        summary: "List destinations with their delivery status",
        security: adminSecurity,
        parameters: [projectId],
        responses: {
          200: ok("Destinations", {
            type: "object",
            properties: { destinations: { type: "array", items: ref("Destination") } },
          }),
          ...adminRefusals,
          404: error("No such project_id"),
        },
      },
    },
    "/api/v1/projects/{project_id}/destinations/{destination_id}": {
      patch: {
        operationId: "updateDestination",
        summary: "Pause or resume a destination (a paused one keeps its place)",
        security: adminSecurity,
        parameters: [projectId, pathParam("destination_id", { type: "integer" })],
        requestBody: body("PatchDestinationBody"),
        responses: {
          200: ok("Updated", {
            type: "object",
            properties: { destination: ref("Destination") },
          }),
          400: error("Invalid body"),
          ...adminRefusals,
          404: error("No such destination"),
        },
      },
      delete: {
        operationId: "deleteDestination",
        summary: "Delete a destination (stops delivery; stops capture when nothing else reads)",
        security: adminSecurity,
        parameters: [projectId, pathParam("destination_id", { type: "integer" })],
        responses: {
          204: { description: "Deleted" },
          ...adminRefusals,
          404: error("No such destination"),
        },
      },
    },
    "/api/v1/projects/{project_id}/destinations/{destination_id}/rotate_secret": {
      post: {
        operationId: "rotateDestinationSecret",
        summary: "New signing secret; the old one also signs for 24 h",
        security: adminSecurity,
        parameters: [projectId, pathParam("destination_id", { type: "integer" })],
        responses: {
          200: ok("Rotated", {
            type: "object",
            properties: { secret: { type: "string", description: "whsec_…, shown once" } },
          }),
          ...adminRefusals,
          404: error("No such destination"),
        },
      },
    },
    "/api/v1/projects/{project_id}/destinations/{destination_id}/test": {
      post: {
        operationId: "testDestination",
        summary: 'One signed delivery with "events": [] and "test": true, now',
        security: adminSecurity,
        parameters: [projectId, pathParam("destination_id", { type: "integer" })],
        responses: {
          200: ok("The receiver's answer", {
            type: "object",
            properties: {
              status: { type: ["integer", "null"] },
              error: { type: ["string", "null"] },
              duration_ms: { type: "integer" },
            },
          }),
          ...adminRefusals,
          404: error("No such destination"),
        },
      },
    },
    "/api/v1/projects/{project_id}/links/{link_path}": {
      patch: {
        operationId: "updateLink",
        summary: "Edit a link: any editable field, active, archived, expiry",
        description: "null clears an optional field; updated_at moves on every change. " +
          "path, id, sdk_generated and generated_from_platform cannot change.",
        security: adminSecurity,
        parameters: [projectId, pathParam("link_path")],
        requestBody: body("PatchLinkBody"),
        responses: {
          200: ok("The link", object({ link: ref("ManagedLink") })),
          400: error("Malformed JSON or an invalid field (code invalid_field, naming it)"),
          ...adminRefusals,
          404: error("No such project_id or link"),
        },
      },
      delete: {
        operationId: "deleteLink",
        summary: "Delete a link and its counters; its path is never given to another link",
        security: adminSecurity,
        parameters: [projectId, pathParam("link_path")],
        responses: {
          204: { description: "Deleted" },
          ...adminRefusals,
          404: error("No such project_id or link"),
        },
      },
    },
    "/api/v1/projects/{project_id}/links/{link_path}/split": {
      get: {
        operationId: "getSplitResults",
        summary: "A split's results: per variant its figures and the probability it is best",
        description: "Views attributed to each variant by the link host, and the installs, " +
          "purchases and revenue of events that carry attribution.variant. The link's own " +
          "split by default (or its rules' only split); rule= names a rule's split.",
        security: adminSecurity,
        parameters: [
          projectId,
          pathParam("link_path"),
          query("rule", { type: "string" }, "a rule's name or 1-based number"),
        ],
        responses: {
          200: ok("The results", ref("SplitResults")),
          400: error("The link has no such split (invalid_field, field rule)"),
          ...adminRefusals,
          404: error("No such project_id or link"),
        },
      },
    },
    "/api/v1/projects/{project_id}/links/{link_path}/qr": {
      get: {
        operationId: "getLinkQr",
        summary: "The link's QR code, SVG or PNG, in the given size, colours and margin",
        description: "Decodes to the link's URL (its link domain's when the project has one). " +
          "Colours under 3:1 contrast, or light modules on a dark ground, are refused. " +
          "logo=1 draws the project's logo over at most 20% of the code with ecc forced to H.",
        security: adminSecurity,
        parameters: [
          projectId,
          pathParam("link_path"),
          query("format", { type: "string", enum: ["svg", "png"], default: "svg" }),
          query("size", { type: "integer", minimum: 64, maximum: 2048, default: 512 }, "pixels"),
          query("fg", { type: "string", pattern: "^#[0-9A-Fa-f]{6}$", default: "#000000" }),
          query("bg", {
            type: "string",
            pattern: "^(#[0-9A-Fa-f]{6}|transparent)$",
            default: "#ffffff",
          }),
          query("margin", { type: "integer", minimum: 0, maximum: 16, default: 4 }, "modules"),
          query("ecc", { type: "string", enum: ["L", "M", "Q", "H"], default: "M" }),
          query("logo", { type: "string", enum: ["0", "1"], default: "0" }),
        ],
        responses: {
          200: {
            description: "The code",
            content: {
              "image/svg+xml": { schema: { type: "string" } },
              "image/png": { schema: { type: "string", contentMediaType: "image/png" } },
            },
          },
          400: error(
            "A bad option, too little contrast, a size too small for the code, or " +
              "logo=1 without a logo (invalid_field)",
          ),
          ...adminRefusals,
          404: error("No such project_id or link"),
        },
      },
    },
    "/api/v1/projects/{project_id}/links/import": {
      post: {
        operationId: "importLinks",
        summary: "Import links from CSV, all or nothing (up to 100,000 rows, 64 MiB)",
        description: "A header row of column names (path, title, subtitle, image, data, tags, " +
          "ios_url, ios_open_app, android_url, android_open_app, desktop_url, show_preview_ios, " +
          "show_preview_android, tracking_campaign, tracking_source, tracking_medium, " +
          "expires_at, max_views, expired_url), then one link a row.",
        security: adminSecurity,
        parameters: [projectId],
        requestBody: {
          required: true,
          content: { "text/csv": { schema: { type: "string" } } },
        },
        responses: {
          201: ok("Every row stored", object({ imported: { type: "integer" } })),
          400: {
            description: "Bad rows (each by row and field) or a bad header (ImportRefused), or " +
              "a Content-Type other than text/csv (Error); nothing stored",
            content: { [json]: { schema: { anyOf: [ref("ImportRefused"), ref("Error")] } } },
          },
          ...adminRefusals,
          404: error("No such project_id"),
          413: error("More than 100,000 rows or 64 MiB"),
        },
      },
    },
    "/api/v1/projects/{project_id}/links/export": {
      get: {
        operationId: "exportLinks",
        summary: "Every link of the environment with its state and counters, as CSV (streamed)",
        security: adminSecurity,
        parameters: [projectId],
        responses: {
          200: ok(
            "The import's columns, then id, created_at, updated_at, state and the " +
              "nine lifetime counters",
            { type: "string" },
            "text/csv",
          ),
          ...adminRefusals,
          404: error("No such project_id"),
        },
      },
    },
    "/api/v1/projects/{project_id}/links": {
      get: {
        operationId: "listLinks",
        summary: "The environment's links (archived ones only with state=archived), cursor-paged",
        security: adminSecurity,
        parameters: [
          projectId,
          {
            name: "limit",
            in: "query",
            schema: { type: "integer", minimum: 1, maximum: 100, default: 50 },
          },
          {
            name: "after",
            in: "query",
            description: "next_after of the previous page (same order)",
            schema: { type: "string" },
          },
          {
            name: "q",
            in: "query",
            description: "substring of the title, subtitle or path (case-insensitive)",
            schema: { type: "string", maxLength: 200 },
          },
          { name: "tag", in: "query", schema: { type: "string", maxLength: 200 } },
          { name: "campaign", in: "query", schema: { type: "string", maxLength: 255 } },
          { name: "source", in: "query", schema: { type: "string", maxLength: 255 } },
          { name: "medium", in: "query", schema: { type: "string", maxLength: 255 } },
          {
            name: "state",
            in: "query",
            schema: { type: "string", enum: ["active", "inactive", "archived", "expired"] },
          },
          { name: "sdk_generated", in: "query", schema: { type: "boolean" } },
          {
            name: "order",
            in: "query",
            schema: {
              type: "string",
              enum: ["created_at", "-created_at", "updated_at", "-updated_at", "views", "-views"],
              default: "-created_at",
            },
          },
        ],
        responses: {
          200: ok(
            "One page of links",
            object({
              links: { type: "array", items: ref("ManagedLink") },
              next_after: {
                type: ["string", "null"],
                description: "the next page's after, or null on the last page",
              },
            }),
          ),
          400: error(
            "An invalid filter (invalid_field), limit (invalid_limit) or after " +
              "(bad_cursor)",
          ),
          ...adminRefusals,
          404: error("No such project_id"),
        },
      },
      post: {
        operationId: "createLink",
        summary: "Create a link, with a chosen path and expiry if wanted",
        description: "The fields of generate_link, with data as a JSON object and tags as an " +
          "array of strings (not strings holding JSON), plus path, expires_at, max_views and " +
          "expired_url. generated_from_platform is API.",
        security: adminSecurity,
        parameters: [projectId],
        requestBody: body("CreateManagedLinkBody"),
        responses: {
          201: ok("The link", object({ link: ref("ManagedLink") })),
          400: error("Invalid body; a path that is taken (now or ever), reserved or malformed"),
          ...adminRefusals,
          404: error("No such project_id"),
        },
      },
    },
    "/api/v1/projects/{project_id}/events_per_day": {
      get: {
        operationId: "getEventsPerDay",
        summary: "Recorded events per UTC day and type, from the analytics history",
        security: adminSecurity,
        parameters: [
          projectId,
          {
            name: "days",
            in: "query",
            description: "how many days up to today (default 30)",
            schema: { type: "integer", minimum: 1, maximum: 90 },
          },
        ],
        responses: {
          200: ok("One entry a day, oldest first, every type counted (zeros included)", {
            type: "object",
            properties: {
              days: {
                type: "array",
                items: {
                  type: "object",
                  properties: {
                    date: { type: "string", format: "date" },
                    counts: { type: "object", additionalProperties: { type: "integer" } },
                    total: { type: "integer" },
                  },
                },
              },
            },
          }),
          400: error("Invalid days"),
          ...adminRefusals,
          404: error("No such project_id"),
        },
      },
    },
    "/api/v1/projects/{project_id}/export": {
      get: {
        operationId: "exportEvents",
        summary: "Stream the environment's analytics history as NDJSON (at most 31 days)",
        security: adminSecurity,
        parameters: [
          projectId,
          {
            name: "from",
            in: "query",
            required: true,
            schema: { type: "string", format: "date-time" },
          },
          {
            name: "to",
            in: "query",
            required: true,
            schema: { type: "string", format: "date-time" },
          },
          eventTypesParam,
        ],
        responses: {
          200: {
            ...ok("One feed-event envelope a line", ref("FeedEvent"), "application/x-ndjson"),
            headers: {
              "Retained-Since": {
                description: "Start of the analytics retention window (ISO 8601)",
                schema: { type: "string", format: "date-time" },
              },
            },
          },
          400: error("Bad from/to or event type"),
          ...adminRefusals,
          404: error("No such project_id"),
        },
      },
    },
    "/api/v1/projects/{project_id}/analytics": {
      get: {
        operationId: "getAnalytics",
        summary: "Totals, a series over time and one breakdown of the environment's events",
        description:
          "Figures from hourly rollups, equal to counts over the raw events (duplicates never " +
          "counted; revenue and purchases per current purchase version, revenue in minor units of " +
          "the project's reporting currency, each purchase converted at the ECB's rate of its " +
          "day; purchases no rate converts count only in unconverted_purchases; with " +
          "group_by=currency each group's revenue is in its own currency). The range is widened " +
          "to whole buckets of the interval (whole hours without one) in `tz`; `from` and `to` " +
          "in the answer say which. Filters: `filter[<dimension>]=<value>` for any group_by " +
          "dimension, all of which must hold.",
        security: adminSecurity,
        parameters: [
          projectId,
          query(
            "from",
            { type: "string", anyOf: [{ format: "date-time" }, { format: "date" }] },
            "An instant, or a date (the start of that day in `tz`). Default: 30 days before `to`",
          ),
          query(
            "to",
            { type: "string", anyOf: [{ format: "date-time" }, { format: "date" }] },
            "An instant, or a date (the start of that day in `tz`). Default: now; at most 400 " +
              "days after `from`",
          ),
          query("interval", { type: "string", enum: [...INTERVALS] }, "Without it, totals only"),
          query("tz", { type: "string", default: "UTC" }, "An IANA zone with whole-hour offsets"),
          query(
            "metrics",
            { type: "string", default: "views,installs" },
            `Comma list of ${METRICS.join(", ")}`,
          ),
          query("group_by", { type: "string", enum: [...DIMENSIONS] }),
          query("limit", { type: "integer", minimum: 1, maximum: 1000, default: 10 }, "Groups"),
          query("link", { type: "string" }, "Only this link (its path)"),
          {
            name: "filter",
            in: "query",
            style: "deepObject",
            explode: true,
            description: "filter[<dimension>]=<value>",
            schema: {
              type: "object",
              properties: Object.fromEntries(DIMENSIONS.map((d) => [d, { type: "string" }])),
              additionalProperties: false,
            },
          },
        ],
        responses: {
          200: ok("The figures", ref("Analytics")),
          400: error("A bad parameter (invalid_field, naming it)"),
          ...adminRefusals,
          404: error("No such project_id"),
        },
      },
    },
    "/api/v1/projects/{project_id}/analytics/funnel": {
      get: {
        operationId: "getFunnel",
        summary: "Views, installs, purchasers, purchases and revenue of the attributed events, " +
          "and the top links by revenue",
        description: "The funnel of the environment (or of `link`): views, installs attributed " +
          "to a link, distinct users with an attributed purchase, those purchases and their " +
          "revenue (current versions, converted into the reporting currency, minor units), each " +
          "step's rate and the median time from click to install. An install counts by its " +
          "occurred_at, a purchase by its event's hour, a view by its hour; the range is widened " +
          "to whole hours of `tz`. With group_by=link, the top `limit` links with an attributed " +
          "install or purchase in the range, by revenue, purchases, installs, views, then id.",
        security: adminSecurity,
        parameters: [
          projectId,
          query(
            "from",
            { type: "string", anyOf: [{ format: "date-time" }, { format: "date" }] },
            "An instant, or a date (the start of that day in `tz`). Default: 30 days before `to`",
          ),
          query(
            "to",
            { type: "string", anyOf: [{ format: "date-time" }, { format: "date" }] },
            "An instant, or a date (the start of that day in `tz`). Default: now; at most 400 " +
              "days after `from`",
          ),
          query("tz", { type: "string", default: "UTC" }, "An IANA zone with whole-hour offsets"),
          query("link", { type: "string" }, "Only this link (its path)"),
          query("group_by", { type: "string", enum: ["link"] }, "The top links by revenue"),
          query("limit", { type: "integer", minimum: 1, maximum: 1000, default: 10 }, "Links"),
        ],
        responses: {
          200: ok("The funnel", ref("Funnel")),
          400: error("A bad parameter (invalid_field, naming it)"),
          ...adminRefusals,
          404: error("No such project_id"),
        },
      },
    },
    "/healthz": {
      get: {
        operationId: "getHealth",
        summary: "The process answers",
        security: publicRoute,
        responses: {
          200: ok("ok", object({ status: { const: "ok" } })),
          400: malformedRequest,
        },
      },
    },
    "/readyz": {
      get: {
        operationId: "getReadiness",
        summary: "The database answers",
        security: publicRoute,
        responses: {
          200: ok("ready", object({ status: { const: "ready" } })),
          400: malformedRequest,
          503: error("Database unreachable (code unavailable)"),
        },
      },
    },
    "/openapi.json": {
      get: {
        operationId: "getOpenApiDocument",
        summary: "This document",
        security: publicRoute,
        responses: {
          200: ok("OpenAPI 3.1", { type: "object" }),
          400: malformedRequest,
        },
      },
    },
    "/docs": {
      get: {
        operationId: "getApiReference",
        summary: "This document as a readable page (works offline)",
        security: publicRoute,
        responses: {
          200: ok("The reference page", { type: "string" }, "text/html"),
          400: malformedRequest,
        },
      },
    },
    "/docs/{page}": {
      get: {
        operationId: "getDocPage",
        summary: "A page of the documentation as Markdown (those /llms.txt lists)",
        security: publicRoute,
        parameters: [pathParam("page", { type: "string", pattern: "^[A-Za-z0-9_-]+\\.md$" })],
        responses: {
          200: ok("The page", { type: "string" }, "text/markdown"),
          404: error("Not a page of the documentation"),
        },
      },
    },
    "/llms.txt": {
      get: {
        operationId: "getLlmsTxt",
        summary: "An index of the documentation for agents (llms.txt)",
        security: publicRoute,
        responses: {
          200: ok("Links to the documentation's pages and API descriptions", {
            type: "string",
          }, "text/plain"),
          400: malformedRequest,
        },
      },
    },
    "/mcp": {
      post: {
        operationId: "postMcpMessage",
        summary: "The Model Context Protocol (Streamable HTTP, stateless): an API key's tools",
        description: "JSON-RPC 2.0 messages of the Model Context Protocol (docs/agents.md). The " +
          "key's scopes decide the tools listed and callable; a refused or failed call is a " +
          "tool result with isError and `code: message` (REST's error code). No session: " +
          "every request stands alone.",
        security: agentSecurity,
        parameters: [
          {
            name: "Accept",
            in: "header",
            required: true,
            schema: { type: "string", example: "application/json, text/event-stream" },
          },
        ],
        requestBody: {
          required: true,
          content: {
            [json]: {
              schema: {
                description:
                  "A JSON-RPC message, or a batch of at most 100 (at most 10 requests: " +
                  "those beyond are answered with an error)",
                oneOf: [jsonRpcMessage, { type: "array", items: jsonRpcMessage, maxItems: 100 }],
              },
            },
          },
        },
        responses: {
          200: ok("The JSON-RPC response (an array for a batch)", {
            oneOf: [jsonRpcMessage, { type: "array", items: jsonRpcMessage }],
          }),
          202: { description: "Notifications or responses only: accepted, no body" },
          400: ok("Not JSON, or not a JSON-RPC message (a JSON-RPC error)", jsonRpcError),
          401: {
            ...error("No API key, not an API key (the admin token included), revoked or expired"),
            headers: {
              "WWW-Authenticate": {
                description: 'Bearer realm="mcp"',
                schema: { type: "string" },
              },
            },
          },
          406: ok("Accept does not name application/json and text/event-stream", jsonRpcError),
          413: error("Body over 1 MiB"),
          415: ok("Content-Type is not application/json", jsonRpcError),
          503: error("The database is unreachable"),
        },
      },
      get: {
        operationId: "getMcpStream",
        summary: "No event stream is offered (stateless): 405 for a valid key",
        security: agentSecurity,
        responses: {
          401: error("No API key, or not a valid one"),
          405: ok("No stream: send messages with POST", jsonRpcError),
          // Never a success: the transport's way to say there is no stream and no session.
          default: error("503 unavailable: the database was unreachable while checking the key"),
        },
      },
      delete: {
        operationId: "deleteMcpSession",
        summary: "No session to end (stateless): 405 for a valid key",
        security: agentSecurity,
        responses: {
          401: error("No API key, or not a valid one"),
          405: ok("No session: nothing to end", jsonRpcError),
          // Never a success: the transport's way to say there is no stream and no session.
          default: error("503 unavailable: the database was unreachable while checking the key"),
        },
      },
    },
    "/{path}": {
      get: {
        operationId: "openLink",
        security: publicRoute,
        summary: "The link host: redirect, open-app page or preview page",
        description: "Served by Host: a project's links only on its link domain, projects " +
          "without one on LINK_BASE_URL's host (and localhost or an IP address).",
        parameters: [pathParam("path")],
        responses: {
          200: ok(
            "Preview page, or (iOS) the page that tries the app",
            { type: "string" },
            "text/html",
          ),
          302: {
            description: "Redirect: custom redirect, store page or Android intent:// URL; " +
              "for an expired link, its expired_url",
          },
          404: ok("Unknown, deactivated or archived link, or not served on this host", {
            type: "string",
          }, "text/html"),
          410: ok("The link has expired (by date or views) and has no expired_url", {
            type: "string",
          }, "text/html"),
        },
      },
      post: {
        operationId: "unlockLink",
        security: publicRoute,
        summary: "A password link's password (the form of its password page)",
        description: "The right password gets the link's usual answer (as GET) and counts " +
          "one view; a wrong one 401 and the page again; after 10 wrong ones from one address " +
          "in 15 minutes, 503 with Retry-After.",
        parameters: [pathParam("path")],
        requestBody: {
          required: true,
          content: {
            "application/x-www-form-urlencoded": {
              schema: object({ password: { type: "string", maxLength: 1024 } }),
            },
          },
        },
        responses: {
          200: ok("The link's preview or open-app page", { type: "string" }, "text/html"),
          302: { description: "The link's usual redirect" },
          401: ok("Wrong password: the password page again", { type: "string" }, "text/html"),
          404: ok("Unknown, deactivated or archived link", { type: "string" }, "text/html"),
          405: { description: "The link has no password: only GET and HEAD" },
          410: ok("The link has expired", { type: "string" }, "text/html"),
          503: {
            ...ok("Too many wrong passwords (rate_limited)", { type: "string" }, "text/html"),
            headers: {
              "Retry-After": {
                description: "seconds until a password is accepted again",
                schema: { type: "integer", minimum: 1 },
              },
            },
          },
        },
      },
    },
    "/.well-known/apple-app-site-association": {
      get: {
        operationId: "getAppleAppSiteAssociation",
        security: publicRoute,
        summary: "iOS universal links: the iOS app of the project that owns this host",
        responses: {
          200: ok("applinks.details[] with appIDs and components", { type: "object" }),
          304: { description: "Not modified (If-None-Match)" },
          404: error(
            "No project owns this host (the shared default host without DEFAULT_HOST_APPS_PROJECT), " +
              "or its project has no iOS app",
          ),
        },
      },
    },
    "/.well-known/assetlinks.json": {
      get: {
        operationId: "getAssetLinks",
        security: publicRoute,
        summary: "Android App Links: the Android app of the project that owns this host",
        responses: {
          200: ok("Digital Asset Links statements", { type: "array" }),
          304: { description: "Not modified (If-None-Match)" },
          404: error(
            "No project owns this host (the shared default host without DEFAULT_HOST_APPS_PROJECT), " +
              "or its project has no Android app",
          ),
        },
      },
    },
    "/open-app.js": {
      get: {
        operationId: "getOpenAppScript",
        security: publicRoute,
        summary: "The script of the iOS open-app page",
        responses: {
          200: ok("JavaScript", { type: "string" }, "text/javascript"),
          304: { description: "Not modified (If-None-Match)" },
          400: malformedRequest,
        },
      },
    },
  },
};

// rest/middleware.ts refuses any body over 1 MiB on every method but GET and HEAD (the links
// import has a limit of its own), before the route is reached: every such operation says so.
for (const operations of Object.values(OPENAPI_DOCUMENT.paths)) {
  for (const [method, operation] of Object.entries(operations)) {
    const responses = (operation as { responses: Record<string, unknown> }).responses;
    if (method !== "get" && !("413" in responses)) {
      responses[413] = error("Body over 1 MiB");
    }
  }
}
