// The OpenAPI document's components/schemas, derived from zod. Request bodies are the very
// schemas the handlers parse with (inputs/, rest/admin.ts); responses are zod schemas of the
// output shapes, each checked at compile time against the service type it serialises, so a
// field added to a service shape fails `deno task check` until it is described here.
import { z } from "zod";
import { ERROR_STATUS } from "../services/errors.ts";
import {
  FEED_EVENT_TYPES,
  FEED_SCHEMA_VERSION,
  type FeedEnvelope,
} from "../services/feed/envelope.ts";
import type { Link } from "../services/links/links.ts";
import type { LinkMetrics } from "../services/links/metrics.ts";
import { ATTRIBUTION_MODELS, type Project } from "../services/projects/projects.ts";
import type { DestinationStatus } from "../services/destinations/destinations.ts";
import type { CreatedFeedToken, FeedTokenSummary } from "../services/feed/tokens.ts";
import type { ApiKeySummary, CreatedApiKey } from "../services/access/api_keys.ts";
import type { MadeBy } from "../services/access/makers.ts";
import { SCOPES } from "../services/access/permissions.ts";
import type { AuditEntry } from "../services/access/audit.ts";
import { createAccountBody, createApiKeyBody, putMemberBody } from "../inputs/access.ts";
import type { Account } from "../services/access/accounts.ts";
import type { Member } from "../services/access/members.ts";
import { ROLES } from "../services/access/permissions.ts";
import { type AnalyticsAnswer, INTERVALS } from "../services/analytics/query.ts";
import { eventInput, ingestBody, purchaseInput } from "../inputs/events.ts";
import { generateLinkBody, redirectInput } from "../inputs/links.ts";
import { androidApp, iosApp } from "../inputs/project_settings.ts";
import { createDestinationBody, patchDestinationBody } from "../inputs/destinations.ts";
import { createProjectBody, createTokenBody, updateProjectBody } from "../inputs/admin.ts";
import { createManagedLinkBody, patchLinkBody } from "../inputs/links.ts";
import type { FunnelAnswer, FunnelFigures } from "../services/analytics/funnel.ts";
import type { SplitResults } from "../services/links/split_results.ts";
import type { ManagedLink } from "../services/links/manage.ts";

// Compile time: a zod shape's type and the service's type are the same (optional keys aside).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const dateTime = z.string().meta({ format: "date-time" });
const nullableDateTime = dateTime.nullable();

export const errorSchema = z.object({
  error: z.object({
    status: z.int(),
    code: z.enum(Object.keys(ERROR_STATUS) as [keyof typeof ERROR_STATUS]),
    message: z.string(),
  }),
}).meta({ description: "The one error body of every REST route" });

export const linkSchema = z.object({
  id: z.int(),
  title: z.string(),
  subtitle: z.string(),
  path: z.string(),
  access_path: z.string().meta({ description: "the full short URL" }),
  updated_at: dateTime,
  generated_from_platform: z.string(),
  data: z.record(z.string(), z.unknown()),
  sdk_generated: z.boolean(),
  tags: z.array(z.string()),
  active: z.boolean(),
  tracking_campaign: z.string().nullable(),
  tracking_source: z.string().nullable(),
  tracking_medium: z.string().nullable(),
  show_preview: z.boolean(),
  image: z.string().nullable(),
  ios_custom_redirect: redirectInput,
  android_custom_redirect: redirectInput,
  desktop_custom_redirect: redirectInput,
});
const _link: Same<z.output<typeof linkSchema>, Link> = true;

const total = z.int().min(0);

const conditionsSchema = z.object({
  country: z.array(z.string()).optional().meta({ description: "ISO 3166-1 alpha-2 codes" }),
  language: z.array(z.string()).optional().meta({
    description: "primary language subtags, matched against the most preferred language",
  }),
  platform: z.array(z.enum(["ios", "android", "desktop"])).optional(),
  os: z.array(z.string()).optional().meta({ description: "OS families, as analytics name them" }),
  query: z.record(z.string(), z.string()).optional().meta({
    description: 'each query parameter equal to its value ("*": present)',
  }),
  referrer_host: z.array(z.string()).optional(),
  ip: z.array(z.string()).optional().meta({ description: "CIDR ranges, IPv4 or IPv6" }),
  from: dateTime.optional(),
  until: dateTime.optional(),
}).meta({ description: "All must hold; each list matches any of its values" });

