// The project page's "Link domain and apps" form: its fields as typed (to show them again beside
// their errors) and the settings they make, validated by the same schema as
// PATCH /api/v1/admin/projects/:hashid (inputs/project_settings.ts).
import { type ProjectSettings, projectSettings } from "../inputs/project_settings.ts";
import type { Project } from "../services/projects/projects.ts";
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
