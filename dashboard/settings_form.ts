// The project page's "Link domain and apps" form: its fields as typed (to show them again beside
// their errors) and the settings they make, validated by the same schema as
// PATCH /api/v1/admin/projects/:hashid (inputs/project_settings.ts).
import { type ProjectSettings, projectSettings } from "../inputs/project_settings.ts";
import type { Project } from "../services/projects/projects.ts";
import {
  DEFAULT_SDK_WRITES_PER_ADDRESS,
  DEFAULT_SDK_WRITES_PER_KEY,
} from "../services/projects/sdk_limits.ts";
import { formText } from "./forms.ts";

type FormBody = Record<string, string | File | (string | File)[]>;

export const SETTINGS_FIELDS = [
  "link_domain",
  "ios_team_id",
  "ios_bundle_id",
  "ios_app_store_id",
  "ios_scheme",
  "android_package",
  "android_fingerprints",
  "android_scheme",
] as const;

export type SettingsField = (typeof SETTINGS_FIELDS)[number];
export type SettingsValues = Record<SettingsField, string>;
export type SettingsErrors = Partial<Record<SettingsField, string>>;

/** The form as the project's current settings fill it. */
export function settingsValuesOf(project: Project): SettingsValues {
  const { ios, android } = project.apps;
  return {
    link_domain: project.link_domain ?? "",
    ios_team_id: ios?.team_id ?? "",
    ios_bundle_id: ios?.bundle_id ?? "",
    ios_app_store_id: ios?.app_store_id ?? "",
    ios_scheme: ios?.scheme ?? "",
    android_package: android?.package ?? "",
    android_fingerprints: android?.sha256_cert_fingerprints.join("\n") ?? "",
    android_scheme: android?.scheme ?? "",
  };
}

/** A schema message as a sentence: capitalised, one full stop. */
export function fieldSentence(message: string): string {
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

// Schema paths back to the form's fields.
const FIELD_OF_PATH: Record<string, SettingsField> = {
  "link_domain": "link_domain",
  "apps.ios.team_id": "ios_team_id",
  "apps.ios.bundle_id": "ios_bundle_id",
  "apps.ios.app_store_id": "ios_app_store_id",
  "apps.ios.scheme": "ios_scheme",
  "apps.android.package": "android_package",
  "apps.android.sha256_cert_fingerprints": "android_fingerprints",
  "apps.android.scheme": "android_scheme",
};

/**
 * A blank field is absent (or, for the domain, removed); a platform whose fields are all blank
 * is removed. Required fields go to the schema as typed, so a half-filled app gets the format
 * message under the field that is missing.
 */
export function parseSettingsForm(
  form: FormBody,
): { values: SettingsValues; input: ProjectSettings | null; errors: SettingsErrors } {
  const values = Object.fromEntries(
    SETTINGS_FIELDS.map((f) => [f, formText(form, f)]),
  ) as SettingsValues;
  const v = (f: SettingsField) => values[f].trim();
  const optional = (f: SettingsField) => v(f) === "" ? undefined : v(f);
  const blank = (fields: SettingsField[]) => fields.every((f) => v(f) === "");
  const fingerprints = values.android_fingerprints.split(/\r?\n/).map((l) => l.trim())
    .filter((l) => l !== "");
  const candidate = {
    link_domain: optional("link_domain") ?? null,
    apps: {
      ios: blank(["ios_team_id", "ios_bundle_id", "ios_app_store_id", "ios_scheme"]) ? null : {
        team_id: v("ios_team_id"),
        bundle_id: v("ios_bundle_id"),
        app_store_id: optional("ios_app_store_id"),
        scheme: optional("ios_scheme"),
      },
      android: blank(["android_package", "android_fingerprints", "android_scheme"]) ? null : {
        package: v("android_package"),
        sha256_cert_fingerprints: fingerprints,
        scheme: optional("android_scheme"),
      },
    },
  };
  const parsed = projectSettings.safeParse(candidate);
  if (parsed.success) return { values, input: parsed.data, errors: {} };
  const errors: SettingsErrors = {};
  for (const issue of parsed.error.issues) {
    const path = issue.path.filter((p) => typeof p === "string").join(".");
    const field = FIELD_OF_PATH[path] ?? "link_domain";
    // A fingerprint's message names its line, counted among the non-blank lines.
    const line = field === "android_fingerprints" && typeof issue.path[3] === "number"
      ? `Line ${issue.path[3] + 1}: `
      : "";
    errors[field] ??= line + (line ? issue.message : fieldSentence(issue.message));
    if (line) errors[field] = fieldSentence(errors[field]!);
  }
  return { values, input: null, errors };
}

/** The "Write limits" form: each field a number of writes a minute, blank for the default. */
export const LIMIT_FIELDS = ["per_key", "per_address"] as const;
export type LimitField = (typeof LIMIT_FIELDS)[number];
export type LimitValues = Record<LimitField, string>;
export type LimitErrors = Partial<Record<LimitField, string>>;

export const DEFAULT_LIMITS: Record<LimitField, number> = {
  per_key: DEFAULT_SDK_WRITES_PER_KEY,
  per_address: DEFAULT_SDK_WRITES_PER_ADDRESS,
};

/** The form as the project's limits fill it: blank where the project keeps the default. */
export function limitValuesOf(project: Project): LimitValues {
  const shown = (f: LimitField) =>
    project.sdk_limits[f] === DEFAULT_LIMITS[f] ? "" : String(project.sdk_limits[f]);
  return { per_key: shown("per_key"), per_address: shown("per_address") };
}

/**
 * The limits as PATCH /api/v1/admin/projects/:hashid takes them (its schema validates them): a
 * blank field is the default (null), digits (with spaces, commas or points between thousands,
 * as people type them) a number, anything else is given to the schema as typed.
 */
export function parseLimitsForm(
  form: FormBody,
): { values: LimitValues; input: ProjectSettings | null; errors: LimitErrors } {
  const values = Object.fromEntries(
    LIMIT_FIELDS.map((f) => [f, formText(form, f)]),
  ) as LimitValues;
  const number = (f: LimitField) => {
    const text = values[f].trim();
    if (text === "") return null;
    const digits = text.replace(/[\s,.'_]/g, "");
    return /^[0-9]{1,12}$/.test(digits) ? Number(digits) : text;
  };
  const parsed = projectSettings.safeParse({
    sdk_limits: { per_key: number("per_key"), per_address: number("per_address") },
  });
  if (parsed.success) return { values, input: parsed.data, errors: {} };
  const errors: LimitErrors = {};
  for (const issue of parsed.error.issues) {
    const field = issue.path[1] === "per_address" ? "per_address" : "per_key";
    errors[field] ??= fieldSentence(
      issue.code === "invalid_type" ? "must be a whole number of writes a minute" : issue.message,
    );
  }
  return { values, input: null, errors };
}