export const splitSchema = z.array(z.object({
  url: z.string(),
  weight: z.int().min(1).max(1000),
})).min(2).max(10).meta({ description: "weighted variants, sticky per visitor" });

export const ruleSchema = z.object({
  name: z.string().optional(),
  when: conditionsSchema,
  url: z.string().optional(),
  split: splitSchema.optional(),
}).meta({ description: "url or split: where the hit goes when every condition holds" });

export const managedLinkSchema = linkSchema.extend({
  created_at: dateTime,
  archived: z.boolean().meta({ description: "archived links leave the lists and answer 404" }),
  expires_at: nullableDateTime,
  max_views: z.int().nullable().meta({ description: "views after which the link has expired" }),
  expired_url: z.string().nullable().meta({
    description: "where an expired link redirects (null: a 410 page)",
  }),
  state: z.enum(["active", "inactive", "archived", "expired"]),
  total_views: total,
  rules: z.array(ruleSchema).max(50).meta({ description: "tried in order; the first match wins" }),
  split: splitSchema.nullable().meta({ description: "for every hit no rule took" }),
  forward_query: z.boolean(),
  append_utm: z.boolean(),
  pass_click_id: z.boolean().meta({
    description: "whether web destinations get the view's click id as the query parameter click_id",
  }),
  password_protected: z.boolean(),
});
const _managed: Same<z.output<typeof managedLinkSchema>, ManagedLink> = true;

export const splitResultsSchema = z.object({
  rule: z.union([z.string(), z.int()]).nullable().meta({
    description: "the rule whose split this is (name or 1-based index); null: the link's own",
  }),
  variants: z.array(z.object({
    variant: z.int().min(1),
    url: z.string(),
    weight: z.int(),
    views: total,
    installs: total,
    purchases: z.int(),
    revenue: z.int().meta({ description: "minor units of the project's reporting currency" }),
    conversion_rate: z.number().meta({ description: "installs per view" }),
    probability_best: z.number().min(0).max(1).meta({
      description: "the probability that this variant's conversion rate is the highest " +
        "(Beta posteriors from a uniform prior)",
    }),
  })),
  enough_data: z.boolean().meta({ description: "false while a variant has under 100 views" }),
});
const _split: Same<z.output<typeof splitResultsSchema>, SplitResults> = true;

export const importRefusedSchema = errorSchema.extend({
  errors: z.array(z.object({
    row: z.int().meta({ description: "1: the first row after the header; 0: the header" }),
    field: z.string(),
    message: z.string(),
  })).max(100),
}).meta({ description: "An import refused: every bad row (up to 100); nothing was stored" });
export const linkMetricsSchema = z.object({
  id: z.int(),
  name: z.string().meta({ description: "the title, or the path when the title is empty" }),
  path: z.string(),
  title: z.string(),
  active: z.boolean(),
  sdk_generated: z.boolean(),
  tags: z.array(z.string()),
  // The contract lets an item without a campaign leave the field out (never null).
  tracking_campaign: z.string().optional().meta({ description: "absent without a campaign" }),
  total_views: total,
  total_opens: total,
  total_installs: total,
  total_reinstalls: total,
  total_time_spent: total,
  total_reactivations: total,
  total_app_opens: total,
  total_user_referred: total,
  total_revenue: z.int().meta({
    description: "minor units of the project's reporting currency (refunds subtract)",
  }),
});
const _metrics: Same<z.output<typeof linkMetricsSchema>, LinkMetrics> = true;

