import { Hono } from "hono";
import type { Context } from "hono";
import type { EnvironmentKind } from "../services/projects/projects.ts";
import { recordEvents } from "../services/events/record.ts";
import { clickIdsFor } from "../services/attribution/click_ids.ts";
import { accessPath, createLink, getLinkForSdkOrThrow, toLink } from "../services/links/links.ts";
import { projectMetricsEtag, projectMetricsJson } from "../services/links/metrics.ts";
import {
  admitSdkWrite,
  authenticateSdk,
  LINK_ENVIRONMENTS,
  METRICS_ENVIRONMENTS,
} from "../services/access/sdk_auth.ts";
import { clientAddress } from "../inputs/headers.ts";
import { readBody, readJson } from "./body.ts";
import type { AppDeps } from "../services/deps.ts";
import type { AppEnv } from "./deps.ts";
import { parseIngestBody } from "../inputs/events.ts";
import { generateLinkBody } from "../inputs/links.ts";

const JSON_HEADERS = { "Content-Type": "application/json" };

/** Metrics are per key and environment, and always revalidated: a cache may keep them only so. */
const METRICS_CACHE = { "Cache-Control": "private, no-cache", Vary: "PROJECT-KEY, ENVIRONMENT" };

/** If-None-Match against one strong tag: `*`, or a comma-separated list that names it. */
function etagMatches(header: string, etag: string): boolean {
  return header.trim() === "*" ||
    header.split(",").some((t) => t.trim().replace(/^W\//, "") === etag);
}

/** GET /api/v1/sdk/link/:link_path's answer. */
async function sdkLink(deps: AppDeps, headers: Headers, path: string): Promise<Response> {
  const row = await getLinkForSdkOrThrow(deps.sql, {
    projectKey: headers.get("PROJECT-KEY") ?? undefined,
    environment: headers.get("ENVIRONMENT") ?? undefined,
  }, path);
  // A plain Response: Hono's c.json builds its headers anew on every call.
  return new Response(JSON.stringify({ link: toLink(row, deps.config.linkBaseUrl) }), {
    headers: JSON_HEADERS,
  });
}

/** The SDK API under {base_url} = /api/v1/sdk: generate_link, link, metrics_for_project, events. */
export function sdkRoutes(deps: AppDeps): Hono<AppEnv> {
  const { sql, config, clock } = deps;
  // The link host's, for the same secret: ingestion reads the ids it mints.
  const clickIds = clickIdsFor(deps.cursorSecret);
  const app = new Hono<AppEnv>();
  const headers = (c: Context<AppEnv>) => ({
    projectKey: c.req.header("PROJECT-KEY"),
    environment: c.req.header("ENVIRONMENT"),
  });
  const authenticate = (c: Context<AppEnv>, allowed: ReadonlyMap<string, EnvironmentKind>) =>
    authenticateSdk(sql, headers(c), allowed);
  /** A write, counted against the project key's limits (services/sdk_limits.ts). */
  const admitWrite = (c: Context<AppEnv>, weight: number) =>
    admitSdkWrite(sql, headers(c), LINK_ENVIRONMENTS, {
      address: clientAddress(c, config.trustProxy),
      secret: deps.cursorSecret,
      weight,
      now: clock.now(),
      logger: deps.logger,
    });

  // POST /api/v1/sdk/generate_link – create a link and answer its URL
  app.post("/generate_link", async (c) => {
    const environment = await admitWrite(c, 1);
    const input = await readBody(c, generateLinkBody);
    const row = await createLink(sql, environment.id, input);
    return c.json({ link: accessPath(config.linkBaseUrl, row) });
  });

  // GET /api/v1/sdk/link/:link_path – one link of the environment, active or not
  app.get("/link/:link_path", function sdkLinkLookup(c) {
    return sdkLink(deps, c.req.raw.headers, c.req.param("link_path"));
  });

  // GET /api/v1/sdk/metrics_for_project – lifetime totals of the active links, by views
  app.get("/metrics_for_project", async (c) => {
    const environment = await authenticate(c, METRICS_ENVIRONMENTS);
    // A client that has the current answer gets 304 without it being built.
    const cached = c.req.header("If-None-Match");
    if (cached) {
      const etag = await projectMetricsEtag(sql, environment.id);
      if (etagMatches(cached, etag)) return c.body(null, 304, { ETag: etag, ...METRICS_CACHE });
    }
    // The body's bytes as PostgreSQL sent them, copied into the Response as it is constructed.
    return await projectMetricsJson(sql, environment.id, (body, etag) =>
      c.body(body, 200, {
        "Content-Type": "application/json; charset=utf-8",
        ETag: etag,
        ...METRICS_CACHE,
      }));
  });

  // POST /api/v1/sdk/events – ingest a batch of app events, all or nothing
  app.post("/events", async (c) => {
    // The body is read first to count its events, but a malformed one is refused only after
    // the key: a wrong key is 401 whatever the body.
    const body = await readJson(c).then((value) => ({ value }), (error) => ({ error }));
    const events = "value" in body ? (body.value as { events?: unknown })?.events : undefined;
    const environment = await admitWrite(c, Array.isArray(events) ? events.length : 1);
    if ("error" in body) throw body.error;
    const parsed = parseIngestBody(body.value, clock.now());
    const result = await recordEvents(
      sql,
      {
        environment,
        clock,
        linkBaseUrl: config.linkBaseUrl,
        clickIds,
      },
      parsed,
    );
    return c.json(result, 202);
  });

  return app;
}
