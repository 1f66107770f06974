// What a link may be created with. REST's `generate_link` takes `data` and `tags` as strings
// holding JSON; GraphQL takes them typed (`newLinkInput`). Both share everything else.
import { z } from "zod";
import { httpUrl, jsonObject, optional, stringifiedJson, text } from "./common.ts";
import { chosenPathProblem } from "../services/links/paths.ts";
import { linkPassword, MAX_RULES_BYTES, rulesInput, splitInput } from "./link_rules.ts";
import { ApiError } from "../services/errors.ts";

export const MAX_TITLE = 1000;
export const MAX_TRACKING = 255;
export const MAX_DATA_BYTES = 64 * 1024;
export const MAX_TAGS = 100;
export const MAX_TAG = 200;

export const redirectInput = z.object({
  url: optional(httpUrl),
  open_app_if_installed: optional(z.boolean()),
});

/** Link metadata delivered to the app: a JSON object of at most 64 KiB. */
export const linkData = jsonObject(MAX_DATA_BYTES);

export const linkTags = z.array(text(MAX_TAG), { error: "must be a JSON array of strings" })
  .max(MAX_TAGS, `must hold at most ${MAX_TAGS} tags`);

/** generate_link's fields besides `data` and `tags`, each as a present value takes it. */
const fieldSchemas = {
  title: text(MAX_TITLE),
  subtitle: text(MAX_TITLE),
  image: httpUrl,
  ios_custom_redirect: redirectInput,
  android_custom_redirect: redirectInput,
  // The specification names only `url` here; a sent `open_app_if_installed` is kept, as the
  // Link object may carry it.
  desktop_custom_redirect: redirectInput,
  show_preview_ios: z.boolean(),
  show_preview_android: z.boolean(),
  tracking_campaign: text(MAX_TRACKING),
  tracking_source: text(MAX_TRACKING),
  tracking_medium: text(MAX_TRACKING),
};

const linkFields = {
  title: optional(fieldSchemas.title),
  subtitle: optional(fieldSchemas.subtitle),
  image: optional(fieldSchemas.image),
  ios_custom_redirect: optional(fieldSchemas.ios_custom_redirect),
  android_custom_redirect: optional(fieldSchemas.android_custom_redirect),
  desktop_custom_redirect: optional(fieldSchemas.desktop_custom_redirect),
  show_preview_ios: optional(fieldSchemas.show_preview_ios),
  show_preview_android: optional(fieldSchemas.show_preview_android),
  tracking_campaign: optional(fieldSchemas.tracking_campaign),
  tracking_source: optional(fieldSchemas.tracking_source),
  tracking_medium: optional(fieldSchemas.tracking_medium),
};

/** A new link with typed `data` and `tags` (GraphQL's GenerateLinkInput). Unknown keys drop. */
export const newLinkInput = z.object({
  ...linkFields,
  data: optional(linkData),
  tags: optional(linkTags),
});

/** The body of POST {base_url}/generate_link: `data` and `tags` are stringified JSON. */
export const generateLinkBody = z.object({
  ...linkFields,
  data: optional(stringifiedJson(linkData, "a JSON object", MAX_DATA_BYTES)),
  tags: optional(stringifiedJson(linkTags, "a JSON array of strings", 32 * 1024)),
});

export type NewLinkInput = z.output<typeof newLinkInput>;

