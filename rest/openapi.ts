// GET /openapi.json: OpenAPI 3.1 of every REST path. Written by hand from the contract; the
// tests check that every route the app serves is described here, and that FeedEvent lists the
// envelope's fields (services/feed_envelope.ts). Limits come from the modules that enforce them.
import { MAX_EVENTS } from "../inputs/events.ts";
import { MAX_FEED_LIMIT } from "../services/feed.ts";
import { FEED_EVENT_TYPES, FEED_SCHEMA_VERSION } from "../services/feed_envelope.ts";

const json = "application/json";
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const error = (description: string) => ({
  description,
  content: { [json]: { schema: ref("Error") } },
});
const ok = (description: string, schema: unknown, type = json) => ({
  description,
  content: { [type]: { schema } },
});
const body = (schema: unknown) => ({ required: true, content: { [json]: { schema } } });
const pathParam = (name: string, schema: unknown = { type: "string" }) => ({
  name,
  in: "path",
  required: true,
  schema,
});
const projectId = pathParam("project_id", { type: "integer" });
const sdkSecurity = [{ projectKey: [], environment: [] }];
const adminSecurity = [{ adminToken: [] }];
const redirect = {
  type: "object",
  properties: { url: { type: "string" }, open_app_if_installed: { type: "boolean" } },
};
const scheme = {
  type: "string",
  pattern: "^[A-Za-z][A-Za-z0-9+.-]*$",
  description: "the app's URI scheme (RFC 3986), without ://; web schemes are refused",
};
const iosApp = {
  type: "object",
  additionalProperties: false,
  required: ["team_id", "bundle_id"],
  properties: {
    team_id: { type: "string", pattern: "^[A-Z0-9]{10}$" },
    bundle_id: { type: "string", pattern: "^[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+$" },
    app_store_id: { type: "string", pattern: "^[0-9]{1,15}$" },
    scheme,
  },
};
const androidApp = {
  type: "object",
  additionalProperties: false,
  required: ["package", "sha256_cert_fingerprints"],
  properties: {
    package: { type: "string", pattern: "^[A-Za-z][A-Za-z0-9_]*(\\.[A-Za-z][A-Za-z0-9_]*)+$" },
    sha256_cert_fingerprints: {
      type: "array",
      minItems: 1,
      maxItems: 10,
      items: { type: "string", pattern: "^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){31}$" },
    },
    scheme,
  },
};
const apps = {
  type: "object",
  additionalProperties: false,
  properties: { ios: iosApp, android: androidApp },
};
const linkDomain = {
  type: ["string", "null"],
  description: "host name the project's links are served on (null: LINK_BASE_URL's host)",
};
const project = {
  type: "object",
  properties: {
    link_domain: linkDomain,
    apps,
    id: { type: "string", description: "hashid" },
    name: { type: "string" },
    enterprise: { type: "boolean" },
    created_at: { type: "string", format: "date-time" },
    environments: {
      type: "object",
      properties: {
        production: { type: "object", properties: { project_id: { type: "integer" } } },
        test: { type: "object", properties: { project_id: { type: "integer" } } },
      },
    },
  },
};

