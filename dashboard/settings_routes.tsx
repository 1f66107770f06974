// POST /dashboard/projects/:hashid/apps[/remove] – a project's link domain and apps, and
// POST …/sdk_limits its key's write limits, POST …/reporting_currency the currency revenue is
// summed in, POST …/attribution the attribution window and model, through the same schemas and
// service as
// PATCH /api/v1/admin/projects/:hashid.
import type { Hono } from "hono";
import type { AppDeps } from "../services/deps.ts";
import { ApiError } from "../services/errors.ts";
import { getProjectOrThrow, updateProject } from "../services/projects/projects.ts";
import type { PageKit } from "./kit.tsx";
import { formText } from "./forms.ts";
import { attributionSettings, reportingCurrency } from "../inputs/project_settings.ts";
import { ProjectPage } from "./pages/projects.tsx";
import type { AttributionForm } from "./pages/project_settings.tsx";
import { auditOf, BASE, type DashboardEnv } from "./security.ts";
import {
  fieldSentence,
  parseLimitsForm,
  parseSettingsForm,
  type SettingsErrors,
} from "./settings_form.ts";

export function settingsPages(
  app: Hono<DashboardEnv>,
  deps: AppDeps,
  kit: Pick<PageKit, "page">,
): void {
  const { sql, config } = deps;
  // LINK_BASE_URL's host serves the links of projects without a domain: no project may claim it.
  const defaultHost = new URL(config.linkBaseUrl).hostname;
  const saved = (hashid: string) => `${BASE}/projects/${encodeURIComponent(hashid)}?saved=1`;

  // POST /dashboard/projects/:hashid/apps – link domain and both apps; errors beside their fields
  app.post("/projects/:hashid/apps", async (c) => {
    const hashid = c.req.param("hashid");
    const { values, input, errors } = parseSettingsForm(await c.req.parseBody());
    const again = async (errs: SettingsErrors) => {
      const project = await getProjectOrThrow(sql, hashid);
      return kit.page(
        c,
        <ProjectPage
          session={c.get("session")}
          project={project}
          settings={{ values, errors: errs }}
        />,
        400,
      );
    };
    if (!input) return await again(errors);
    try {
      await updateProject(sql, hashid, input, auditOf(c), { defaultHost });
    } catch (err) {
      // The rules only the service knows (a domain another project has, the instance's own host).
      if (
        err instanceof ApiError && err.code === "invalid_field" &&
        /^link_domain: /.test(err.message)
      ) {
        return await again({
          link_domain: fieldSentence(err.message.replace(/^link_domain: is /, "this domain is ")),
        });
      }
      throw err;
    }
    return c.redirect(saved(hashid), 303);
  });

  // POST /dashboard/projects/:hashid/sdk_limits – the project key's write limits; blank: default
  app.post("/projects/:hashid/sdk_limits", async (c) => {
    const hashid = c.req.param("hashid");
    const { values, input, errors } = parseLimitsForm(await c.req.parseBody());
    if (!input) {
      const project = await getProjectOrThrow(sql, hashid);
      return kit.page(
        c,
        <ProjectPage session={c.get("session")} project={project} limits={{ values, errors }} />,
        400,
      );
    }
    await updateProject(sql, hashid, input, auditOf(c), { defaultHost });
    return c.redirect(saved(hashid), 303);
  });

  // POST /dashboard/projects/:hashid/reporting_currency – the currency revenue is summed in;
  // every purchase of the project is reconverted
  app.post("/projects/:hashid/reporting_currency", async (c) => {
    const hashid = c.req.param("hashid");
    const parsed = reportingCurrency.safeParse(
      formText(await c.req.parseBody(), "reporting_currency"),
    );
    if (!parsed.success) {
      const project = await getProjectOrThrow(sql, hashid);
      return kit.page(
        c,
        <ProjectPage
          session={c.get("session")}
          project={project}
          currencyError={fieldSentence(parsed.error.issues[0]!.message)}
        />,
        400,
      );
    }
    await updateProject(sql, hashid, { reporting_currency: parsed.data }, auditOf(c), {
      defaultHost,
    });
    return c.redirect(saved(hashid), 303);
  });

  // POST /dashboard/projects/:hashid/attribution – the attribution window and model; events
  // ingested from then on are attributed under them
  app.post("/projects/:hashid/attribution", async (c) => {
    const hashid = c.req.param("hashid");
    const form = await c.req.parseBody();
    const values = {
      attribution_window_days: formText(form, "attribution_window_days").trim(),
      attribution_model: formText(form, "attribution_model"),
    };
    const days = values.attribution_window_days;
    const parsed = attributionSettings.safeParse({
      attribution_window_days: /^[0-9]{1,9}$/.test(days) ? Number(days) : days,
      attribution_model: values.attribution_model,
    });
    if (!parsed.success) {
      const errors: AttributionForm["errors"] = {};
      for (const issue of parsed.error.issues) {
        const field = issue.path[0] as keyof AttributionForm["errors"];
        errors[field] ??= fieldSentence(issue.message);
      }
      const project = await getProjectOrThrow(sql, hashid);
      return kit.page(
        c,
        <ProjectPage
          session={c.get("session")}
          project={project}
          attribution={{ values, errors }}
        />,
        400,
      );
    }
    await updateProject(sql, hashid, parsed.data, auditOf(c), { defaultHost });
    return c.redirect(saved(hashid), 303);
  });

  // POST /dashboard/projects/:hashid/apps/remove – platform=ios|android: remove that app
  app.post("/projects/:hashid/apps/remove", async (c) => {
    const hashid = c.req.param("hashid");
    const platform = formText(await c.req.parseBody(), "platform");
    if (platform !== "ios" && platform !== "android") {
      throw new ApiError("invalid_field", "platform: must be ios or android");
    }
    await updateProject(sql, hashid, { apps: { [platform]: null } }, auditOf(c), {
      defaultHost,
    });
    return c.redirect(saved(hashid), 303);
  });
}