const jsonRecord = z.record(z.string(), z.unknown());
export const feedEventSchema = z.object({
  schema_version: z.int().meta({ const: FEED_SCHEMA_VERSION }),
  id: z.string().meta({ description: "evt_ + a sortable unique id, stable across redeliveries" }),
  type: z.enum(FEED_EVENT_TYPES).meta({
    description: "new types may be added within a schema_version: keep unknown ones readable",
  }),
  name: z.string().optional().meta({
    description: "the custom event's name, or a purchase's store action",
  }),
  occurred_at: dateTime,
  project: z.object({ id: z.string(), test: z.boolean() }),
  device: jsonRecord.optional(),
  user: jsonRecord.optional(),
  link: z.object({ id: z.int(), path: z.string(), access_path: z.string() }).optional(),
  attribution: jsonRecord.optional().meta({
    description: "as the app sent it; an attributed event adds link_path, method (click_id, " +
      "link_path or user) and, when a click is behind it, click_id and clicked_at; a link-host " +
      "view carries its own click_id",
  }),
  geo: z.object({
    country: z.string().meta({ description: "ISO 3166-1 alpha-2" }),
  }).optional(),
  purchase: z.object({
    transaction_id: z.string(),
    version: z.int(),
    amount: z.int().meta({ description: "minor currency units" }),
    currency: z.string(),
    product_id: z.string(),
    store: z.string(),
  }).optional(),
  time_spent: z.int().min(0).optional().meta({
    description: "a session's length in whole seconds (session events only)",
  }),
});
const _feedEvent: Same<z.output<typeof feedEventSchema>, FeedEnvelope> = true;

export const projectSchema = z.object({
  id: z.string().meta({ description: "hashid" }),
  name: z.string(),
  enterprise: z.boolean(),
  created_at: dateTime,
  environments: z.object({
    production: z.object({ project_id: z.int() }),
    test: z.object({ project_id: z.int() }),
  }),
  link_domain: z.string().nullable().meta({
    description: "host name the project's links are served on (null: LINK_BASE_URL's host)",
  }),
  apps: z.object({ ios: iosApp.optional(), android: androidApp.optional() }),
  sdk_limits: z.object({
    per_key: z.int().meta({ description: "SDK writes a minute for the project key" }),
    per_address: z.int().meta({ description: "SDK writes a minute from one client address" }),
  }).meta({
    description: "What the project key may write a minute (a link or an event each); over a " +
      "limit SDK writes answer 503 rate_limited",
  }),
  reporting_currency: z.string().meta({
    description: "ISO 4217: the currency revenue is summed in (minor units); purchases in " +
      "other currencies are converted at the ECB's rate of their day",
  }),
  attribution_window_days: z.int().min(1).max(90).meta({
    description: "how long a click or a user's touch attributes later events (default 30)",
  }),
  attribution_model: z.enum(ATTRIBUTION_MODELS).meta({
    description: "which of a user's touches in the window their events go to (default " +
      "first_touch)",
  }),
});
const _project: Same<z.output<typeof projectSchema>, Project> = true;

/** Who made a feed token, destination or API key, and whom it belongs to (services/access/makers.ts). */
const madeByFields = {
  created_by: z.object({
    type: z.enum(["account", "api_key", "admin_token"]),
    id: z.int().nullable().meta({ description: "null for the admin token" }),
    name: z.string().meta({ description: "its name when it made this" }),
  }).nullable().meta({
    description: "who made it, as the audit log names an actor; null: made before makers were " +
      "recorded, by a maker no record names",
  }),
  belongs_to: z.object({
    type: z.enum(["account", "admin_token"]),
    id: z.int().nullable().meta({
      description: "the account; null for the instance admin (and a removed account's keys)",
    }),
    name: z.string().nullable().meta({ description: "the account's name; null once removed" }),
  }).nullable().meta({
    description: "the person behind the chain of makers (a key made by a key is its maker's " +
      "person's), or the instance admin; null: unknown",
  }),
};
const _madeBy: Same<z.output<z.ZodObject<typeof madeByFields>>, MadeBy> = true;

export const destinationSchema = z.object({
  ...madeByFields,
  id: z.int(),
  url: z.string(),
  event_types: z.array(z.string()),
  state: z.enum(["active", "paused", "failing"]),
  created_at: dateTime,
  last_attempt_at: nullableDateTime,
  last_success_at: nullableDateTime,
  last_error: z.string().nullable(),
  pending: z.int().meta({ description: "matching events not yet delivered" }),
  dropped: z.int().meta({ description: "matching events that expired undelivered" }),
});
const _destination: Same<z.output<typeof destinationSchema>, DestinationStatus> = true;

