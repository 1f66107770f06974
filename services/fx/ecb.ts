// The European Central Bank's reference rates as it publishes them: eurofxref-daily.xml (one
// day), eurofxref-hist-90d.xml and eurofxref-hist.xml (every day since 1999), all in one format:
//
//   <gesmes:Envelope …><Cube><Cube time="2026-11-06"><Cube currency="USD" rate="1.0823"/>…
//
// Rates are units of the currency per euro. The whole file is checked before anything is
// stored: a malformed one is refused whole (400 invalid_field naming the body).
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { ApiError } from "../errors.ts";
import type { Rate } from "./rates.ts";

/** The largest file taken: the full history since 1999 is about 6 MB. */
export const MAX_ECB_FILE_BYTES = 16 * 1024 * 1024;

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const CODE = /^[A-Z]{3}$/;
const RATE = /^\d{1,12}(\.\d{1,12})?$/;

function refuse(message: string): never {
  throw new ApiError("invalid_field", `body: ${message}`, { field: "body" });
}

type Node = Record<string, unknown>;
const nodes = (v: unknown): Node[] =>
  (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter(
    (n): n is Node => typeof n === "object" && n !== null,
  );

/** The rates of an ECB reference-rate file; refuses (ApiError) anything else. */
export function parseEcbRates(xml: string): Rate[] {
  if (xml.length > MAX_ECB_FILE_BYTES) refuse("larger than the ECB's files can be");
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    refuse(`not well-formed XML (line ${valid.err.line}: ${valid.err.msg})`);
  }
  const doc = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "",
    removeNSPrefix: true,
    parseAttributeValue: false,
    parseTagValue: false,
    // No entity expansion: the ECB's files have none, and a hostile file gains nothing.
    processEntities: false,
    isArray: (name) => name === "Cube",
  }).parse(xml) as Node;
  const envelope = nodes(doc.Envelope)[0];
  if (!envelope) refuse("not an ECB reference-rate file (no Envelope)");
  const rates: Rate[] = [];
  for (const outer of nodes(envelope.Cube)) {
    for (const day of nodes(outer.Cube)) {
      const time = day.time;
      if (typeof time !== "string" || !DAY.test(time) || Number.isNaN(Date.parse(time))) {
        refuse(`a Cube's time is not a date (YYYY-MM-DD): ${JSON.stringify(time)}`);
      }
      for (const r of nodes(day.Cube)) {
        const { currency, rate } = r;
        if (typeof currency !== "string" || !CODE.test(currency) || currency === "EUR") {
          refuse(`${time}: not a currency code: ${JSON.stringify(currency)}`);
        }
        if (typeof rate !== "string" || !RATE.test(rate) || Number(rate) <= 0) {
          refuse(`${time} ${currency}: not a rate: ${JSON.stringify(rate)}`);
        }
        rates.push({ day: time, currency, rate });
      }
    }
  }
  if (rates.length === 0) refuse("no rates (not an ECB reference-rate file?)");
  return rates;
}
