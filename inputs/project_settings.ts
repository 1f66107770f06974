// A project's link domain and apps, as PATCH /api/v1/admin/projects/:hashid and the admin CLI
// take them. Every format is checked here, before anything is stored: these values end up in
// the association files Apple and Google read, in redirect URLs and in HTML.
import { z } from "zod";
import { MAX_SDK_WRITES, MIN_SDK_WRITES } from "../services/projects/sdk_limits.ts";
import { CURRENCY_CODES } from "../services/fx/convert.ts";
import { ATTRIBUTION_MODELS } from "../services/projects/projects.ts";

/** Schemes an app must not claim: web and browser-internal ones, or script in disguise. */
const FORBIDDEN_SCHEMES = new Set([
  "http",
  "https",
  "javascript",
  "vbscript",
  "data",
  "file",
  "blob",
  "about",
  "intent",
  "content",
  "filesystem",
  "ws",
  "wss",
]);

/** RFC 3986 §3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ). Compared in lower case. */
export const appScheme = z.string()
  .max(64, "must be at most 64 characters")
  .regex(/^[A-Za-z][A-Za-z0-9+.-]*$/, "must be a URI scheme (RFC 3986), without '://'")
  .transform((s) => s.toLowerCase())
  .refine((s) => !FORBIDDEN_SCHEMES.has(s), "must be the app's own scheme, not a web one");

/**
 * A DNS host name in lower case: at least two labels of letters, digits and inner hyphens, a
 * top-level label that is not all digits (so never an IP address), 253 characters at most. No
 * port, path, scheme or trailing dot.
 */
export function isHostName(value: string): boolean {
  if (value.length > 253) return false;
  const labels = value.split(".");
  if (labels.length < 2) return false;
  if (!labels.every((l) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l))) return false;
  return !/^[0-9]+$/.test(labels.at(-1)!);
}

export const linkDomain = z.string()
  .max(253, "must be at most 253 characters")
  .transform((s) => s.trim().toLowerCase().replace(/\.$/, ""))
  .refine(isHostName, "must be a host name such as go.example.com (no scheme, port or path)");

export const iosApp = z.strictObject({
  team_id: z.string().regex(/^[A-Z0-9]{10}$/, "must be 10 upper-case letters or digits"),
  bundle_id: z.string().max(155, "must be at most 155 characters")
    .regex(
      /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/,
      "must be a reverse-DNS bundle identifier such as com.example.app",
    ),
  app_store_id: z.string().regex(/^[0-9]{1,15}$/, "must be the App Store's numeric id")
    .optional(),
  scheme: appScheme.optional(),
});

const FINGERPRINT = /^[0-9A-F]{2}(:[0-9A-F]{2}){31}$/;

export const androidApp = z.strictObject({
  package: z.string().max(255, "must be at most 255 characters")
    .regex(
      /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/,
      "must be an Android package name such as com.example.app",
    ),
  sha256_cert_fingerprints: z.array(
    z.string().transform((s) => s.toUpperCase()).refine(
      (s) => FINGERPRINT.test(s),
      "must be a SHA-256 fingerprint: 32 hex bytes separated by colons",
    ),
  ).min(1, "must list at least one fingerprint").max(10, "must list at most 10 fingerprints"),
  scheme: appScheme.optional(),
});

export type IosApp = z.output<typeof iosApp>;
export type AndroidApp = z.output<typeof androidApp>;

/** A project's apps as stored: a platform is absent when none is configured. */
export interface Apps {
  ios?: IosApp;
  android?: AndroidApp;
}

/**
 * PATCH semantics: an absent key leaves the setting as it is, `null` removes it, a value
 * replaces it (a platform's app is replaced whole).
 */
/** One SDK write limit, writes a minute: at least a full batch of events, at most a billion. */
export const sdkWriteLimit = z.int()
  .min(MIN_SDK_WRITES, `must be at least ${MIN_SDK_WRITES} (a full batch of events)`)
  .max(MAX_SDK_WRITES, `must be at most ${MAX_SDK_WRITES}`);

/** The limits on the project key's writes (services/sdk_limits.ts); null: the default. */
export const sdkLimitsInput = z.strictObject({
  per_key: sdkWriteLimit.nullable().optional(),
  per_address: sdkWriteLimit.nullable().optional(),
});

/** An ISO 4217 currency code this runtime knows (`eur` reads as `EUR`). */
export const reportingCurrency = z.string().max(3, "must be an ISO 4217 currency code such as USD")
  .transform((s) => s.toUpperCase())
  .refine((s) => CURRENCY_CODES.has(s), "must be an ISO 4217 currency code such as USD");

/** How long a click or a user's touch attributes later events (docs/analytics.md, "Attribution"). */
export const attributionWindowDays = z.int({ error: "must be a whole number of days from 1 to 90" })
  .min(1, "must be a whole number of days from 1 to 90")
  .max(90, "must be a whole number of days from 1 to 90");

/** Which of a user's touches in the window their events go to. */
export const attributionModel = z.enum(ATTRIBUTION_MODELS, {
  error: "must be first_touch or last_touch",
});

/** The attribution settings alone (GraphQL's setAttributionSettings). */
export const attributionSettings = z.object({
  attribution_window_days: attributionWindowDays.optional(),
  attribution_model: attributionModel.optional(),
});

export const projectSettings = z.object({
  link_domain: linkDomain.nullable().optional(),
  reporting_currency: reportingCurrency.optional(),
  attribution_window_days: attributionWindowDays.optional(),
  attribution_model: attributionModel.optional(),
  sdk_limits: sdkLimitsInput.optional(),
  apps: z.strictObject({
    ios: iosApp.nullable().optional(),
    android: androidApp.nullable().optional(),
  }).optional(),
});

export type ProjectSettings = z.output<typeof projectSettings>;
