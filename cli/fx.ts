// deno task fx -- FILE: loads one of the ECB's reference-rate files (eurofxref-daily.xml,
// eurofxref-hist-90d.xml or eurofxref-hist.xml, as downloaded from the ECB) into the configured
// database, and reconverts the purchases the rates change: for an instance that cannot reach the
// ECB itself, or to load the whole history once. The same as POST /api/v1/admin/fx_rates.
import { fail, openToolDatabase } from "./open.ts";
import { ApiError } from "../services/errors.ts";
import { MAX_ECB_FILE_BYTES, parseEcbRates } from "../services/fx/ecb.ts";
import { storeRates } from "../services/fx/rates.ts";

const USAGE = `usage: deno task fx -- FILE

Loads the European Central Bank's reference rates from FILE (its XML, as published at
https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.xml), then converts every purchase
they concern into its project's reporting currency. The database is the server's:
DATABASE_URL, or the embedded one in DATA_DIR (stop the server first).`;

// `deno task fx -- FILE` hands the literal `--` on to the script.
const args = Deno.args[0] === "--" ? Deno.args.slice(1) : Deno.args;
const file = args[0];
if (!file || args.length > 1 || file === "-h" || file === "--help") fail(USAGE);

let xml: string;
try {
  const info = await Deno.stat(file);
  if (info.size > MAX_ECB_FILE_BYTES) fail(`${file}: larger than the ECB's files can be`);
  xml = await Deno.readTextFile(file);
} catch (err) {
  fail(`cannot read ${file}: ${err instanceof Error ? err.message : err}`);
}

let rates;
try {
  rates = parseEcbRates(xml);
} catch (err) {
  if (err instanceof ApiError) fail(`${file}: ${err.message.replace(/^body: /, "")}`);
  throw err;
}

const db = await openToolDatabase();
try {
  const result = await storeRates(db.sql, rates);
  // deno-lint-ignore no-console
  console.log(JSON.stringify({
    fx_rates: {
      rates: result.rates,
      changed: result.changed,
      reconverted: result.reconverted,
      last_day: result.lastDay,
    },
  }));
} finally {
  await db.close();
}
