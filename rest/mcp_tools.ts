// The MCP tools (docs/agents.md): each one is an operation of the permission table, run with the
// service functions and the input schemas the REST routes use, so an agent's key can do through
// a tool exactly what it could do through REST, and every change is audited as that key's.
// rest/mcp.ts serves them over the Streamable HTTP transport.
import { Buffer } from "node:buffer";
import { z } from "zod";
// The SDK's `./*` export gives a `.js` subpath no types under Deno: @ts-types names them.
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult, Tool, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import {
  createManagedLinkBody,
  listLimit,
  listLinksQuery,
  MAX_LIST_LIMIT,
  patchLinkBody,
} from "../inputs/links.ts";
import type { AuditContext } from "../services/access/audit.ts";
import { type Operation, PERMISSIONS } from "../services/access/permissions.ts";
import type { Principal } from "../services/access/principal.ts";
import {
  MAX_LIMIT as ANALYTICS_LIMIT,
  parseAnalyticsParams,
} from "../services/analytics/params.ts";
import { DIMENSIONS, INTERVALS, METRICS, queryAnalytics } from "../services/analytics/query.ts";
import {
  funnelAnswer,
  type FunnelFigures,
  parseFunnelParams,
  queryFunnel,
} from "../services/analytics/funnel.ts";
import type { AppDeps } from "../services/deps.ts";
import { accessPath } from "../services/links/links.ts";
import {
  createManagedLink,
  deleteLink,
  getManagedLinkOrThrow,
  listLinks,
  type ManagedLink,
  type ManagedLinkRow,
  toManagedLink,
  updateLink,
} from "../services/links/manage.ts";
import { qrPng } from "../services/links/qr.ts";
import { splitFigures, splitOf, splitResults } from "../services/links/split_results.ts";
import { qrOptionsQuery } from "../inputs/qr.ts";
import type { Logger } from "../infra/log.ts";
import { classifyAndLog } from "./errors.ts";
import {
  analyticsSchema,
  funnelSchema,
  JSON_SCHEMA_RULES,
  managedLinkSchema,
  splitResultsSchema,
} from "./openapi_schemas.ts";

export type ApiKey = Extract<Principal, { type: "api_key" }>;

/** What a tool runs with: the service's dependencies, the calling key, its audit context. */
export interface ToolContext {
  deps: AppDeps;
  key: ApiKey;
  audit: AuditContext;
}

interface ToolSpec<In extends z.ZodType, Out extends z.ZodType> {
  name: string;
  title: string;
  description: string;
  /** The operation of the permission table the tool performs; its scope lists the tool. */
  operation: Operation;
  input: In;
  /** The structured result's shape (also its outputSchema). */
  output: Out;
  annotations: ToolAnnotations;
  run(ctx: ToolContext, args: z.output<In>): Promise<ToolAnswer<z.output<Out>>>;
}

/** A tool's answer: its structured result, a short text for the reader, images if any. */
interface ToolAnswer<T> {
  structured: T;
  text: string;
  image?: { data: Uint8Array; mimeType: string };
}

/** A tool as the server holds it: its listing (JSON Schemas computed once) and its run. */
export interface McpTool {
  name: string;
  operation: Operation;
  listing: Tool;
  call(ctx: ToolContext, args: unknown): Promise<CallToolResult>;
}

/**
 * A zod schema as a tool's JSON Schema (2020-12, MCP's default dialect), as the OpenAPI document
 * converts its components: a tool's input is described as REST's body is, from the same schema;
 * its output from the same shape as REST's answer (both on their input side, as OpenAPI's are:
 * what the values look like in JSON, before a transform).
 */
function jsonSchema(schema: z.ZodType): Tool["inputSchema"] {
  const { $schema: _s, ...rest } = z.toJSONSchema(schema, { io: "input", ...JSON_SCHEMA_RULES });
  return rest as Tool["inputSchema"];
}

function tool<In extends z.ZodType, Out extends z.ZodType>(spec: ToolSpec<In, Out>): McpTool {
  return {
    name: spec.name,
    operation: spec.operation,
    listing: {
      name: spec.name,
      title: spec.title,
      description: spec.description,
      inputSchema: jsonSchema(spec.input),
      outputSchema: jsonSchema(spec.output),
      annotations: { title: spec.title, openWorldHint: false, ...spec.annotations },
    },
    async call(ctx, args) {
      // A ZodError here is REST's invalid_field, naming the argument (toolError).
      const parsed = spec.input.parse(args ?? {});
      const answer = await spec.run(ctx, parsed);
      const content: CallToolResult["content"] = [{ type: "text", text: answer.text }];
      if (answer.image) {
        content.push({
          type: "image",
          data: Buffer.from(answer.image.data).toString("base64"),
          mimeType: answer.image.mimeType,
        });
      }
      return { content, structuredContent: answer.structured as Record<string, unknown> };
    },
  };
}