export const feedTokenSchema = z.object({
  ...madeByFields,
  id: z.int(),
  name: z.string(),
  hint: z.string().meta({ description: "the token's last characters" }),
  created_at: dateTime,
  last_used_at: nullableDateTime,
});
const _token: Same<z.output<typeof feedTokenSchema>, FeedTokenSummary> = true;

export const createdFeedTokenSchema = z.object({
  ...madeByFields,
  id: z.int(),
  name: z.string(),
  value: z.string().meta({ description: "est_…, shown only in this answer" }),
  created_at: dateTime,
  last_used_at: z.null(),
});
const _created: Same<z.output<typeof createdFeedTokenSchema>, CreatedFeedToken> = true;

const scopes = z.array(z.enum(SCOPES));

export const apiKeySchema = z.object({
  ...madeByFields,
  id: z.int(),
  name: z.string(),
  scopes,
  hint: z.string().meta({ description: "sk_… and the key's last characters" }),
  created_at: dateTime,
  expires_at: nullableDateTime,
  last_used_at: nullableDateTime.meta({ description: "to the minute" }),
});
const _apiKey: Same<z.output<typeof apiKeySchema>, ApiKeySummary> = true;

export const createdApiKeySchema = z.object({
  ...madeByFields,
  id: z.int(),
  name: z.string(),
  scopes,
  value: z.string().meta({ description: "sk_…, shown only in this answer" }),
  created_at: dateTime,
  expires_at: nullableDateTime,
  last_used_at: z.null(),
});
const _createdKey: Same<z.output<typeof createdApiKeySchema>, CreatedApiKey> = true;

export const accountSchema = z.object({
  id: z.int(),
  email: z.string(),
  name: z.string(),
  created_at: dateTime,
});
const _account: Same<z.output<typeof accountSchema>, Account> = true;

export const memberSchema = z.object({
  account_id: z.int(),
  email: z.string(),
  name: z.string(),
  role: z.enum(ROLES),
});
const _member: Same<z.output<typeof memberSchema>, Member> = true;

export const auditEntrySchema = z.object({
  id: z.int(),
  at: dateTime,
  actor: z.object({
    type: z.enum(["account", "api_key", "admin_token"]),
    id: z.int().nullable().meta({ description: "null for the admin token" }),
    name: z.string(),
  }),
  action: z.string().meta({ description: "what was done, e.g. link.update, api_key.create" }),
  target: z.object({ type: z.string(), id: z.string() }),
  detail: z.record(z.string(), z.number()).nullable().meta({
    description: 'figures beside the target, e.g. {"count": 120} for link.import; else null',
  }),
  request_id: z.string().nullable().meta({ description: "null for changes made by the CLI" }),
});
const _auditEntry: Same<z.output<typeof auditEntrySchema>, AuditEntry> = true;

export const auditLogPageSchema = z.object({
  entries: z.array(auditEntrySchema),
  next_after: z.string().nullable().meta({ description: "the next page's after; null at the end" }),
});

const figures = z.record(z.string(), z.number()).meta({
  description: "One number per requested metric, in the order asked",
});
const point = z.object({ start: dateTime }).catchall(z.number()).meta({
  description: "A bucket: its start (ISO 8601 with the zone's offset) and one number per metric",
});
export const analyticsSchema = z.object({
  from: dateTime,
  to: dateTime,
  interval: z.enum(INTERVALS).optional(),
  tz: z.string(),
  totals: figures,
  series: z.array(point).optional(),
  groups: z.array(z.object({
    key: z.string().nullable(),
    totals: figures,
    series: z.array(point).optional(),
  })).optional(),
});
const _analytics: Same<z.output<typeof analyticsSchema>, AnalyticsAnswer> = true;

const rate = (what: string) =>
  z.number().nullable().meta({ description: `${what}; null when the divisor is 0` });
