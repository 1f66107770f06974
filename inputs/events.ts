// The body of POST {base_url}/events (CONTRACT.md, "Event ingestion").
import { z } from "zod";
import { ApiError } from "../services/errors.ts";
import { INGESTED_EVENT_TYPES, type NewEvent } from "../services/events.ts";
import { isPlainObject, jsonObject, text } from "./common.ts";

export const MAX_EVENTS = 1000;
export const MAX_OBJECT_BYTES = 16 * 1024;
/** How far ahead of the server's clock `occurred_at` may be. */
export const MAX_FUTURE_MS = 24 * 60 * 60 * 1000;
const INT4_MAX = 2_147_483_647;
/** ±10^12 minor units: a whole batch of corrections still sums within JS safe integers. */
const MAX_AMOUNT = 1e12;
const EARLIEST = Date.UTC(1970, 0, 1);

// ISO 3166-1 alpha-2, the officially assigned codes.
const COUNTRIES = new Set(
  ("AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR " +
    "BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ " +
    "EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW " +
    "GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY " +
    "KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV " +
    "MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY " +
    "QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG " +
    "TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM " +
    "ZW").split(" "),
);

/** The country as stored (upper case), or undefined when it is not an ISO 3166-1 alpha-2 code. */
export function isoCountry(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length !== 2) return undefined;
  const upper = value.toUpperCase();
  return COUNTRIES.has(upper) ? upper : undefined;
}

/**
 * Only `country` survives: IP addresses, cities and everything else are dropped before storage.
 * A country that is not an ISO 3166-1 alpha-2 code is dropped too (and `geo` with it) rather
 * than rejecting the batch: location is best effort, the event itself is not.
 */
export const geoInput = z.custom<Record<string, unknown>>(isPlainObject, {
  message: "must be a JSON object",
}).transform((geo) => {
  const country = isoCountry(geo.country);
  return country ? { country } : undefined;
});

export const purchaseInput = z.object({
  transaction_id: text(256).min(1),
  version: z.number().int().min(1).max(INT4_MAX),
  amount: z.number().int().min(-MAX_AMOUNT).max(MAX_AMOUNT),
  currency: text(16).min(1),
  product_id: text(256).min(1),
  store: text(64).min(1),
});

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
 * Validates an ingestion body against the schema and the clock: an event more than 24 hours
 * ahead of `now` fails like any other field (400 invalid_field naming `events[i].occurred_at`).
 */
export function parseIngestBody(raw: unknown, now: Date): NewEvent[] {
  const { events } = ingestBody.parse(raw);
  const latest = now.getTime() + MAX_FUTURE_MS;
  const index = events.findIndex((e) => e.occurred_at.getTime() > latest);
  if (index >= 0) {
    // An ApiError rather than `new z.ZodError`: zod 4's ZodError built by hand is no Error,
    // and Hono hands only Errors to the error mapper.
    throw new ApiError(
      "invalid_field",
      `events[${index}].occurred_at: must not be more than 24 hours in the future`,
    );
  }
  return events;
}
