// GET/POST /dashboard/environments/:project_id/destinations/… – the destinations page over
// services/destinations/destinations.ts, the same services and input schema as the admin API's routes.
import type { Context, Hono } from "hono";
import { createDestinationBody } from "../inputs/destinations.ts";
import type { AppDeps } from "../services/deps.ts";
import {
  createDestination,
  deleteDestination,
  type DestinationDeps,
  type DestinationStatus,
  listDestinations,
  rotateDestinationSecret,
  setDestinationPaused,
  testDestination,
} from "../services/destinations/destinations.ts";
import { ApiError } from "../services/errors.ts";
import { normaliseEventTypes } from "../services/feed/feed.ts";
import { formText } from "./forms.ts";
import type { PageKit } from "./kit.tsx";
import { envBase } from "./layout.tsx";
import {
  type DestinationFormErrors,
  DestinationsPage,
  RemoveDestinationPage,
  RotateSecretPage,
} from "./pages/destinations.tsx";
import { auditOf, type DashboardEnv } from "./security.ts";

/** A form field that may repeat (checkboxes), as its text values. */
function formTexts(form: Record<string, unknown>, name: string): string[] {
  const v = form[name];
  const all = Array.isArray(v) ? v : v === undefined ? [] : [v];
  return all.filter((x): x is string => typeof x === "string");
}

/** A zod or service message about `url`, as the sentence shown under the URL field. */
function urlError(message: string): string {
  const text = message.replace(/^url: /, "");
  return /^must /.test(text) ? `URL ${text}.` : `Refused: ${text}.`;
}

export function destinationPages(app: Hono<DashboardEnv>, deps: AppDeps, kit: PageKit): void {
  const { sql, clock } = deps;
  const { page, loadEnv } = kit;
  const destinationDeps: DestinationDeps = {
    clock,
    cursorSecret: deps.cursorSecret,
    allowPrivate: deps.config.destinationsAllowPrivate,
  };
  const path = "/environments/:project_id/destinations";

  async function findDestination(c: Context<DashboardEnv>, envId: number) {
    const destination = (await listDestinations(sql, clock, String(envId)))
      .find((d) => String(d.id) === c.req.param("destination_id"));
    if (!destination) throw new ApiError("not_found", "There is no such destination here.");
    return destination;
  }

  // GET …/destinations – the destinations with their delivery state, and the add form
  app.get(path, async (c) => {
    const ctx = await loadEnv(c);
    const destinations = await listDestinations(sql, clock, String(ctx.env.id));
    const q = c.req.query();
    const notice = q.removed === "1"
      ? "The destination was removed."
      : q.paused === "1"
      ? "Destination paused: it keeps its place in the feed until you resume it."
      : q.resumed === "1"
      ? "Destination resumed."
      : undefined;
    return page(c, <DestinationsPage {...ctx} destinations={destinations} notice={notice} />);
  });

  // POST …/destinations – register one (starts capture); its secret is shown on the answer, once
  app.post(path, async (c) => {
    const ctx = await loadEnv(c);
    const form = await c.req.parseBody({ all: true });
    const values = { url: formText(form, "url"), types: formTexts(form, "event_types") };
    const errors: DestinationFormErrors = {};
    let created: DestinationStatus & { secret: string } | undefined;
    const parsed = createDestinationBody.safeParse({
      url: values.url.trim(),
      event_types: values.types,
    });
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        if (issue.path[0] === "url") errors.url ??= urlError(issue.message);
        else errors.types ??= "Choose event types from the list.";
      }
    } else {
      try {
        created = await createDestination(sql, destinationDeps, String(ctx.env.id), {
          url: parsed.data.url,
          eventTypes: normaliseEventTypes(parsed.data.event_types ?? []),
        }, auditOf(c));
      } catch (err) {
        // The address rule (private, loopback…) and the type list: errors beside their fields.
        if (!(err instanceof ApiError)) throw err;
        if (err.code === "invalid_event_type") errors.types = "Choose event types from the list.";
        else if (err.code === "invalid_field" && err.message.startsWith("url: ")) {
          errors.url = urlError(err.message);
        } else throw err;
      }
    }
    const destinations = await listDestinations(sql, clock, String(ctx.env.id));
    if (!created) {
      return page(
        c,
        <DestinationsPage {...ctx} destinations={destinations} values={values} errors={errors} />,
        400,
      );
    }
    return page(
      c,
      <DestinationsPage
        {...ctx}
        destinations={destinations}
        notice="Destination added."
        secret={{ label: "Signing secret of the new destination", value: created.secret }}
      />,
    );
  });

  // POST …/destinations/:id/paused – pause (paused=true) or resume (paused=false)
  app.post(`${path}/:destination_id/paused`, async (c) => {
    const { env } = await loadEnv(c);
    const paused = formText(await c.req.parseBody(), "paused");
    if (paused !== "true" && paused !== "false") {
      throw new ApiError("invalid_field", "paused: must be true or false");
    }
    await setDestinationPaused(
      sql,
      clock,
      String(env.id),
      c.req.param("destination_id"),
      paused === "true",
      auditOf(c),
    );
    return c.redirect(
      `${envBase(env.id)}/destinations?${paused === "true" ? "paused" : "resumed"}=1`,
      303,
    );
  });

  // POST …/destinations/:id/test – one signed empty delivery now; the page shows the answer
  app.post(`${path}/:destination_id/test`, async (c) => {
    const ctx = await loadEnv(c);
    const destination = await findDestination(c, ctx.env.id);
    const r = await testDestination(
      sql,
      destinationDeps,
      String(ctx.env.id),
      String(destination.id),
    );
    const destinations = await listDestinations(sql, clock, String(ctx.env.id));
    return page(
      c,
      <DestinationsPage
        {...ctx}
        destinations={destinations}
        test={{ url: destination.url, status: r.status, error: r.error, durationMs: r.durationMs }}
      />,
    );
  });

  // GET …/destinations/:id/rotate – asks before replacing the secret
  app.get(`${path}/:destination_id/rotate`, async (c) => {
    const ctx = await loadEnv(c);
    const destination = await findDestination(c, ctx.env.id);
    return page(c, <RotateSecretPage {...ctx} destination={destination} />);
  });

  // POST …/destinations/:id/rotate – a new secret, shown once; the old one signs for 24 h more
  app.post(`${path}/:destination_id/rotate`, async (c) => {
    const ctx = await loadEnv(c);
    const destination = await findDestination(c, ctx.env.id);
    const secret = await rotateDestinationSecret(
      sql,
      destinationDeps,
      String(ctx.env.id),
      String(destination.id),
      auditOf(c),
    );
    const destinations = await listDestinations(sql, clock, String(ctx.env.id));
    return page(
      c,
      <DestinationsPage
        {...ctx}
        destinations={destinations}
        notice="Secret replaced: for 24 hours deliveries carry signatures by both secrets."
        secret={{ label: `New signing secret of ${destination.url}`, value: secret }}
      />,
    );
  });

  // GET …/destinations/:id/delete – asks before removing
  app.get(`${path}/:destination_id/delete`, async (c) => {
    const ctx = await loadEnv(c);
    const destination = await findDestination(c, ctx.env.id);
    return page(c, <RemoveDestinationPage {...ctx} destination={destination} />);
  });

  // POST …/destinations/:id/delete – remove it
  app.post(`${path}/:destination_id/delete`, async (c) => {
    const { env } = await loadEnv(c);
    await deleteDestination(sql, String(env.id), c.req.param("destination_id"), auditOf(c));
    return c.redirect(`${envBase(env.id)}/destinations?removed=1`, 303);
  });
}