export const funnelFiguresSchema = z.object({
  views: z.number().meta({ description: "link views (link host hits, bots not counted)" }),
  installs: z.number().meta({ description: "installs attributed to a link" }),
  purchasers: z.number().meta({
    description: "distinct user.id values with an attributed purchase",
  }),
  purchases: z.number().meta({
    description: "attributed purchases (current versions, converted)",
  }),
  revenue: z.number().meta({ description: "their sum, in minor units of `currency`" }),
  installs_per_view: rate("installs / views"),
  purchasers_per_install: rate("purchasers / installs"),
  purchases_per_purchaser: rate("purchases / purchasers"),
  median_seconds_to_install: z.number().nullable().meta({
    description: "median seconds from the click to the install, over the installs attributed " +
      "by a click; null when there are none",
  }),
});
const _funnelFigures: Same<z.output<typeof funnelFiguresSchema>, FunnelFigures> = true;
export const funnelSchema = z.object({
  from: dateTime,
  to: dateTime,
  tz: z.string(),
  currency: z.string().meta({ description: "the project's reporting currency (ISO 4217)" }),
  totals: funnelFiguresSchema,
  groups: z.array(z.object({
    key: z.string().meta({ description: "the link's path" }),
    totals: funnelFiguresSchema,
  })).optional().meta({ description: "with group_by=link: the top links by revenue" }),
});
const _funnel: Same<z.output<typeof funnelSchema>, FunnelAnswer> = true;

/**
 * Every named component, by its name in the document. A route's request body or response refers
 * to one with `ref(name)` (rest/openapi.ts); zod turns every nested use of a named schema into a
 * $ref to it, so `Redirect`, `IosApp` or `Purchase` are described once.
 */
const COMPONENTS = {
  Error: errorSchema,
  Link: linkSchema,
  ManagedLink: managedLinkSchema,
  ImportRefused: importRefusedSchema,
  LinkMetrics: linkMetricsSchema,
  FeedEvent: feedEventSchema,
  Project: projectSchema,
  Destination: destinationSchema,
  FeedToken: feedTokenSchema,
  CreatedFeedToken: createdFeedTokenSchema,
  ApiKey: apiKeySchema,
  AuditEntry: auditEntrySchema,
  Account: accountSchema,
  Member: memberSchema,
  AuditLogPage: auditLogPageSchema,
  CreatedApiKey: createdApiKeySchema,
  Analytics: analyticsSchema,
  Funnel: funnelSchema,
  SplitResults: splitResultsSchema,
  Rule: ruleSchema,
  Redirect: redirectInput,
  Purchase: purchaseInput,
  IosApp: iosApp,
  AndroidApp: androidApp,
  // Request bodies: the schemas the handlers parse with.
  GenerateLinkBody: generateLinkBody,
  IngestBody: ingestBody,
  IngestedEvent: eventInput,
  CreateProjectBody: createProjectBody,
  UpdateProjectBody: updateProjectBody,
  CreateFeedTokenBody: createTokenBody,
  CreateApiKeyBody: createApiKeyBody,
  CreateAccountBody: createAccountBody,
  PutMemberBody: putMemberBody,
  PatchLinkBody: patchLinkBody,
  CreateManagedLinkBody: createManagedLinkBody,
  CreateDestinationBody: createDestinationBody,
  PatchDestinationBody: patchDestinationBody,
} satisfies Record<string, z.ZodType>;

export type ComponentName = keyof typeof COMPONENTS;

/**
 * How zod schemas become JSON Schemas here and for the MCP tools (rest/mcp_tools.ts): the few
 * values zod checks with code alone (JSON objects) become `type: object`, anything else zod
 * cannot represent is a programming error.
 */
export const JSON_SCHEMA_RULES = {
  unrepresentable: ({ zodSchema }) =>
    zodSchema._zod.def.type === "custom" ? { type: "object" } : "throw",
  // z.int()'s safe-integer bounds say nothing a client needs.
  override: ({ jsonSchema }) => {
    if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
    if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
  },
} satisfies Pick<z.core.ToJSONSchemaParams, "unrepresentable" | "override">;

/**
 * The JSON Schemas (2020-12, as OpenAPI 3.1 takes them) of every component. Request schemas are
 * converted on their input side: what a client sends, before transforms. The few values zod
 * checks with code alone (JSON objects) become `type: object`.
 */
export function componentSchemas(): Record<ComponentName, Record<string, unknown>> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(COMPONENTS)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    io: "input",
    uri: (id) => `#/components/schemas/${id}`,
    ...JSON_SCHEMA_RULES,
  });
  const out: Record<string, Record<string, unknown>> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _s, $id: _i, ...rest } = schema as Record<string, unknown>;
    out[id] = rest;
  }
  return out as Record<ComponentName, Record<string, unknown>>;
}
