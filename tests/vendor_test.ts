// pages/vendor/redoc/ holds Redoc's standalone bundle, served at /docs, so that the service need
// not depend on the npm package (whose hundred-odd dependencies, already inside the bundle, every
// first start would fetch). The files must be the package's own, of the version tests/deno.json
// pins: to update Redoc, change that version and copy bundles/redoc.standalone.js,
// bundles/redoc.standalone.js.LICENSE.txt and LICENSE from the package into pages/vendor/redoc/.
import assert from "node:assert/strict";
import bundle from "redoc/bundles/redoc.standalone.js" with { type: "text" };
import bundleLicences from "redoc/bundles/redoc.standalone.js.LICENSE.txt" with { type: "text" };
import licence from "redoc/LICENSE" with { type: "text" };
import { call, startTestServer } from "./helpers/server.ts";

const VENDOR = new URL("../pages/vendor/redoc/", import.meta.url);

Deno.test("pages/vendor/redoc/ holds npm:redoc's bundle and licences, byte for byte", async () => {
  const vendored = (name: string) => Deno.readTextFile(new URL(name, VENDOR));
  // Compared as hashes: a difference in a 1 MB one-line file would otherwise print it whole.
  const digest = async (text: string) =>
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  assert.deepEqual(await digest(await vendored("redoc.standalone.js")), await digest(bundle));
  assert.equal(await vendored("redoc.standalone.js.LICENSE.txt"), bundleLicences);
  assert.equal(await vendored("LICENSE"), licence);
  assert.deepEqual(
    [...Deno.readDirSync(VENDOR)].map((e) => e.name).sort(),
    ["LICENSE", "redoc.standalone.js", "redoc.standalone.js.LICENSE.txt"],
  );
});

Deno.test("GET /docs serves the vendored bundle, with Redocly's remote logo replaced", async () => {
  const srv = await startTestServer();
  try {
    const page = await call(srv.url, "GET", "/docs");
    assert.equal(page.status, 200);
    const src = page.text.match(/src="(docs\/assets\/[^"]+\/redoc\.standalone\.js)"/)?.[1];
    assert.ok(src, page.text);
    const served = await call(srv.url, "GET", `/${src}`);
    assert.equal(served.status, 200);
    // The same file but for one stretch: the logo's URL, now a data: image.
    const a = served.text, b = bundle;
    let start = 0;
    while (start < a.length && a[start] === b[start]) start++;
    let end = 0;
    while (end < a.length - start && a.at(-1 - end) === b.at(-1 - end)) end++;
    assert.equal(b.slice(start, b.length - end), "https://cdn.redoc.ly/redoc/logo-mini.svg");
    assert.match(a.slice(start, a.length - end), /^data:image\/svg\+xml,[^"]*$/);
  } finally {
    await srv.close();
  }
});
