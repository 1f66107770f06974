// The files a link host serves besides its links: the two association files that let iOS and
// Android open the app for the host's URLs, and the open-app page's script.
import { Hono } from "hono";
import type { Context } from "hono";
import {
  appleAppSiteAssociation,
  assetLinks,
  associatedApps,
  requestHost,
} from "../services/link_host/apps.ts";
import type { AppDeps } from "../services/deps.ts";
import type { AppEnv } from "./deps.ts";
import { errorResponse } from "./errors.ts";
import { OPEN_APP_SCRIPT_PATH } from "./link_host_html.ts";

const OPEN_APP_SCRIPT = Deno.readTextFileSync(new URL("./static/open_app.js", import.meta.url));

async function etagOf(body: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body));
  return `"${btoa(String.fromCharCode(...new Uint8Array(digest).slice(0, 18)))}"`;
}

/**
 * Answers `body` with a strong ETag, or 304 when the client already has it. Apple's CDN and
 * Android's verifier fetch these files often; a revalidation then costs no body.
 */
async function cacheable(
  c: Context<AppEnv>,
  body: string,
  contentType: string,
  maxAge: number,
): Promise<Response> {
  const etag = await etagOf(body);
  const headers = {
    "Content-Type": contentType,
    "Cache-Control": `public, max-age=${maxAge}`,
    ETag: etag,
    "X-Content-Type-Options": "nosniff",
  };
  const match = c.req.header("If-None-Match")?.split(",").map((t) => t.trim().replace(/^W\//, ""));
  if (match?.includes(etag) || match?.includes("*")) return c.body(null, 304, headers);
  return c.body(body, 200, headers);
}

/** A short lifetime: a changed app setting reaches the verifiers within minutes. */
const ASSOCIATION_MAX_AGE = 300;

export function linkHostAppRoutes(deps: AppDeps): Hono<AppEnv> {
  const { sql } = deps;
  const app = new Hono<AppEnv>();

  // Both files are answered directly on the host asked for (never redirected, as Apple and
  // Google require), for the one project that owns that host (services/link_host/apps.ts
  // associatedApps); 404 when there is none or it has no such app.
  const association = (build: typeof assetLinks) => async (c: Context<AppEnv>) => {
    const host = requestHost(c.req.header("Host"), deps.config.linkBaseUrl);
    const file = build(await associatedApps(sql, host, deps.config.defaultHostAppsProject));
    if (file === null) {
      return errorResponse("not_found", "no app is associated with this host");
    }
    return await cacheable(c, JSON.stringify(file), "application/json", ASSOCIATION_MAX_AGE);
  };

  // GET /.well-known/apple-app-site-association – iOS universal links (no extension, JSON)
  app.get("/.well-known/apple-app-site-association", association(appleAppSiteAssociation));
  // GET /.well-known/assetlinks.json – Android App Links
  app.get("/.well-known/assetlinks.json", association(assetLinks));

  // GET /open-app.js – the open-app page's script; a dot never appears in a link path
  app.get(
    OPEN_APP_SCRIPT_PATH,
    (c) => cacheable(c, OPEN_APP_SCRIPT, "text/javascript; charset=utf-8", 3600),
  );

  return app;
}
