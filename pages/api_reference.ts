// GET /docs: a readable reference of the REST API, rendered in the browser by Redoc from
// /openapi.json. Redoc's standalone bundle is served by this process (no CDN, no web fonts), so
// the page works on a closed network. Redoc 2 is used because Redoc 3 reports usage to its vendor
// by default. The bundle is the npm package's own file, kept in vendor/redoc/: the package's
// dependencies (React, MobX, core-js and some hundred more, already inside the bundle) would
// otherwise be fetched on every first start. tests/vendor_test.ts checks it is byte for byte the
// file of the version pinned in tests/deno.json.
import { AssetSet, StaticAsset } from "./assets.ts";

export const DOCS_ASSET_PREFIX = "/docs/assets/";

const JS = "text/javascript; charset=utf-8";
const REDOCLY_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";
const EMPTY_IMAGE =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/%3E";

/** Renders the reference; a file rather than inline code, so the CSP can forbid inline scripts. */
const BOOT = `(function () {
  var system = "-apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif";
  Redoc.init("openapi.json", {
    expandResponses: "200,201",
    jsonSampleExpandLevel: 3,
    hideDownloadButton: false,
    theme: {
      typography: {
        fontFamily: system,
        headings: { fontFamily: system },
        code: { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" },
      },
    },
  }, document.getElementById("reference"));
})();
`;

export const apiReferenceAssets = new AssetSet(async () => {
  const redoc = await import("./vendor/redoc/redoc.standalone.js", { with: { type: "text" } });
  // The one remote file Redoc 2 loads: its vendor's logo beside "API docs by Redocly". Replaced
  // by an empty image, so the page asks nothing of the network (and the CSP has nothing to block).
  if (!redoc.default.includes(REDOCLY_LOGO)) throw new Error("redoc: the logo URL moved");
  const bundle = redoc.default.replace(REDOCLY_LOGO, EMPTY_IMAGE);
  return [
    new StaticAsset("redoc.standalone.js", JS, bundle),
    new StaticAsset("boot.js", JS, BOOT),
  ];
});

export const API_REFERENCE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // Redoc's styled-components write <style> elements; its search index runs in a blob: worker.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

export async function renderApiReference(): Promise<string> {
  // Relative URLs: /docs resolves them against the root, as it does "openapi.json".
  const url = async (name: string) =>
    DOCS_ASSET_PREFIX.slice(1) + await apiReferenceAssets.pathOf(name);
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Link and event feed – REST API reference</title>
    <style>body { margin: 0; }</style>
  </head>
  <body>
    <noscript>The reference needs JavaScript; the document itself is at /openapi.json.</noscript>
    <div id="reference"></div>
    <script src="${await url("redoc.standalone.js")}"></script>
    <script src="${await url("boot.js")}"></script>
  </body>
</html>
`;
}
