// Converting an amount in minor units between currencies at the ECB's reference rates (units of
// a currency per euro), exactly: integer arithmetic on the rates' decimal digits, one rounding at
// the end (to the nearest minor unit, halves away from zero).

/** The euro: the ECB's base currency, one unit per euro, never in the rates table. */
export const EURO = "EUR";

const exponents = new Map<string, number>();

/** The number of minor-unit digits of an ISO 4217 currency (2 for USD, 0 for JPY, 3 for KWD). */
export function minorDigits(currency: string): number {
  let digits = exponents.get(currency);
  if (digits === undefined) {
    try {
      digits = new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions()
        .maximumFractionDigits ?? 2;
    } catch {
      digits = 2;
    }
    exponents.set(currency, digits);
  }
  return digits;
}

/** The ISO 4217 codes this runtime knows: what a reporting currency may be. */
export const CURRENCY_CODES: ReadonlySet<string> = new Set(Intl.supportedValuesOf("currency"));

/** A decimal rate ("1.0823") as an integer and its scale (10823n, 4). */
function decimal(rate: string): [bigint, number] {
  const [whole, fraction = ""] = rate.split(".");
  return [BigInt(whole! + fraction), fraction.length];
}

const INT8_MAX = 9223372036854775807n;

/**
 * `amount` minor units of `from` in minor units of `to`, given each one's units per euro (the
 * euro's own is "1"): amount × rateTo / rateFrom, scaled by the two currencies' minor digits,
 * rounded once to the nearest unit (halves away from zero) and clamped to a bigint column's
 * range. The same currency converts to itself without a rate.
 */
export function convertMinor(
  amount: number | bigint,
  from: string,
  to: string,
  rateFrom: string,
  rateTo: string,
): bigint {
  if (from === to) return BigInt(amount);
  const [fromInt, fromScale] = decimal(rateFrom);
  const [toInt, toScale] = decimal(rateTo);
  const up = minorDigits(to) + fromScale;
  const down = minorDigits(from) + toScale;
  const num = BigInt(amount) * toInt * 10n ** BigInt(up);
  const den = fromInt * 10n ** BigInt(down);
  const negative = num < 0n;
  const abs = negative ? -num : num;
  let q = (2n * abs + den) / (2n * den);
  if (q > INT8_MAX) q = INT8_MAX;
  return negative ? -q : q;
}
