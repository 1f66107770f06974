// GET/POST /dashboard/environments/:project_id/links/… – an environment's dashboard links: the
// list, the new-link and edit forms, a link's page (QR code, counters, analytics) and its
// activate, archive and delete actions, over the admin API's link services.
import type { Context, Hono } from "hono";
import { renderSVG } from "uqr";
import { linkListQuery } from "../inputs/dashboard.ts";
import type { AppDeps } from "../services/deps.ts";
import { ApiError } from "../services/errors.ts";
import { getDashboardLink, listDashboardLinks } from "../services/links/dashboard.ts";
import { createManagedLink, deleteLink, updateLink } from "../services/links/manage.ts";
import { analyticsPanel } from "./analytics_routes.tsx";
import {
  emptyLinkForm,
  formText,
  linkFormValues,
  parseEditLinkForm,
  parseLinkForm,
} from "./forms.ts";
import { type EnvContext, formatCount, page, type PageKit } from "./kit.tsx";
import { envBase } from "./layout.tsx";
import {
  DeleteLinkPage,
  type ImportReport,
  LinkPage,
  LinksPage,
  NewLinkPage,
} from "./pages/links.tsx";
import { auditOf, type DashboardEnv } from "./security.ts";

/** What the links page shows besides the list: a notice, or an import's report. */
export interface LinksOutcome {
  notice?: string;
  importReport?: ImportReport;
}

/** The links page: a search and state filter, and what an import said (notice or report). */
export async function linksPage(
  deps: AppDeps,
  c: Context<DashboardEnv>,
  ctx: EnvContext,
  outcome: LinksOutcome = {},
): Promise<Response> {
  const query = linkListQuery.parse(c.req.query());
  const result = await listDashboardLinks(deps.sql, ctx.env.id, {
    search: query.q,
    page: query.page,
    state: query.state,
    now: deps.clock.now(),
  });
  return await page(
    c,
    <LinksPage
      {...ctx}
      search={query.q ?? ""}
      state={query.state ?? ""}
      page={result}
      {...outcome}
    />,
    outcome.importReport ? 400 : 200,
  );
}

/**
 * The list, the new-link form and everything under a link's path. The CSV routes
 * (link_csv_routes.tsx) are registered first: export.csv is not a link's path.
 */
