// The dashboard's link form: its fields as typed (to show them again beside the errors) and the
// typed input they make, validated by the same schema as every other way to make a link.
import { TZDate } from "@date-fns/tz";
import { fieldPath } from "../services/errors.ts";
import { createManagedLinkBody, patchLinkBody } from "../inputs/links.ts";
import type { z } from "zod";
import type { LinkRow } from "../services/links/links.ts";

type FormBody = Record<string, string | File | (string | File)[]>;

const TEXT_FIELDS = [
  "title",
  "subtitle",
  "image",
  "ios_url",
  "android_url",
  "desktop_url",
  "data",
  "tags",
  "tracking_campaign",
  "tracking_source",
  "tracking_medium",
  "path",
  "expires_at",
  "expires_tz",
  "max_views",
  "expired_url",
] as const;
const CHECKBOXES = [
  "show_preview_ios",
  "show_preview_android",
  "ios_open_app",
  "android_open_app",
  "pass_click_id",
] as const;

export type LinkFormValues =
  & Record<(typeof TEXT_FIELDS)[number], string>
  & Record<(typeof CHECKBOXES)[number], boolean>;

export function emptyLinkForm(): LinkFormValues {
  return {
    ...Object.fromEntries(TEXT_FIELDS.map((f) => [f, ""])),
    ...Object.fromEntries(CHECKBOXES.map((f) => [f, false])),
    expires_tz: "UTC",
  } as LinkFormValues;
}

/** The zones the expiry may be given in: UTC first, then every zone the runtime knows. */
export const EXPIRY_ZONES: readonly string[] = [
  "UTC",
  ...Intl.supportedValuesOf("timeZone").filter((z) => z !== "UTC"),
];
const ZONES = new Set(EXPIRY_ZONES);

/** `<input type="datetime-local">`'s value: a wall-clock time with no zone. */
const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;
/** An ISO 8601 time with its offset, as the API takes it (scripts may post the form so). */
const WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The expiry as the API takes it (ISO 8601 in UTC), from the form's wall-clock time in `zone`; a
 * time the zone skips (a daylight-saving gap) moves forward by the gap, as the clocks did.
 */
export function expiryInstant(local: string, zone: string): string | { error: string } {
  if (WITH_OFFSET.test(local)) return local;
  const m = LOCAL_TIME.exec(local);
  if (!m) return { error: "must be a date and time" };
  if (!ZONES.has(zone)) return { error: "choose a time zone from the list" };
  const [y, mo, d, h, mi, sec] = m.slice(1).map((v) => Number(v ?? 0)) as number[];
  const at = TZDate.tz(zone, y!, mo! - 1, d!, h!, mi!, sec!).getTime();
  if (Number.isNaN(at)) return { error: "must be a date and time" };
  return new Date(at).toISOString();
}

/** An instant as the form's wall-clock value in `zone` (seconds only when it has some). */
export function localTimeIn(at: Date, zone: string): string {
  const t = new TZDate(at.getTime(), zone);
  const two = (n: number) => String(n).padStart(2, "0");
  const day = `${String(t.getFullYear()).padStart(4, "0")}-${two(t.getMonth() + 1)}-${
    two(t.getDate())
  }`;
  const time = `${two(t.getHours())}:${two(t.getMinutes())}`;
  return `${day}T${time}${t.getSeconds() ? `:${two(t.getSeconds())}` : ""}`;
}

/** A form field as one string: absent, a file, or repeated reads as its first text value. */
export function formText(form: FormBody, name: string): string {
  const v = form[name];
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === "string" ? first : "";
}

// Schema paths back to the form's field names, so each error shows beside its field.
const FIELD_OF_PATH: Record<string, string> = {
  "ios_custom_redirect.url": "ios_url",
  "android_custom_redirect.url": "android_url",
  "desktop_custom_redirect.url": "desktop_url",
};

/** A link's current values in the form's fields (the edit form). */
export function linkFormValues(l: LinkRow): LinkFormValues {
  return {
    title: l.title,
    subtitle: l.subtitle,
    image: l.image ?? "",
    ios_url: l.ios_custom_redirect.url ?? "",
    android_url: l.android_custom_redirect.url ?? "",
    desktop_url: l.desktop_custom_redirect.url ?? "",
    data: Object.keys(l.data).length ? JSON.stringify(l.data) : "",
    tags: l.tags.map(String).join(", "),
    tracking_campaign: l.tracking_campaign ?? "",
    tracking_source: l.tracking_source ?? "",
    tracking_medium: l.tracking_medium ?? "",
    path: l.path,
    expires_at: l.expires_at ? localTimeIn(l.expires_at, "UTC") : "",
    expires_tz: "UTC",
    max_views: l.max_views === null ? "" : String(l.max_views),
    expired_url: l.expired_url ?? "",
    show_preview_ios: l.show_preview_ios,
    show_preview_android: l.show_preview_android,
    ios_open_app: l.ios_custom_redirect.open_app_if_installed === true,
    android_open_app: l.android_custom_redirect.open_app_if_installed === true,
    pass_click_id: l.pass_click_id,
  };
}

