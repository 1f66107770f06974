import { Hono } from "hono";
import { createDestinationBody, patchDestinationBody } from "../inputs/destinations.ts";
import type { AppDeps } from "../services/deps.ts";
import {
  createDestination,
  deleteDestination,
  type DestinationDeps,
  listDestinations,
  rotateDestinationSecret,
  setDestinationPaused,
  testDestination,
} from "../services/destinations/destinations.ts";
import { normaliseEventTypes } from "../services/feed/feed.ts";
import { auditOf, requireAccess } from "./access.ts";
import { readBody } from "./body.ts";
import type { AppEnv } from "./deps.ts";

/** Push destinations (webhooks): CONTRACT.md's destination routes, all behind the admin token. */
export function destinationRoutes(deps: AppDeps): Hono<AppEnv> {
  const { sql, clock } = deps;
  const app = new Hono<AppEnv>();
  const auth = requireAccess(deps);
  const destinationDeps: DestinationDeps = {
    clock,
    cursorSecret: deps.cursorSecret,
    allowPrivate: deps.config.destinationsAllowPrivate,
  };
  const base = "/projects/:project_id/destinations";

  // POST /api/v1/projects/:project_id/destinations – register; starts capture; secret shown once
  app.post(base, auth, async (c) => {
    const body = await readBody(c, createDestinationBody);
    const eventTypes = normaliseEventTypes(body.event_types ?? []);
    const destination = await createDestination(sql, destinationDeps, c.req.param("project_id"), {
      url: body.url,
      eventTypes,
    }, auditOf(c));
    return c.json({ destination }, 201);
  });

  // GET /api/v1/projects/:project_id/destinations – every destination with its delivery status
  app.get(base, auth, async (c) => {
    return c.json({ destinations: await listDestinations(sql, clock, c.req.param("project_id")) });
  });

  // PATCH /api/v1/projects/:project_id/destinations/:destination_id – pause or resume
  app.patch(`${base}/:destination_id`, auth, async (c) => {
    const body = await readBody(c, patchDestinationBody);
    const destination = await setDestinationPaused(
      sql,
      clock,
      c.req.param("project_id"),
      c.req.param("destination_id"),
      body.paused,
      auditOf(c),
    );
    return c.json({ destination });
  });

  // POST /api/v1/projects/:project_id/destinations/:destination_id/rotate_secret – new secret
  app.post(`${base}/:destination_id/rotate_secret`, auth, async (c) => {
    const secret = await rotateDestinationSecret(
      sql,
      destinationDeps,
      c.req.param("project_id"),
      c.req.param("destination_id"),
      auditOf(c),
    );
    return c.json({ secret });
  });

  // POST /api/v1/projects/:project_id/destinations/:destination_id/test – one signed empty delivery
  app.post(`${base}/:destination_id/test`, auth, async (c) => {
    const r = await testDestination(
      sql,
      destinationDeps,
      c.req.param("project_id"),
      c.req.param("destination_id"),
    );
    return c.json({ status: r.status, error: r.error, duration_ms: r.durationMs });
  });

  // DELETE /api/v1/projects/:project_id/destinations/:destination_id – stop delivery
  app.delete(`${base}/:destination_id`, auth, async (c) => {
    await deleteDestination(
      sql,
      c.req.param("project_id"),
      c.req.param("destination_id"),
      auditOf(c),
    );
    return c.body(null, 204);
  });

  return app;
}