export function linkPages(app: Hono<DashboardEnv>, deps: AppDeps, kit: PageKit): void {
  const { sql, clock } = deps;
  const { loadEnv } = kit;

  // GET /dashboard/environments/:project_id – the environment's first page, its links
  app.get("/environments/:project_id", async (c) => {
    const { env } = await loadEnv(c);
    return c.redirect(`${envBase(env.id)}/links`, 303);
  });

  // GET /dashboard/environments/:project_id/links – dashboard links, searched, filtered, paged
  app.get("/environments/:project_id/links", async (c) => {
    const ctx = await loadEnv(c);
    const imported = /^[0-9]{1,6}$/.test(c.req.query("imported") ?? "")
      ? Number(c.req.query("imported"))
      : undefined;
    const notice = imported !== undefined
      ? `${formatCount(imported, "link")} imported.`
      : c.req.query("deleted") === "1"
      ? "Link deleted. Its path will never be given to another link."
      : undefined;
    return await linksPage(deps, c, ctx, notice ? { notice } : {});
  });

  // GET /dashboard/environments/:project_id/links/new – the form with every generate_link field
  app.get("/environments/:project_id/links/new", async (c) => {
    const ctx = await loadEnv(c);
    return page(c, <NewLinkPage {...ctx} values={emptyLinkForm()} errors={{}} />);
  });

  // POST /dashboard/environments/:project_id/links – make a link
  app.post("/environments/:project_id/links", async (c) => {
    const ctx = await loadEnv(c);
    const { values, input, errors } = parseLinkForm(await c.req.parseBody());
    if (!input) return page(c, <NewLinkPage {...ctx} values={values} errors={errors} />, 400);
    try {
      const row = await createManagedLink(sql, ctx.env.id, input, "dashboard", auditOf(c));
      return c.redirect(`${envBase(ctx.env.id)}/links/${row.path}?created=1`, 303);
    } catch (err) {
      // A path taken (now or ever) or reserved: shown beside the field, as the others are.
      if (err instanceof ApiError && err.field === "path") {
        const errors = { path: err.message.replace(/^path: /, "") };
        return page(c, <NewLinkPage {...ctx} values={values} errors={errors} />, 400);
      }
      throw err;
    }
  });

  async function loadLink(c: Context<DashboardEnv>) {
    const ctx = await loadEnv(c);
    const link = await getDashboardLink(sql, ctx.env.id, c.req.param("path") ?? "", clock.now());
    if (!link) throw new ApiError("not_found", "There is no dashboard link at that path here.");
    return { ...ctx, link };
  }

  // GET /dashboard/environments/:project_id/links/:path – a link, its QR code and counters
  app.get("/environments/:project_id/links/:path", async (c) => {
    const ctx = await loadLink(c);
    const notice = c.req.query("created") === "1"
      ? "Link created."
      : c.req.query("changed") === "1"
      ? (ctx.link.active ? "Link activated." : "Link deactivated.")
      : c.req.query("edited") === "1"
      ? "Link saved."
      : c.req.query("archived") === "true"
      ? "Link archived: it answers 404 and leaves the lists until it is brought back."
      : c.req.query("archived") === "false"
      ? "Link brought back from the archive."
      : undefined;
    const base = `${envBase(ctx.env.id)}/links/${ctx.link.path}`;
    const panel = await analyticsPanel(deps, c, ctx.env.id, base, ctx.link.path);
    return page(
      c,
      <LinkPage
        {...ctx}
        notice={notice}
        analytics={panel.props}
      />,
      panel.status,
    );
  });

  // POST /dashboard/environments/:project_id/links/:path/active – activate or deactivate
  app.post("/environments/:project_id/links/:path/active", async (c) => {
    const { env, link } = await loadLink(c);
    const form = await c.req.parseBody();
    const active = formText(form, "active");
    if (active !== "true" && active !== "false") {
      throw new ApiError("invalid_field", "active: must be true or false");
    }
    await updateLink(sql, env.id, link.path, { active: active === "true" }, auditOf(c));
    return c.redirect(`${envBase(env.id)}/links/${link.path}?changed=1`, 303);
  });

  // GET /dashboard/environments/:project_id/links/:path/edit – every editable field
  app.get("/environments/:project_id/links/:path/edit", async (c) => {
    const ctx = await loadLink(c);
    return page(
      c,
      <NewLinkPage
        {...ctx}
        values={linkFormValues(ctx.link)}
        errors={{}}
        editing={ctx.link.path}
      />,
    );
  });

  // POST /dashboard/environments/:project_id/links/:path/edit – save the edit
  app.post("/environments/:project_id/links/:path/edit", async (c) => {
    const ctx = await loadLink(c);
    const { values, input, errors } = parseEditLinkForm(await c.req.parseBody());
    if (!input) {
      return page(
        c,
        <NewLinkPage {...ctx} values={values} errors={errors} editing={ctx.link.path} />,
        400,
      );
    }
    await updateLink(sql, ctx.env.id, ctx.link.path, input, auditOf(c));
    return c.redirect(`${envBase(ctx.env.id)}/links/${ctx.link.path}?edited=1`, 303);
  });

  // POST /dashboard/environments/:project_id/links/:path/archive – archive or bring back
  app.post("/environments/:project_id/links/:path/archive", async (c) => {
    const { env, link } = await loadLink(c);
    const archived = formText(await c.req.parseBody(), "archived");
    if (archived !== "true" && archived !== "false") {
      throw new ApiError("invalid_field", "archived: must be true or false");
    }
    await updateLink(sql, env.id, link.path, { archived: archived === "true" }, auditOf(c));
    return c.redirect(`${envBase(env.id)}/links/${link.path}?archived=${archived}`, 303);
  });

  // GET /dashboard/environments/:project_id/links/:path/delete – asks before deleting
  app.get("/environments/:project_id/links/:path/delete", async (c) => {
    const ctx = await loadLink(c);
    return page(c, <DeleteLinkPage {...ctx} />);
  });

  // POST /dashboard/environments/:project_id/links/:path/delete – the link and its counters go
  app.post("/environments/:project_id/links/:path/delete", async (c) => {
    const { env, link } = await loadLink(c);
    await deleteLink(sql, env.id, link.path, auditOf(c));
    return c.redirect(`${envBase(env.id)}/links?deleted=1`, 303);
  });

  // GET /dashboard/environments/:project_id/links/:path/qr.svg – the QR code (download=1 saves)
  app.get("/environments/:project_id/links/:path/qr.svg", async (c) => {
    const { link, linkUrl } = await loadLink(c);
    const svg = renderSVG(linkUrl(link.path), { border: 2 });
    const headers: Record<string, string> = {
      "Content-Type": "image/svg+xml; charset=utf-8",
      "Cache-Control": "private, no-cache",
    };
    if (c.req.query("download") === "1") {
      headers["Content-Disposition"] = `attachment; filename="qr-${link.path}.svg"`;
    }
    return c.body(svg, 200, headers);
  });
}