export type NewLinkForm = z.output<typeof createManagedLinkBody>;
export type EditLinkForm = z.output<typeof patchLinkBody>;

/** The create form: every field, a chosen path and expiry, validated as the admin API does. */
export function parseLinkForm(
  form: FormBody,
): { values: LinkFormValues; input: NewLinkForm | null; errors: Record<string, string> } {
  const r = readLinkForm(form, "new");
  return r as { values: LinkFormValues; input: NewLinkForm | null; errors: Record<string, string> };
}

/** The edit form: every editable field; an emptied field is cleared. */
export function parseEditLinkForm(
  form: FormBody,
): { values: LinkFormValues; input: EditLinkForm | null; errors: Record<string, string> } {
  const r = readLinkForm(form, "edit");
  return r as {
    values: LinkFormValues;
    input: EditLinkForm | null;
    errors: Record<string, string>;
  };
}

function readLinkForm(
  form: FormBody,
  mode: "new" | "edit",
): { values: LinkFormValues; input: unknown; errors: Record<string, string> } {
  const values = emptyLinkForm();
  for (const f of TEXT_FIELDS) values[f] = formText(form, f);
  for (const f of CHECKBOXES) values[f] = formText(form, f) === "on";
  const errors: Record<string, string> = {};

  let data: unknown;
  if (values.data.trim() !== "") {
    try {
      data = JSON.parse(values.data);
    } catch {
      errors.data = 'must be a JSON object, e.g. {"promo": "spring"}';
    }
  }
  // Empty: absent on the create form, cleared (null) on the edit form.
  const blank = (s: string) => (s.trim() === "" ? (mode === "new" ? undefined : null) : s.trim());
  const redirect = (url: string, openApp?: boolean) =>
    blank(url) == null && !openApp
      ? blank("")
      : { url: blank(url) ?? undefined, open_app_if_installed: openApp || undefined };
  let expiresAt: string | null | undefined = blank(values.expires_at);
  if (typeof expiresAt === "string") {
    const instant = expiryInstant(expiresAt, values.expires_tz || "UTC");
    if (typeof instant === "string") expiresAt = instant;
    else errors.expires_at = instant.error;
  }
  let maxViews: unknown = blank(values.max_views);
  if (typeof maxViews === "string") {
    maxViews = /^[0-9]+$/.test(maxViews) ? Number(maxViews) : maxViews;
  }
  const candidate = {
    title: blank(values.title),
    subtitle: blank(values.subtitle),
    image: blank(values.image),
    data,
    tags: values.tags.split(",").map((t) => t.trim()).filter((t) => t !== ""),
    ios_custom_redirect: redirect(values.ios_url, values.ios_open_app),
    android_custom_redirect: redirect(values.android_url, values.android_open_app),
    desktop_custom_redirect: redirect(values.desktop_url),
    show_preview_ios: values.show_preview_ios,
    show_preview_android: values.show_preview_android,
    pass_click_id: values.pass_click_id,
    tracking_campaign: blank(values.tracking_campaign),
    tracking_source: blank(values.tracking_source),
    tracking_medium: blank(values.tracking_medium),
    expires_at: errors.expires_at ? undefined : expiresAt,
    max_views: maxViews,
    expired_url: blank(values.expired_url),
    ...(mode === "new" ? { path: blank(values.path) } : {}),
  };
  if (mode === "edit" && candidate.data === undefined) (candidate as { data: unknown }).data = null;
  const parsed = mode === "new"
    ? createManagedLinkBody.safeParse(candidate)
    : patchLinkBody.safeParse(candidate);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const path = fieldPath(issue.path);
      const field = FIELD_OF_PATH[path] ?? path.split(/[.[]/)[0]!;
      errors[field] ??= issue.message;
    }
  }
  if (Object.keys(errors).length > 0 || !parsed.success) return { values, input: null, errors };
  return { values, input: parsed.data, errors };
}