/**
 * A refusal or failure as an MCP tool error: `code: message`, REST's error code and message, from
 * REST's one mapping (internal errors masked and logged, as REST does). Text only: clients check
 * any structured content against the tool's output schema, the answer's, even in an error.
 */
export function toolError(err: unknown, logger: Logger, requestId: string): CallToolResult {
  const e = classifyAndLog(err, logger, requestId);
  const retry = e.retryAfter === undefined ? "" : ` (retry after ${e.retryAfter} s)`;
  return { isError: true, content: [{ type: "text", text: `${e.code}: ${e.message}${retry}` }] };
}

const linkPath = z.string().meta({
  description: "The link's path: what follows the domain in its short URL",
});
const pathInput = z.object({ path: linkPath });
const linkOutput = z.object({ link: managedLinkSchema });

function managed(ctx: ToolContext, row: ManagedLinkRow): ManagedLink {
  return toManagedLink(row, ctx.deps.config.linkBaseUrl, ctx.deps.clock.now());
}

/** One line of a link for the text answer: its URL, state, views and title. */
function linkLine(link: ManagedLink): string {
  const title = link.title === "" ? "" : ` – ${link.title}`;
  return `${link.access_path} (${link.state}, ${link.total_views} views)${title}`;
}

function linkAnswer(verb: string, link: ManagedLink): ToolAnswer<{ link: ManagedLink }> {
  return { structured: { link }, text: `${verb} ${linkLine(link)}` };
}

/** The analytics route's query parameters, typed (the route reads them from a query string). */
const analyticsInput = z.object({
  from: z.string().optional().meta({
    description: "ISO 8601 with an offset (2026-03-01T00:00:00Z) or a date (2026-03-01, the " +
      "start of that day in tz); default 30 days before `to`",
  }),
  to: z.string().optional().meta({ description: "As `from`; default now; at most 400 days on" }),
  interval: z.enum(INTERVALS).optional().meta({
    description: "Adds a series of buckets; without it, totals only",
  }),
  tz: z.string().optional().meta({ description: "An IANA time zone, default UTC" }),
  metrics: z.array(z.enum(METRICS)).optional().meta({
    description: "Default views and installs",
  }),
  group_by: z.enum(DIMENSIONS).optional().meta({ description: "One breakdown, top `limit`" }),
  limit: z.int().optional().meta({
    minimum: 1,
    maximum: ANALYTICS_LIMIT,
    description: "Groups, default 10",
  }),
  link: z.string().optional().meta({ description: "Only this link (its path)" }),
  filters: z.partialRecord(z.enum(DIMENSIONS), z.string()).optional().meta({
    description: "Only events with these values, by dimension",
  }),
});

/** The funnel route's query parameters, typed; its range as analytics'. */
const funnelInput = analyticsInput.pick({ from: true, to: true, tz: true, link: true }).extend({
  group_by: z.enum(["link"]).optional().meta({
    description: "link: adds the top `limit` links by revenue",
  }),
  limit: z.int().optional().meta({
    minimum: 1,
    maximum: ANALYTICS_LIMIT,
    description: "Links with group_by, default 10",
  }),
});

/** A funnel's figures as words: `views 120, installs 12 (10.0 %), …`. */
function funnelLine(f: FunnelFigures, currency: string): string {
  const pct = (r: number | null) => (r === null ? "" : ` (${(r * 100).toFixed(1)} %)`);
  const median = f.median_seconds_to_install === null
    ? ""
    : `; median ${f.median_seconds_to_install} s from click to install`;
  return `views ${f.views}, installs ${f.installs}${pct(f.installs_per_view)}, purchasers ` +
    `${f.purchasers}${pct(f.purchasers_per_install)}, purchases ${f.purchases}, revenue ` +
    `${f.revenue} (${currency} minor units)${median}`;
}

/** The figures of `totals` as words: `views 12, installs 3`. */
function figures(totals: Record<string, number>): string {
  return Object.entries(totals).map(([metric, n]) => `${metric} ${n}`).join(", ");
}

