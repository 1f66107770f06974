// The browser pages' routes: the API reference at /docs, and the files of both pages. GraphiQL's
// HTML itself is served by Yoga at GET /graphql (graphql/yoga.ts renders it with
// pages/graphiql.ts).
import { Hono } from "hono";
import type { Context } from "hono";
import { API_REFERENCE_CSP, apiReferenceAssets, renderApiReference } from "./api_reference.ts";
import type { AssetSet } from "./assets.ts";
import { GRAPHIQL_ASSET_PREFIX, graphiqlAssets } from "./graphiql.ts";
import { DOCS_ASSET_PREFIX } from "./api_reference.ts";
import { docPage, renderLlmsTxt } from "./llms.ts";

async function serveAsset(c: Context, set: AssetSet, prefix: string): Promise<Response> {
  const asset = await set.find(c.req.path.slice(prefix.length));
  // Undefined: the app's JSON 404.
  return asset ? await asset.respond(c.req.raw) : c.notFound();
}

export function pageRoutes(): Hono {
  const app = new Hono();

  // GET /docs – the REST API reference (Redoc over /openapi.json)
  app.get("/docs", async (c) =>
    c.html(await renderApiReference(), 200, {
      "Content-Security-Policy": API_REFERENCE_CSP,
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "no-cache",
    }));

  // GET /llms.txt – an index of the documentation for agents (pages/llms.ts)
  app.get("/llms.txt", async (c) =>
    c.text(await renderLlmsTxt(), 200, {
      "Content-Type": "text/plain; charset=utf-8",
      "Cache-Control": "no-cache",
    }));

  // GET /docs/<page>.md – a page of the documentation as Markdown (those llms.txt lists)
  app.get("/docs/:page", async (c) => {
    const text = await docPage(c.req.param("page"));
    if (text === null) return c.notFound();
    return c.body(text, 200, {
      "Content-Type": "text/markdown; charset=utf-8",
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "no-cache",
    });
  });

  // GET /docs/assets/<hash>/<file>, GET /graphql/assets/<hash>/<file> – the pages' scripts,
  // styles and workers, cached for a year (the hash changes with the content)
  app.get(`${DOCS_ASSET_PREFIX}*`, (c) => serveAsset(c, apiReferenceAssets, DOCS_ASSET_PREFIX));
  app.get(`${GRAPHIQL_ASSET_PREFIX}*`, (c) => serveAsset(c, graphiqlAssets, GRAPHIQL_ASSET_PREFIX));

  return app;
}
