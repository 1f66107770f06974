// The dashboard's stylesheet and script, read once from dashboard/assets/ and served by the
// process itself (nothing from a CDN). URLs carry a digest of the content, so browsers may cache
// them for a year and still get a new file the moment it changes.
import { createHash } from "node:crypto";
import { BASE } from "./security.ts";

interface Asset {
  body: string;
  type: string;
  digest: string;
}

const TYPES: Record<string, string> = {
  "app.css": "text/css; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "live.js": "text/javascript; charset=utf-8",
  "editor.js": "text/javascript; charset=utf-8",
  "icon.svg": "image/svg+xml",
};

const assets = new Map<string, Asset>();
for (const [name, type] of Object.entries(TYPES)) {
  const body = Deno.readTextFileSync(new URL(`./assets/${name}`, import.meta.url));
  const digest = createHash("sha256").update(body).digest("hex").slice(0, 12);
  assets.set(name, { body, type, digest });
}

export function getAsset(name: string): Asset | undefined {
  return assets.get(name);
}

export function assetUrl(name: keyof typeof TYPES & string): string {
  return `${BASE}/assets/${name}?v=${assets.get(name)?.digest ?? "0"}`;
}