/** Every tool, in the order they are listed. */
export const MCP_TOOLS: readonly McpTool[] = [
  tool({
    name: "list_links",
    title: "List links",
    description: "The environment's links, newest first unless `order` says otherwise, " +
      `${MAX_LIST_LIMIT} at most a page (default 50). Filters: q (in title, subtitle or path), ` +
      "tag, campaign, source, medium, state (without it: every link not archived), " +
      "sdk_generated. When next_after is not null, call again with after=next_after.",
    operation: "links.read",
    input: listLinksQuery.extend({
      limit: z.number().optional().meta({ minimum: 1, maximum: MAX_LIST_LIMIT }),
      after: z.string().optional().meta({ description: "a previous page's next_after" }),
    }),
    output: z.object({ links: z.array(managedLinkSchema), next_after: z.string().nullable() }),
    annotations: { readOnlyHint: true },
    async run(ctx, { limit, after, ...query }) {
      const page = await listLinks(ctx.deps.sql, ctx.key.environmentId, {
        ...query,
        limit: listLimit(limit),
        after: after === "" ? undefined : after,
      }, ctx.deps.clock.now());
      const links = page.links.map((row) => managed(ctx, row));
      const lines = links.map(linkLine);
      const more = page.next_after === null
        ? ""
        : `\nMore: call list_links again with after "${page.next_after}".`;
      return {
        structured: { links, next_after: page.next_after },
        text: `${links.length} link${links.length === 1 ? "" : "s"}` +
          (lines.length ? `:\n${lines.join("\n")}` : ".") + more,
      };
    },
  }),
  tool({
    name: "get_link",
    title: "Get a link",
    description: "One link of the environment by its path: its fields, state and views.",
    operation: "links.read",
    input: pathInput,
    output: linkOutput,
    annotations: { readOnlyHint: true },
    async run(ctx, { path }) {
      const row = await getManagedLinkOrThrow(ctx.deps.sql, ctx.key.environmentId, path);
      return linkAnswer("Link", managed(ctx, row));
    },
  }),
  tool({
    name: "create_link",
    title: "Create a link",
    description: "A new link: where it sends each platform (ios/android/desktop_custom_redirect)," +
      " its preview (title, subtitle, image), data for the app, tags, UTM tracking, and " +
      "optionally a chosen path, an expiry date or a number of views after which it expires.",
    operation: "links.write",
    input: createManagedLinkBody,
    output: linkOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    async run(ctx, body) {
      const row = await createManagedLink(
        ctx.deps.sql,
        ctx.key.environmentId,
        body,
        "api",
        ctx.audit,
      );
      return linkAnswer("Created", managed(ctx, row));
    },
  }),
  tool({
    name: "update_link",
    title: "Edit a link",
    description: "Changes fields of a link: `changes` takes any editable field (null clears an " +
      "optional one), `active` to switch it off or on, `archived`, `expires_at`, `max_views`. " +
      "The path cannot change.",
    operation: "links.write",
    input: z.object({ path: linkPath, changes: patchLinkBody }),
    output: linkOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    async run(ctx, { path, changes }) {
      const row = await updateLink(ctx.deps.sql, ctx.key.environmentId, path, changes, ctx.audit);
      return linkAnswer("Updated", managed(ctx, row));
    },
  }),
  tool({
    name: "archive_link",
    title: "Archive a link",
    description: "Archives a link: it leaves the lists and its URL answers 404; its views are " +
      "kept, and update_link with archived false brings it back.",
    operation: "links.write",
    input: pathInput,
    output: linkOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    async run(ctx, { path }) {
      const row = await updateLink(
        ctx.deps.sql,
        ctx.key.environmentId,
        path,
        { archived: true },
        ctx.audit,
      );
      return linkAnswer("Archived", managed(ctx, row));
    },
  }),
  tool({
    name: "delete_link",
    title: "Delete a link",
    description: "Deletes a link and its counters for good; its path is never given again. " +
      "Prefer archive_link, which can be undone.",
    operation: "links.delete",
    input: pathInput,
    output: z.object({ deleted: z.object({ path: z.string() }) }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    async run(ctx, { path }) {
      await deleteLink(ctx.deps.sql, ctx.key.environmentId, path, ctx.audit);
      return {
        structured: { deleted: { path } },
        text: `Deleted the link ${path}; its path will not be given again.`,
      };
    },
  }),
  tool({
    name: "link_qr",
    title: "QR code of a link",
    description: "The QR code of a link's short URL, as a PNG image.",
    operation: "links.read",
    input: pathInput,
    output: z.object({
      path: z.string(),
      access_path: z.string().meta({ description: "the URL the code holds" }),
      mime_type: z.literal("image/png"),
      size: z.int().meta({ description: "width and height in pixels" }),
    }),
    annotations: { readOnlyHint: true },
    async run(ctx, { path }) {
      const row = await getManagedLinkOrThrow(ctx.deps.sql, ctx.key.environmentId, path);
      const url = accessPath(ctx.deps.config.linkBaseUrl, row);
      // The code GET …/qr?format=png answers: its default size, colours, margin and correction.
      const options = { ...qrOptionsQuery.parse({ format: "png" }), logo: null };
      const png = qrPng(url, options);
      const size = options.size;
      return {
        structured: { path: row.path, access_path: url, mime_type: "image/png" as const, size },
        text: `QR code of ${url} (PNG, ${size}×${size} px)`,
        image: { data: png, mimeType: "image/png" },
      };
    },
  }),
  tool({
    name: "analytics",
    title: "Analytics",
    description: "Totals of the environment's events between from and to (default the last 30 " +
      "days), optionally a series by interval and one breakdown (group_by) with its top `limit` " +
      `groups. Metrics: ${METRICS.join(", ")}. Dimensions: ${DIMENSIONS.join(", ")}.`,
    operation: "analytics.read",
    input: analyticsInput,
    output: analyticsSchema,
    annotations: { readOnlyHint: true },
    async run(ctx, args) {
      const query = await parseAnalyticsParams(ctx.deps.sql, ctx.key.environmentId, {
        from: args.from,
        to: args.to,
        interval: args.interval,
        tz: args.tz,
        metrics: args.metrics?.join(","),
        group_by: args.group_by,
        limit: args.limit === undefined ? undefined : String(args.limit),
        link: args.link,
        filters: { ...args.filters },
      }, ctx.deps.clock.now());
      const answer = await queryAnalytics(ctx.deps.sql, query);
      const lines = [
        `From ${answer.from} to ${answer.to} (${answer.tz}): ${figures(answer.totals)}`,
      ];
      for (const group of answer.groups ?? []) {
        lines.push(`${query.groupBy} ${group.key ?? "(none)"}: ${figures(group.totals)}`);
      }
      if (answer.series) lines.push(`A series of ${answer.series.length} ${answer.interval}s.`);
      return { structured: answer, text: lines.join("\n") };
    },
  }),
  tool({
    name: "funnel",
    title: "Funnel",
    description: "The attributed funnel between from and to (default the last 30 days): views, " +
      "installs attributed to a link, purchasers (distinct user ids with an attributed " +
      "purchase), purchases and revenue (minor units of the reporting currency), each step's " +
      "rate (installs per view, purchasers per install, purchases per purchaser) and the " +
      "median seconds from click to install; of one `link`, or with group_by=link the top " +
      "`limit` links by revenue.",
    operation: "analytics.read",
    input: funnelInput,
    output: funnelSchema,
    annotations: { readOnlyHint: true },
    async run(ctx, args) {
      const query = await parseFunnelParams(ctx.deps.sql, ctx.key.environmentId, {
        from: args.from,
        to: args.to,
        tz: args.tz,
        link: args.link,
        group_by: args.group_by,
        limit: args.limit === undefined ? undefined : String(args.limit),
      }, ctx.deps.clock.now());
      const answer = funnelAnswer(await queryFunnel(ctx.deps.sql, query));
      const lines = [
        `From ${answer.from} to ${answer.to} (${answer.tz}): ` +
        funnelLine(answer.totals, answer.currency),
      ];
      for (const group of answer.groups ?? []) {
        lines.push(`${group.key}: ${funnelLine(group.totals, answer.currency)}`);
      }
      return { structured: answer, text: lines.join("\n") };
    },
  }),
  tool({
    name: "split_results",
    title: "A split's results",
    description: "The results of a link's A/B split, per variant: views, installs, purchases, " +
      "revenue, conversion (installs per view) and the probability that it is the best; " +
      "enough_data is false under 100 views per variant. `rule` names a rule's split (its " +
      "name or 1-based index); without it, the link's own split.",
    operation: "analytics.read",
    input: pathInput.extend({
      rule: z.string().min(1).max(200).optional()
        .meta({ description: "the rule whose split to read: its name or 1-based index" }),
    }),
    output: splitResultsSchema,
    annotations: { readOnlyHint: true },
    async run(ctx, { path, rule }) {
      const environmentId = ctx.key.environmentId;
      const link = await getManagedLinkOrThrow(ctx.deps.sql, environmentId, path);
      const { label, split } = splitOf(link, rule);
      const figures = await splitFigures(ctx.deps.sql, environmentId, [link.id]);
      const results = splitResults(label, split, figures.get(link.id) ?? []);
      const lines = results.variants.map((v) =>
        `variant ${v.variant}: ${v.views} views, ${v.installs} installs, ` +
        `P(best) ${v.probability_best.toFixed(2)}`
      );
      if (!results.enough_data) lines.push("Not enough data yet (under 100 views a variant).");
      return { structured: results, text: lines.join("\n") };
    },
  }),
];

/** The tools a key may call: those whose operation's scope it holds (its environment's only). */
export function toolsFor(key: ApiKey): McpTool[] {
  return MCP_TOOLS.filter((t) => {
    const scope = PERMISSIONS[t.operation].scope;
    return scope !== null && key.scopes.includes(scope);
  });
}
