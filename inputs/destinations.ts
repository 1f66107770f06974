// Request bodies of the destination admin routes.
import { z } from "zod";
import { httpUrl, optional, text } from "./common.ts";

export const createDestinationBody = z.object({
  url: httpUrl,
  /** Checked against the feed's types by the service (400 invalid_event_type); omitted: all. */
  event_types: optional(z.array(text(64)).max(64, "must have at most 64 entries")),
});

export const patchDestinationBody = z.object({ paused: z.boolean() });
