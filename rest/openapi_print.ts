// `deno task openapi [file]`: writes the OpenAPI document the app serves at /openapi.json to a
// file (stdout without one), for linters and client generators. CI lints it with redocly.
import { OPENAPI_DOCUMENT } from "./openapi.ts";

const text = JSON.stringify(OPENAPI_DOCUMENT, null, 2) + "\n";
const file = Deno.args[0];
if (file) await Deno.writeTextFile(file, text);
else await Deno.stdout.write(new TextEncoder().encode(text));