/** A path chosen by a person: 1 to 64 URL-safe characters, none the service answers itself. */
export const chosenPath = z.string().superRefine((value, ctx) => {
  const problem = chosenPathProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/** An ISO 8601 date and time with its offset (`2026-12-31T23:59:59Z`). */
export const dateTimeInput = z.iso.datetime({
  offset: true,
  error: "must be an ISO 8601 date and time with an offset, such as 2026-12-31T23:59:59Z",
}).transform((v) => new Date(v));

export const MAX_VIEWS_LIMIT = 2_147_483_647;
export const maxViewsInput = z.int()
  .min(1, "must be a whole number from 1")
  .max(MAX_VIEWS_LIMIT, `must be at most ${MAX_VIEWS_LIMIT}`);

const lifetimeFields = {
  expires_at: optional(dateTimeInput),
  max_views: optional(maxViewsInput),
  expired_url: optional(httpUrl),
};

/** Rules, split, forwarding and password (CONTRACT.md, "Link rules, splits and passwords"). */
const decisionFields = {
  rules: optional(rulesInput),
  split: optional(splitInput),
  forward_query: optional(z.boolean()),
  append_utm: optional(z.boolean()),
  pass_click_id: optional(z.boolean()),
  password: optional(linkPassword),
};

/** POST /projects/:project_id/links: generate_link's fields typed, a chosen path, expiry. */
export const createManagedLinkBody = newLinkInput.extend({
  path: optional(chosenPath),
  ...lifetimeFields,
  ...decisionFields,
});

/** A field an edit may set, or clear with `null`. */
const clearable = <S extends z.ZodType>(schema: S) => schema.nullable().optional();

/**
 * PATCH /projects/:project_id/links/:link_path: any editable field; `null` clears an optional
 * one. `path`, `id`, `sdk_generated` and `generated_from_platform` cannot change, so a body
 * naming them (or any unknown field) is refused rather than half applied.
 */
export const patchLinkBody = z.strictObject({
  title: clearable(fieldSchemas.title),
  subtitle: clearable(fieldSchemas.subtitle),
  image: clearable(fieldSchemas.image),
  data: clearable(linkData),
  tags: clearable(linkTags),
  ios_custom_redirect: clearable(fieldSchemas.ios_custom_redirect),
  android_custom_redirect: clearable(fieldSchemas.android_custom_redirect),
  desktop_custom_redirect: clearable(fieldSchemas.desktop_custom_redirect),
  show_preview_ios: fieldSchemas.show_preview_ios.optional(),
  show_preview_android: fieldSchemas.show_preview_android.optional(),
  tracking_campaign: clearable(fieldSchemas.tracking_campaign),
  tracking_source: clearable(fieldSchemas.tracking_source),
  tracking_medium: clearable(fieldSchemas.tracking_medium),
  active: z.boolean().optional(),
  archived: z.boolean().optional(),
  expires_at: clearable(dateTimeInput),
  max_views: clearable(maxViewsInput),
  expired_url: clearable(httpUrl),
  rules: clearable(rulesInput),
  split: clearable(splitInput),
  forward_query: z.boolean().optional(),
  append_utm: z.boolean().optional(),
  pass_click_id: z.boolean().optional(),
  password: clearable(linkPassword),
}).refine((b) => Object.values(b).some((v) => v !== undefined), {
  message: "give at least one field to change",
});

const ORDER_VALUES = [
  "created_at",
  "-created_at",
  "updated_at",
  "-updated_at",
  "views",
  "-views",
] as const;

/** Links a page of the admin list holds: at most, and when the request does not say. */
export const MAX_LIST_LIMIT = 100;
export const DEFAULT_LIST_LIMIT = 50;

/**
 * A page size of the admin list as given (NaN: not a whole number), or the default; out of range
 * it is refused as `invalid_limit`, REST's code for every page size.
 */
export function listLimit(given: number | undefined): number {
  const limit = given ?? DEFAULT_LIST_LIMIT;
  if (!(Number.isInteger(limit) && limit >= 1 && limit <= MAX_LIST_LIMIT)) {
    throw new ApiError("invalid_limit", `limit must be an integer from 1 to ${MAX_LIST_LIMIT}`, {
      field: "limit",
    });
  }
  return limit;
}

const filterText = optional(text(200));

/** GET /projects/:project_id/links: filters and order (limit and after are read apart). */
export const listLinksQuery = z.object({
  q: filterText,
  tag: optional(text(MAX_TAG)),
  campaign: optional(text(MAX_TRACKING)),
  source: optional(text(MAX_TRACKING)),
  medium: optional(text(MAX_TRACKING)),
  state: optional(z.enum(["active", "inactive", "archived", "expired"])),
  sdk_generated: optional(z.enum(["true", "false"]).transform((v) => v === "true")),
  order: optional(z.enum(ORDER_VALUES)).transform((v) => {
    const o = v ?? "-created_at";
    return {
      field: o.replace(/^-/, "") as "created_at" | "updated_at" | "views",
      desc: o.startsWith("-"),
    };
  }),
});

/** A CSV cell holding true or false (also 1/0 and yes/no, any case). */
const csvBoolean = z.string().transform((v, ctx) => {
  const value = v.trim().toLowerCase();
  if (["true", "1", "yes"].includes(value)) return true;
  if (["false", "0", "no"].includes(value)) return false;
  ctx.issues.push({ code: "custom", message: "must be true or false", input: v });
  return z.NEVER;
});

const csvMaxViews = z.string()
  .regex(/^[0-9]{1,10}$/, "must be a whole number from 1")
  .transform(Number)
  .pipe(maxViewsInput);

const redirectUrl = redirectInput.shape.url;

/**
 * One row of a links CSV, by column name (CONTRACT.md, "Managing links"): generate_link's own
 * schemas for the fields it shares (`data` and `tags` as cells holding JSON, as generate_link
 * takes them), the redirects flattened into `*_url` and `*_open_app`. An empty cell is absent.
 */
export const importRow = z.object({
  path: optional(chosenPath),
  title: generateLinkBody.shape.title,
  subtitle: generateLinkBody.shape.subtitle,
  image: generateLinkBody.shape.image,
  data: generateLinkBody.shape.data,
  tags: generateLinkBody.shape.tags,
  ios_url: redirectUrl,
  ios_open_app: optional(csvBoolean),
  android_url: redirectUrl,
  android_open_app: optional(csvBoolean),
  desktop_url: redirectUrl,
  show_preview_ios: optional(csvBoolean),
  show_preview_android: optional(csvBoolean),
  tracking_campaign: generateLinkBody.shape.tracking_campaign,
  tracking_source: generateLinkBody.shape.tracking_source,
  tracking_medium: generateLinkBody.shape.tracking_medium,
  expires_at: optional(dateTimeInput),
  max_views: optional(csvMaxViews),
  expired_url: optional(httpUrl),
  // JSON cells, as the managed link holds them; no password column (a password is hashed one
  // link at a time: set it through the API or the dashboard).
  rules: optional(stringifiedJson(rulesInput, "a JSON array of rules", MAX_RULES_BYTES)),
  split: optional(stringifiedJson(splitInput, "a JSON array of variants", 16 * 1024)),
  forward_query: optional(csvBoolean),
  append_utm: optional(csvBoolean),
  pass_click_id: optional(csvBoolean),
});

export type ImportRow = z.output<typeof importRow>;

/** The columns an import reads, in the order an export writes them. */
export const IMPORT_COLUMNS = Object.keys(importRow.shape) as (keyof ImportRow)[];