export const OPENAPI_DOCUMENT = {
  openapi: "3.1.0",
  info: {
    title: "Link and event feed API",
    version: "1",
    description: "SDK API ({base_url} = /api/v1/sdk), feed API, instance admin and operations.",
  },
  components: {
    securitySchemes: {
      projectKey: { type: "apiKey", in: "header", name: "PROJECT-KEY" },
      environment: { type: "apiKey", in: "header", name: "ENVIRONMENT" },
      feedToken: { type: "http", scheme: "bearer", description: "est_… feed token" },
      adminToken: { type: "http", scheme: "bearer", description: "instance ADMIN_TOKEN" },
    },
    schemas: {
      Destination: {
        type: "object",
        properties: {
          id: { type: "integer" },
          url: { type: "string" },
          event_types: { type: "array", items: { type: "string" } },
          state: { type: "string", enum: ["active", "paused", "failing"] },
          created_at: { type: "string", format: "date-time" },
          last_attempt_at: { type: ["string", "null"], format: "date-time" },
          last_success_at: { type: ["string", "null"], format: "date-time" },
          last_error: { type: ["string", "null"] },
          pending: { type: "integer", description: "matching events not yet delivered" },
          dropped: { type: "integer", description: "events that expired undelivered" },
        },
      },
      Error: {
        type: "object",
        required: ["error"],
        properties: {
          error: {
            type: "object",
            required: ["status", "code", "message"],
            properties: {
              status: { type: "integer" },
              code: { type: "string" },
              message: { type: "string" },
            },
          },
        },
      },
      Redirect: redirect,
      Link: {
        type: "object",
        properties: {
          id: { type: "integer" },
          title: { type: "string" },
          subtitle: { type: "string" },
          path: { type: "string" },
          access_path: { type: "string" },
          updated_at: { type: "string", format: "date-time" },
          generated_from_platform: { type: "string" },
          data: { type: "object" },
          sdk_generated: { type: "boolean" },
          tags: { type: "array", items: { type: "string" } },
          active: { type: "boolean" },
          tracking_campaign: { type: ["string", "null"] },
          tracking_source: { type: ["string", "null"] },
          tracking_medium: { type: ["string", "null"] },
          show_preview: { type: "boolean" },
          image: { type: ["string", "null"] },
          ios_custom_redirect: ref("Redirect"),
          android_custom_redirect: ref("Redirect"),
          desktop_custom_redirect: ref("Redirect"),
        },
      },
      LinkMetrics: {
        type: "object",
        required: ["id", "name", "path", "total_views"],
        properties: Object.fromEntries([
          ["id", { type: "integer" }],
          ["name", { type: "string" }],
          ["path", { type: "string" }],
          ["title", { type: "string" }],
          ["active", { type: "boolean" }],
          ["sdk_generated", { type: "boolean" }],
          ["tags", { type: "array" }],
          ["tracking_campaign", { type: "string" }],
          ...[
            "views",
            "opens",
            "installs",
            "reinstalls",
            "time_spent",
            "reactivations",
            "app_opens",
            "user_referred",
            "revenue",
          ].map((n) => [`total_${n}`, { type: "integer" }]),
        ]),
      },
      FeedEvent: {
        type: "object",
        required: ["schema_version", "id", "type", "occurred_at", "project"],
        additionalProperties: true,
        properties: {
          schema_version: { type: "integer", const: FEED_SCHEMA_VERSION },
          id: { type: "string" },
          type: { type: "string", enum: [...FEED_EVENT_TYPES] },
          name: { type: "string" },
          occurred_at: { type: "string", format: "date-time" },
          project: {
            type: "object",
            properties: { id: { type: "string" }, test: { type: "boolean" } },
          },
          device: { type: "object" },
          user: { type: "object" },
          link: {
            type: "object",
            properties: {
              id: { type: "integer" },
              path: { type: "string" },
              access_path: { type: "string" },
            },
          },
          attribution: { type: "object" },
          geo: { type: "object", properties: { country: { type: "string" } } },
          purchase: {
            type: "object",
            properties: {
              transaction_id: { type: "string" },
              version: { type: "integer" },
              amount: { type: "integer" },
              currency: { type: "string" },
              product_id: { type: "string" },
              store: { type: "string" },
            },
          },
          time_spent: {
            type: "integer",
            minimum: 0,
            description: "A session's length in whole seconds (session events only)",
          },
        },
      },
      Project: project,
    },
  },
  paths: {
    "/api/v1/sdk/generate_link": {
      post: {
        summary: "Generate a link",
        security: sdkSecurity,
        requestBody: body({
          type: "object",
          properties: {
            title: { type: "string" },
            subtitle: { type: "string" },
            image: { type: "string" },
            data: { type: "string", description: "stringified JSON object" },
            tags: { type: "string", description: "stringified JSON array" },
            ios_custom_redirect: redirect,
            android_custom_redirect: redirect,
            desktop_custom_redirect: redirect,
            show_preview_ios: { type: "boolean" },
            show_preview_android: { type: "boolean" },
            tracking_campaign: { type: "string" },
            tracking_source: { type: "string" },
            tracking_medium: { type: "string" },
          },
        }),
        responses: {
          200: ok("The link", { type: "object", properties: { link: { type: "string" } } }),
          400: error("Malformed JSON, a field of the wrong shape, or a bad ENVIRONMENT"),
          401: error("PROJECT-KEY missing or unknown"),
        },
      },
    },
    "/api/v1/sdk/link/{link_path}": {
      get: {
        summary: "Get link details",
        security: sdkSecurity,
        parameters: [pathParam("link_path")],
        responses: {
          200: ok("The link", { type: "object", properties: { link: ref("Link") } }),
          400: error("Bad ENVIRONMENT"),
          401: error("PROJECT-KEY missing or unknown"),
          404: error("No such link in this environment"),
        },
      },
    },
    "/api/v1/sdk/metrics_for_project": {
      get: {
        summary: "Lifetime metrics of the active links, by views",
        security: sdkSecurity,
        responses: {
          200: ok("Metrics", { type: "array", items: ref("LinkMetrics") }),
          400: error("ENVIRONMENT is not production or test"),
          401: error("PROJECT-KEY missing or unknown"),
        },
      },
    },
    "/api/v1/sdk/events": {
      post: {
        summary: `Ingest app events (1–${MAX_EVENTS} a batch, all or nothing)`,
        security: sdkSecurity,
        requestBody: body({
          type: "object",
          required: ["events"],
          properties: { events: { type: "array", minItems: 1, maxItems: MAX_EVENTS } },
        }),
        responses: {
          202: ok("Stored", {
            type: "object",
            properties: { accepted: { type: "integer" }, duplicates: { type: "integer" } },
          }),
          400: error("An invalid event (the message names index and field)"),
          401: error("PROJECT-KEY missing or unknown"),
          413: error("Body over 1 MiB"),
        },
      },
    },
    "/api/v1/projects/{project_id}/event_stream": {
      get: {
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
          {
            name: "event_types[]",
            in: "query",
            schema: { type: "array", items: { type: "string", enum: [...FEED_EVENT_TYPES] } },
            style: "form",
            explode: true,
          },
        ],
        responses: {
          200: ok("A feed page", {
            type: "object",
            required: ["schema_version", "events", "next_after"],
            properties: {
              schema_version: { type: "integer" },
              events: { type: "array", items: ref("FeedEvent") },
              next_after: { type: "string" },
            },
          }),
          400: error("Bad cursor, limit or event type"),
          401: error("Token missing, unknown or revoked"),
          402: error("No Enterprise access"),
          403: error("Token not of this project_id"),
          503: error("Over 120 requests a minute (Retry-After) or unavailable"),
        },
      },
    },
    "/api/v1/projects/{project_id}/event_stream/live": {
      get: {
        summary: "Follow the event feed live (Server-Sent Events)",
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
          {
            name: "event_types[]",
            in: "query",
            schema: { type: "array", items: { type: "string", enum: [...FEED_EVENT_TYPES] } },
            style: "form",
            explode: true,
          },
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
          503: error(
            "Over 120 reads a minute, 2 streams already open (Retry-After), or unavailable",
          ),
        },
      },
    },
    "/api/v1/admin/projects": {
      get: {
        summary: "List projects, newest first; q keeps those whose name contains it",
        security: adminSecurity,
        parameters: [{ name: "q", in: "query", schema: { type: "string", maxLength: 200 } }],
        responses: {
          200: ok("The projects", {
            type: "object",
            properties: { projects: { type: "array", items: ref("Project") } },
          }),
          400: error("Invalid q"),
          401: error("Admin token missing or wrong"),
        },
      },
      post: {
        summary: "Create a project (its key is shown once)",
        security: adminSecurity,
        requestBody: body({
          type: "object",
          required: ["name"],
          properties: { name: { type: "string" }, enterprise: { type: "boolean" } },
        }),
        responses: {
          201: ok("Created", { type: "object", properties: { project: ref("Project") } }),
          400: error("Invalid body"),
          401: error("Admin token missing or wrong"),
        },
      },
    },
    "/api/v1/admin/projects/{hashid}": {
      get: {
        summary: "Read a project",
        security: adminSecurity,
        parameters: [pathParam("hashid")],
        responses: {
          200: ok("The project", { type: "object", properties: { project: ref("Project") } }),
          401: error("Admin token missing or wrong"),
          404: error("No such project"),
        },
      },
      patch: {
        summary: "Rename, grant or withdraw Enterprise, set the link domain and apps",
        description: "For link_domain, apps.ios and apps.android: absent leaves the setting, " +
          "null removes it, a value replaces it. A domain used by another project, or any " +
          "malformed value, is 400 invalid_field naming the field, and nothing changes.",
        security: adminSecurity,
        parameters: [pathParam("hashid")],
        requestBody: body({
          type: "object",
          properties: {
            name: { type: "string" },
            enterprise: { type: "boolean" },
            link_domain: linkDomain,
            apps: {
              type: "object",
              additionalProperties: false,
              properties: {
                ios: { oneOf: [iosApp, { type: "null" }] },
                android: { oneOf: [androidApp, { type: "null" }] },
              },
            },
          },
        }),
        responses: {
          200: ok("The project", { type: "object", properties: { project: ref("Project") } }),
          400: error("Invalid body"),
          401: error("Admin token missing or wrong"),
          404: error("No such project"),
        },
      },
    },
    "/api/v1/admin/projects/{hashid}/regenerate_key": {
      post: {
        summary: "Replace the project key (the old one stops at once)",
        security: adminSecurity,
        parameters: [pathParam("hashid")],
        responses: {
          200: ok("The new key", {
            type: "object",
            properties: { project_key: { type: "string" } },
          }),
          401: error("Admin token missing or wrong"),
          404: error("No such project"),
        },
      },
    },
    "/api/v1/projects/{project_id}/event_stream_tokens": {
      post: {
        summary: "Create a feed token (its value is shown once; starts capture)",
        security: adminSecurity,
        parameters: [projectId],
        requestBody: body({
          type: "object",
          required: ["name"],
          properties: { name: { type: "string" } },
        }),
        responses: {
          201: ok("Created", { type: "object", properties: { token: { type: "object" } } }),
          400: error("Invalid body"),
          401: error("Admin token missing or wrong"),
          402: error("No Enterprise access"),
          404: error("No such project_id"),
        },
      },
      get: {
        summary: "List active feed tokens",
        security: adminSecurity,
        parameters: [projectId],
        responses: {
          200: ok("Tokens", { type: "object", properties: { tokens: { type: "array" } } }),
          401: error("Admin token missing or wrong"),
          404: error("No such project_id"),
        },
      },
    },
    "/api/v1/projects/{project_id}/event_stream_tokens/{token_id}": {
      delete: {
        summary: "Revoke a feed token",
        security: adminSecurity,
        parameters: [projectId, pathParam("token_id", { type: "integer" })],
        responses: {
          204: { description: "Revoked" },
          401: error("Admin token missing or wrong"),
          404: error("No such token"),
        },
      },
    },
    "/api/v1/projects/{project_id}/destinations": {
      post: {
        summary: "Register a push destination (starts capture); its signing secret is shown once",
        description: "See docs/webhooks.md. Loopback, private, link-local, multicast and " +
          "unspecified addresses are refused unless DESTINATIONS_ALLOW_PRIVATE=true.",
        security: adminSecurity,
        parameters: [projectId],
        requestBody: body({
          type: "object",
          required: ["url"],
          properties: {
            url: { type: "string", description: "http(s), no credentials" },
            event_types: {
              type: "array",
              items: { type: "string" },
              description: "feed event types to deliver; omitted or empty: all",
            },
          },
        }),
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
          401: error("Admin token missing or wrong"),
          404: error("No such project_id"),
        },
      },
      get: {
        summary: "List destinations with their delivery status",
        security: adminSecurity,
        parameters: [projectId],
        responses: {
          200: ok("Destinations", {
            type: "object",
            properties: { destinations: { type: "array", items: ref("Destination") } },
          }),
          401: error("Admin token missing or wrong"),
          404: error("No such project_id"),
        },
      },
    },
    "/api/v1/projects/{project_id}/destinations/{destination_id}": {
      patch: {
        summary: "Pause or resume a destination (a paused one keeps its place)",
        security: adminSecurity,
        parameters: [projectId, pathParam("destination_id", { type: "integer" })],
        requestBody: body({
          type: "object",
          required: ["paused"],
          properties: { paused: { type: "boolean" } },
        }),
        responses: {
          200: ok("Updated", {
            type: "object",
            properties: { destination: ref("Destination") },
          }),
          400: error("Invalid body"),
          401: error("Admin token missing or wrong"),
          404: error("No such destination"),
        },
      },
      delete: {
        summary: "Delete a destination (stops delivery; stops capture when nothing else reads)",
        security: adminSecurity,
        parameters: [projectId, pathParam("destination_id", { type: "integer" })],
        responses: {
          204: { description: "Deleted" },
          401: error("Admin token missing or wrong"),
          404: error("No such destination"),
        },
      },
    },
    "/api/v1/projects/{project_id}/destinations/{destination_id}/rotate_secret": {
      post: {
        summary: "New signing secret; the old one also signs for 24 h",
        security: adminSecurity,
        parameters: [projectId, pathParam("destination_id", { type: "integer" })],
        responses: {
          200: ok("Rotated", {
            type: "object",
            properties: { secret: { type: "string", description: "whsec_…, shown once" } },
          }),
          401: error("Admin token missing or wrong"),
          404: error("No such destination"),
        },
      },
    },
    "/api/v1/projects/{project_id}/destinations/{destination_id}/test": {
      post: {
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
          401: error("Admin token missing or wrong"),
          404: error("No such destination"),
        },
      },
    },
    "/api/v1/projects/{project_id}/links/{link_path}": {
      patch: {
        summary: "Activate or deactivate a link",
        security: adminSecurity,
        parameters: [projectId, pathParam("link_path")],
        requestBody: body({
          type: "object",
          required: ["active"],
          properties: { active: { type: "boolean" } },
        }),
        responses: {
          200: ok("The link", { type: "object", properties: { link: ref("Link") } }),
          400: error("Invalid body"),
          401: error("Admin token missing or wrong"),
          404: error("No such link"),
        },
      },
    },
    "/api/v1/projects/{project_id}/links": {
      get: {
        summary: "Links made in the dashboard (never generate_link's), newest first, 20 a page",
        security: adminSecurity,
        parameters: [
          projectId,
          {
            name: "q",
            in: "query",
            description: "substring of the title, the path or a tag (case-insensitive)",
            schema: { type: "string", maxLength: 200 },
          },
          { name: "page", in: "query", schema: { type: "integer", minimum: 1, maximum: 100000 } },
        ],
        responses: {
          200: ok("One page of links with their counters", {
            type: "object",
            properties: {
              links: {
                type: "array",
                items: {
                  allOf: [ref("Link"), {
                    type: "object",
                    properties: {
                      counters: {
                        type: "object",
                        properties: Object.fromEntries(
                          [
                            "views",
                            "opens",
                            "installs",
                            "reinstalls",
                            "reactivations",
                            "app_opens",
                            "user_referred",
                            "revenue",
                          ].map((n) => [`total_${n}`, { type: "integer" }]),
                        ),
                      },
                    },
                  }],
                },
              },
              page: { type: "integer" },
              per_page: { type: "integer" },
              total: { type: "integer" },
            },
          }),
          400: error("Invalid q or page"),
          401: error("Admin token missing or wrong"),
          404: error("No such project_id"),
        },
      },
      post: {
        summary: "Make a link as the dashboard does (generated_from_platform Dashboard)",
        description: "The fields of generate_link, with data as a JSON object and tags as an " +
          "array of strings (not strings holding JSON).",
        security: adminSecurity,
        parameters: [projectId],
        requestBody: body({
          type: "object",
          properties: {
            title: { type: "string" },
            subtitle: { type: "string" },
            image: { type: "string" },
            data: { type: "object" },
            tags: { type: "array", items: { type: "string" } },
            ios_custom_redirect: ref("Redirect"),
            android_custom_redirect: ref("Redirect"),
            desktop_custom_redirect: ref("Redirect"),
            show_preview_ios: { type: "boolean" },
            show_preview_android: { type: "boolean" },
            tracking_campaign: { type: "string" },
            tracking_source: { type: "string" },
            tracking_medium: { type: "string" },
          },
        }),
        responses: {
          201: ok("The link", { type: "object", properties: { link: ref("Link") } }),
          400: error("Invalid body"),
          401: error("Admin token missing or wrong"),
          404: error("No such project_id"),
        },
      },
    },
    "/api/v1/projects/{project_id}/events_per_day": {
      get: {
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
          401: error("Admin token missing or wrong"),
          404: error("No such project_id"),
        },
      },
    },
    "/api/v1/projects/{project_id}/export": {
      get: {
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
          {
            name: "event_types[]",
            in: "query",
            schema: { type: "array", items: { type: "string", enum: [...FEED_EVENT_TYPES] } },
            style: "form",
            explode: true,
          },
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
          401: error("Admin token missing or wrong"),
          404: error("No such project_id"),
        },
      },
    },
    "/healthz": {
      get: { summary: "The process answers", responses: { 200: { description: "ok" } } },
    },
    "/readyz": {
      get: {
        summary: "The database answers",
        responses: { 200: { description: "ready" }, 503: error("Database unreachable") },
      },
    },
    "/openapi.json": {
      get: { summary: "This document", responses: { 200: { description: "OpenAPI 3.1" } } },
    },
    "/docs": {
      get: {
        summary: "This document as a readable page (works offline)",
        responses: { 200: ok("The reference page", { type: "string" }, "text/html") },
      },
    },
    "/{path}": {
      get: {
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
          302: { description: "Redirect: custom redirect, store page or Android intent:// URL" },
          404: ok("Unknown or deactivated link, or not served on this host", {
            type: "string",
          }, "text/html"),
        },
      },
    },
    "/.well-known/apple-app-site-association": {
      get: {
        summary: "iOS universal links: the iOS apps of the projects served on this host",
        responses: {
          200: ok("applinks.details[] with appIDs and components", { type: "object" }),
          304: { description: "Not modified (If-None-Match)" },
          404: error("No iOS app is configured for this host"),
        },
      },
    },
    "/.well-known/assetlinks.json": {
      get: {
        summary: "Android App Links: the Android apps of the projects served on this host",
        responses: {
          200: ok("Digital Asset Links statements", { type: "array" }),
          304: { description: "Not modified (If-None-Match)" },
          404: error("No Android app is configured for this host"),
        },
      },
    },
    "/open-app.js": {
      get: {
        summary: "The script of the iOS open-app page",
        responses: {
          200: ok("JavaScript", { type: "string" }, "text/javascript"),
          304: { description: "Not modified (If-None-Match)" },
        },
      },
    },
  },
};
