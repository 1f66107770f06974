// The body of POST {base_url}/events (CONTRACT.md, "Event ingestion").
import { z } from "zod";
import type { NewEvent } from "../services/events/event.ts";
import { assertOccurredInTime } from "../services/events/record.ts";
import { INGESTED_EVENT_TYPES } from "../services/feed/envelope.ts";
import { countryOnly } from "../services/events/geo.ts";
import { isPlainObject, jsonObject, text } from "./common.ts";

export const MAX_EVENTS = 1000;
export const MAX_OBJECT_BYTES = 16 * 1024;
const INT4_MAX = 2_147_483_647;
/** ±10^12 minor units: a whole batch of corrections still sums within JS safe integers. */
const MAX_AMOUNT = 1e12;
const EARLIEST = Date.UTC(1970, 0, 1);

/** `geo` must be an object; services/events/geo.ts's countryOnly decides what of it is kept. */
export const geoInput = z.custom<Record<string, unknown>>(isPlainObject, {
  message: "must be a JSON object",
}).transform(countryOnly);

const purchaseFields = z.object({
  transaction_id: text(256).min(1),
  version: z.number().int().min(1).max(INT4_MAX),
  amount: z.number().int().min(-MAX_AMOUNT).max(MAX_AMOUNT),
  currency: text(16).min(1),
  product_id: text(256).min(1),
  store: text(64).min(1),
});
const PURCHASE_FIELDS = Object.keys(purchaseFields.shape);

/**
 * All six fields are required. A purchase that lacks several is refused in one answer naming
 * them all (`events[1].purchase: version, currency and store are required`), rather than one
 * field per attempt; one missing field, or a wrong value, reads as any other field's error.
 */
export const purchaseInput = z.preprocess((value, ctx) => {
  if (!isPlainObject(value)) return value;
  const missing = PURCHASE_FIELDS.filter((field) => value[field] === undefined);
  if (missing.length > 1) {
    const names = `${missing.slice(0, -1).join(", ")} and ${missing.at(-1)}`;
    ctx.addIssue({ code: "custom", message: `${names} are required`, input: value });
  }
  return value;
}, purchaseFields);

// Optional fields take `null` as absent. `.nullish()` rather than common.ts's `optional()`:
// a preprocess step per field doubled the validation time of a 1000-event batch.
export const eventInput = z.object({
  id: text(128).min(1).nullish(),
  type: z.enum(INGESTED_EVENT_TYPES),
  name: text(200).min(1).nullish(),
  occurred_at: z.iso.datetime({ offset: true, error: "must be an ISO 8601 date and time" })
    .transform((value) => new Date(value))
    .refine((d) => d.getTime() >= EARLIEST, "must not be before 1970"),
  link_path: text(256).min(1).nullish(),
  time_spent: z.number().int().min(0).max(INT4_MAX).nullish(),
  device: jsonObject(MAX_OBJECT_BYTES).nullish(),
  user: jsonObject(MAX_OBJECT_BYTES).nullish(),
  attribution: jsonObject(MAX_OBJECT_BYTES).nullish(),
  geo: geoInput.nullish(),
  purchase: purchaseInput.nullish(),
}).superRefine((e, ctx) => {
  if ((e.type === "custom" || e.type === "purchase") && e.name == null) {
    ctx.addIssue({ code: "custom", path: ["name"], message: `required for ${e.type} events` });
  }
  if (e.type === "session" && e.time_spent == null) {
    ctx.addIssue({ code: "custom", path: ["time_spent"], message: "required for session events" });
  }
  if (e.type === "purchase" && e.purchase == null) {
    ctx.addIssue({ code: "custom", path: ["purchase"], message: "required for purchase events" });
  }
});

export const ingestBody = z.object({
  events: z.array(eventInput)
    .min(1, "must hold at least one event")
    .max(MAX_EVENTS, `must hold at most ${MAX_EVENTS} events`),
});

/**
 * Validates an ingestion body against the schema, then against the clock (services/events/record.ts's
 * assertOccurredInTime: 400 invalid_field naming `events[i].occurred_at`).
 */
export function parseIngestBody(raw: unknown, now: Date): NewEvent[] {
  const { events } = ingestBody.parse(raw);
  assertOccurredInTime(events, now);
  return events;
}
