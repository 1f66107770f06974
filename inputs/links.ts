// What a link may be created with. REST's `generate_link` takes `data` and `tags` as strings
// holding JSON; GraphQL takes them typed (`newLinkInput`). Both share everything else.
import { z } from "zod";
import { httpUrl, jsonObject, optional, stringifiedJson, text } from "./common.ts";

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

const linkFields = {
  title: optional(text(MAX_TITLE)),
  subtitle: optional(text(MAX_TITLE)),
  image: optional(httpUrl),
  ios_custom_redirect: optional(redirectInput),
  android_custom_redirect: optional(redirectInput),
  // The specification names only `url` here; a sent `open_app_if_installed` is kept, as the
  // Link object may carry it.
  desktop_custom_redirect: optional(redirectInput),
  show_preview_ios: optional(z.boolean()),
  show_preview_android: optional(z.boolean()),
  tracking_campaign: optional(text(MAX_TRACKING)),
  tracking_source: optional(text(MAX_TRACKING)),
  tracking_medium: optional(text(MAX_TRACKING)),
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
