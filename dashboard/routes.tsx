// GET/POST /dashboard/… – the instance admin's web interface: server-rendered pages over the
// same services as the admin API (no SQL here), forms that work without JavaScript.
import { type Context, Hono } from "hono";
import { html } from "hono/html";
import { streamSSE } from "hono/streaming";
import type { HtmlEscapedString } from "hono/utils/html";
import { renderSVG } from "uqr";
import { z } from "zod";
import { linkListQuery, listQuery } from "../inputs/dashboard.ts";
import { text } from "../inputs/common.ts";
import { clientAddress } from "../inputs/headers.ts";
import {
  getDashboardLink,
  listDashboardLinks,
  topDashboardLinks,
} from "../services/links/dashboard.ts";
import type { AppDeps } from "../services/deps.ts";
import { ApiError, classifyError, ERROR_STATUS } from "../services/errors.ts";
import { planExport, streamExport } from "../services/analytics/history_export.ts";
import { readAdmittedPage } from "../services/feed/feed.ts";
import { LiveTails } from "../services/feed/live_tail.ts";
import { createFeedToken, listFeedTokens, revokeFeedToken } from "../services/feed/tokens.ts";
import { accessPath } from "../services/links/links.ts";
import { createManagedLink, deleteLink, updateLink } from "../services/links/manage.ts";
import { importLinks, ImportRefused } from "../services/links/csv.ts";
import { linkExportBody, MAX_IMPORT_BYTES, readImportRows } from "../inputs/link_csv.ts";
import { csrfTokenMatches } from "../services/access/sessions.ts";
import { describeError } from "../infra/log.ts";
import {
  createProject,
  getEnvironmentOrThrow,
  getProjectOrThrow,
  listProjects,
  regenerateProjectKey,
  updateProject,
} from "../services/projects/projects.ts";
import {
  sessionStands,
  signIn,
  signInWithPassword,
  signOut,
  startAccountSession,
} from "../services/access/sessions.ts";
import { completeSetup, setupLinkAccount } from "../services/access/accounts.ts";
import { authorize, authorizeProjectUpdate } from "../services/access/authorize.ts";
import { SetupPage } from "./pages/setup.tsx";
import { getAsset } from "./assets.ts";
import { accessPages } from "./access_routes.tsx";
import { analyticsPages, analyticsPanel, metricsBase } from "./analytics_routes.tsx";
import { destinationPages } from "./destination_routes.tsx";
import { settingsPages } from "./settings_routes.tsx";
import {
  emptyLinkForm,
  formText,
  linkFormValues,
  parseEditLinkForm,
  parseLinkForm,
} from "./forms.ts";
import { envBase } from "./layout.tsx";
import { ErrorPage } from "./pages/error.tsx";
import { ExportPage } from "./pages/export.tsx";
import { LivePage } from "./pages/live.tsx";
import {
  DeleteLinkPage,
  type ImportReport,
  LinkPage,
  LinksPage,
  NewLinkPage,
} from "./pages/links.tsx";
import { MetricsPage } from "./pages/metrics.tsx";
import { ProjectPage, ProjectsPage, RegenerateKeyPage } from "./pages/projects.tsx";
import { SignedInPage, SignInPage } from "./pages/signin.tsx";
import { RevokeTokenPage, TokensPage } from "./pages/tokens.tsx";
import { openUpload, UploadCut } from "./upload.ts";
import {
  auditOf,
  BASE,
  clearSessionCookie,
  CSRF_FIELD,
  type DashboardEnv,
  isCrossSite,
  isHttps,
  requireAccess,
  requireSameSiteForm,
  requireSession,
  securityHeaders,
  SESSION_COOKIE,
  setSessionCookie,
} from "./security.ts";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import {
  createOidcProvider,
  finishOidcLogin,
  LOGIN_TTL_MS,
  type OidcRefusal,
  OidcRefused,
  safeErrorFields,
  startOidcLogin,
} from "../services/access/oidc.ts";

/** The login under way with the OpenID Connect provider: its key, for the callback only. */
const OIDC_COOKIE = "dashboard_oidc";
const OIDC_COOKIE_PATH = `${BASE}/sign-in/oidc`;
const projectName = text(200).trim().min(1, "must not be empty");
const DAY_MS = 86_400_000;
/** How often an open live stream checks that its session still stands. */
const SESSION_CHECK_MS = 2_000;
const dateInput = z.iso.date("must be a date (YYYY-MM-DD)");

type Node = HtmlEscapedString | Promise<HtmlEscapedString>;

function page(
  c: Context,
  node: Node,
  status: 200 | 400 | 401 | 403 | 404 | 409 | 500 | 503 = 200,
) {
  return c.html(html`<!doctype html>${node}`, status);
}

/** "1 link", "2,000 links". */
function formatCount(n: number, noun: string): string {
  return `${n.toLocaleString("en-US")} ${noun}${n === 1 ? "" : "s"}`;
}

/** A service's message as a sentence: capitalised, with one full stop. */
function sentence(message: string): string {
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

export function dashboardRoutes(deps: AppDeps): Hono<DashboardEnv> {
  const { sql, clock, config } = deps;
  const app = new Hono<DashboardEnv>();
  const session = requireSession(deps);

  app.use("*", securityHeaders);

  // GET /dashboard/assets/:name – the stylesheet and script (versioned URLs, cached a year)
  app.get("/assets/:name", (c) => {
    const asset = getAsset(c.req.param("name"));
    if (!asset) return c.text("no such asset", 404);
    return c.body(asset.body, 200, {
      "Content-Type": asset.type,
      "Cache-Control": "public, max-age=31536000, immutable",
    });
  });

  const oidcProvider = config.oidc ? createOidcProvider(config.oidc) : null;
  const oidcName = config.oidc?.displayName;

  // GET /dashboard/sign-in – the sign-in form (straight to the projects when signed in)
  app.get("/sign-in", (c) => {
    return page(
      c,
      <SignInPage expired={c.req.query("expired") === "1"} oidcName={oidcName} />,
    );
  });

  /** The sign-in page with why an OpenID Connect login was refused. */
  const oidcRefusal = (c: Context<DashboardEnv>, err: OidcRefused) => {
    const name = oidcName ?? "the provider";
    const minutes = Math.ceil((err.retryAfter ?? 60) / 60);
    const why: Record<OidcRefusal, [string, 400 | 403 | 503]> = {
      started: [
        `Too many sign-ins with ${name} are under way. Try again in ${minutes} minutes, or sign in with your password.`,
        503,
      ],
      provider: [
        `${name} could not be reached. Try again later, or sign in with your password.`,
        503,
      ],
      cancelled: [`You were not signed in at ${name}.`, 403],
      expired: [
        "This sign-in was not started here, was already used or took too long. Start again.",
        400,
      ],
      invalid: [
        `The answer from ${name} failed a security check, so you were not signed in. Start again.`,
        403,
      ],
      unverified: [
        `${name} does not confirm that your email address is verified, so it cannot sign you in here. Verify the address there, or sign in with your password.`,
        403,
      ],
      unknown: [
        `No account here has the email address ${name} gave. Ask your instance's admin to add an account with that address.`,
        403,
      ],
      rate_limited: [
        `Too many failed sign-ins from your address. Try again in ${minutes} minutes.`,
        503,
      ],
    };
    const [message, status] = why[err.reason];
    if (err.retryAfter !== undefined) c.header("Retry-After", String(err.retryAfter));
    return page(c, <SignInPage error={message} oidcName={oidcName} />, status);
  };

  // GET /dashboard/sign-in/oidc – sends the browser to the OpenID Connect provider, with a
  // short-lived cookie that binds the login under way to this browser. A plain link, not a
  // form: the page's CSP (form-action 'self') would stop a form's redirect to the provider.
  app.get("/sign-in/oidc", async (c) => {
    if (!oidcProvider) {
      return page(c, <ErrorPage status={404} message="There is no such page." />, 404);
    }
    try {
      const { key, authorizationUrl } = await startOidcLogin(
        sql,
        clock,
        oidcProvider,
        clientAddress(c, config.trustProxy),
      );
      // Lax: the provider sends the browser back with a cross-site top-level GET.
      setCookie(c, OIDC_COOKIE, key, {
        path: OIDC_COOKIE_PATH,
        httpOnly: true,
        sameSite: "Lax",
        secure: isHttps(c, config),
        maxAge: LOGIN_TTL_MS / 1000,
      });
      return c.redirect(authorizationUrl.href, 303);
    } catch (err) {
      if (!(err instanceof OidcRefused)) throw err;
      if (err.reason === "started") {
        deps.logger.warn("oidc sign-in starts limited", { request_id: c.env.requestId });
      } else {
        deps.logger.warn("oidc provider unavailable", {
          request_id: c.env.requestId,
          ...safeErrorFields(err.cause),
        });
      }
      return oidcRefusal(c, err);
    }
  });

  // GET /dashboard/sign-in/oidc/callback – the provider's answer: a verified email of an account
  // signs in as it; anything else is refused, with no session. The login under way is used up
  // either way.
  app.get("/sign-in/oidc/callback", async (c) => {
    if (!oidcProvider) {
      return page(c, <ErrorPage status={404} message="There is no such page." />, 404);
    }
    const key = getCookie(c, OIDC_COOKIE);
    deleteCookie(c, OIDC_COOKIE, { path: OIDC_COOKIE_PATH, secure: isHttps(c, config) });
    try {
      const s = await finishOidcLogin(sql, clock, oidcProvider, deps.logger, {
        key,
        query: new URL(c.req.url).search,
        address: clientAddress(c, config.trustProxy),
        requestId: c.env.requestId,
      });
      setSessionCookie(c, s.token, config);
      // A page, not a redirect: this request came from the provider's site, and a browser that
      // follows a redirect from it may withhold the new SameSite=Strict session cookie on the
      // next request. A page of our own moving on to the dashboard is a same-site navigation.
      const name = s.principal.type === "account" ? s.principal.name : "";
      return page(c, <SignedInPage name={name} />);
    } catch (err) {
      if (!(err instanceof OidcRefused)) throw err;
      return oidcRefusal(c, err);
    }
  });

  // POST /dashboard/sign-in – email and password, or the admin token, in; session cookie out. The
  // admin token goes through the one admin-token check and its limit (shared with the REST admin
  // API); passwords have their own limit per address (services/access/password_limit.ts).
  app.post("/sign-in", async (c) => {
    if (isCrossSite(c)) return c.text("This request came from another site and was refused.", 403);
    const form = await c.req.parseBody();
    const withPassword = formText(form, "email") !== "";
    try {
      const s = withPassword
        ? await signInWithPassword(sql, clock, {
          email: formText(form, "email"),
          password: formText(form, "password"),
          address: clientAddress(c, config.trustProxy),
        })
        : await signIn(sql, clock, {
          adminToken: formText(form, "token").trim(),
          address: clientAddress(c, config.trustProxy),
          adminTokenHash: deps.adminTokenHash,
        });
      setSessionCookie(c, s.token, config);
      return c.redirect(BASE, 303);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.retryAfter !== undefined) c.header("Retry-After", String(err.retryAfter));
      const message = err.code === "rate_limited"
        ? (withPassword
          ? `Too many failed sign-ins from your address. Try again in ${
            Math.ceil((err.retryAfter ?? 60) / 60)
          } minutes.`
          : `Too many wrong tokens were tried. Try again in ${
            Math.ceil((err.retryAfter ?? 60) / 60)
          } minutes.`)
        : withPassword
        ? "That email and password do not match an account."
        : "That is not this instance's admin token.";
      return page(
        c,
        <SignInPage
          error={message}
          email={withPassword ? formText(form, "email") : undefined}
          oidcName={oidcName}
        />,
        err.code === "rate_limited" ? 503 : 401,
      );
    }
  });

  // GET /dashboard/setup?token=… – an account's setup link: choose a password
  app.get("/setup", async (c) => {
    const token = c.req.query("token") ?? "";
    const account = await setupLinkAccount(sql, clock, token);
    if (!account) return page(c, <SetupPage token="" />, 404);
    return page(c, <SetupPage token={token} account={account} />);
  });

  // POST /dashboard/setup – sets the password (the link then stops working) and signs in
  app.post("/setup", async (c) => {
    if (isCrossSite(c)) return c.text("This request came from another site and was refused.", 403);
    const form = await c.req.parseBody();
    const token = formText(form, "token");
    const password = formText(form, "password");
    const account = await setupLinkAccount(sql, clock, token);
    if (!account) return page(c, <SetupPage token="" />, 404);
    if (password !== formText(form, "confirm")) {
      return page(
        c,
        <SetupPage token={token} account={account} error="The two passwords differ." />,
        400,
      );
    }
    try {
      const done = await completeSetup(sql, clock, token, password, c.env.requestId);
      const s = await startAccountSession(sql, clock, done);
      setSessionCookie(c, s.token, config);
      return c.redirect(BASE, 303);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.code === "not_found") return page(c, <SetupPage token="" />, 404);
      return page(
        c,
        <SetupPage token={token} account={account} error={sentence(err.message)} />,
        400,
      );
    }
  });

  // Everything below needs a live session, and forms must come from the dashboard itself.
  const open = (path: string) =>
    path.startsWith("/assets/") || path === "/sign-in" || path === "/setup" ||
    path === "/sign-in/oidc" || path === "/sign-in/oidc/callback";
  app.use("*", async (c, next) => {
    if (open(c.req.path.slice(BASE.length))) return await next();
    return await session(c, next);
  });
  app.use("*", async (c, next) => {
    if (open(c.req.path.slice(BASE.length))) return await next();
    return await requireSameSiteForm(c, next);
  });
  // The permission table, for every page and form of a session.
  const access = requireAccess(deps);
  app.use("*", async (c, next) => {
    if (open(c.req.path.slice(BASE.length))) return await next();
    return await access(c, next);
  });

  // POST /dashboard/sign-out – ends the session on every instance at once
  app.post("/sign-out", async (c) => {
    const token = getCookie(c, SESSION_COOKIE);
    if (token) await signOut(sql, token);
    clearSessionCookie(c, config);
    return c.redirect(`${BASE}/sign-in`, 303);
  });

  /** The projects the session sees: every one for the instance admin, a person's own. */
  const visibleProjects = (c: Context<DashboardEnv>, search?: string) => {
    const principal = c.get("session").principal;
    return listProjects(sql, {
      search,
      memberOf: principal.type === "account" ? principal.id : undefined,
    });
  };

  // GET /dashboard – projects, searched by name
  app.get("/", async (c) => {
    const query = listQuery.parse(c.req.query());
    const projects = await visibleProjects(c, query.q);
    return page(
      c,
      <ProjectsPage session={c.get("session")} projects={projects} search={query.q ?? ""} />,
    );
  });

  // POST /dashboard/projects – create a project; its key is shown on the answer, once
  app.post("/projects", async (c) => {
    const form = await c.req.parseBody();
    const name = projectName.safeParse(formText(form, "name"));
    if (!name.success) {
      const projects = await visibleProjects(c);
      return page(
        c,
        <ProjectsPage
          session={c.get("session")}
          projects={projects}
          search=""
          name={formText(form, "name")}
          error={`Name ${name.error.issues[0]!.message}.`}
        />,
        400,
      );
    }
    const { project, projectKey } = await createProject(sql, {
      name: name.data,
      enterprise: formText(form, "enterprise") === "on",
    }, auditOf(c));
    return page(
      c,
      <ProjectPage
        session={c.get("session")}
        project={project}
        projectKey={projectKey}
        notice={`Project “${project.name}” created.`}
      />,
    );
  });

  // GET /dashboard/projects/:hashid – a project, its two environments and settings
  app.get("/projects/:hashid", async (c) => {
    const project = await getProjectOrThrow(sql, c.req.param("hashid"));
    const notice = c.req.query("saved") === "1" ? "Settings saved." : undefined;
    return page(
      c,
      <ProjectPage session={c.get("session")} project={project} {...notice && { notice }} />,
    );
  });

  // POST /dashboard/projects/:hashid – rename, Enterprise on or off
  app.post("/projects/:hashid", async (c) => {
    const hashid = c.req.param("hashid");
    const form = await c.req.parseBody();
    const name = projectName.safeParse(formText(form, "name"));
    if (!name.success) {
      const project = await getProjectOrThrow(sql, hashid);
      return page(
        c,
        <ProjectPage
          session={c.get("session")}
          project={project}
          error={`Name ${name.error.issues[0]!.message}.`}
        />,
        400,
      );
    }
    // Only the instance admin's form has the Enterprise switch; a member's leaves it as it is.
    const changes = {
      name: name.data,
      enterprise: c.get("session").principal.type === "admin_token"
        ? formText(form, "enterprise") === "on"
        : undefined,
    };
    await authorizeProjectUpdate(sql, c.get("session").principal, hashid, changes);
    await updateProject(sql, hashid, changes, auditOf(c));
    return c.redirect(`${BASE}/projects/${encodeURIComponent(hashid)}?saved=1`, 303);
  });

  // GET /dashboard/projects/:hashid/regenerate-key – asks before replacing the key
  app.get("/projects/:hashid/regenerate-key", async (c) => {
    const project = await getProjectOrThrow(sql, c.req.param("hashid"));
    return page(c, <RegenerateKeyPage session={c.get("session")} project={project} />);
  });

  // POST /dashboard/projects/:hashid/regenerate-key – new key, shown once; the old one stops
  app.post("/projects/:hashid/regenerate-key", async (c) => {
    const hashid = c.req.param("hashid");
    const projectKey = await regenerateProjectKey(sql, hashid, auditOf(c));
    const project = await getProjectOrThrow(sql, hashid);
    return page(
      c,
      <ProjectPage
        session={c.get("session")}
        project={project}
        projectKey={projectKey}
        notice="The project key was replaced; the old one no longer works."
      />,
    );
  });

  // POST /dashboard/projects/:hashid/apps[/remove] – link domain and apps
  settingsPages(app, deps, { page });

  async function loadEnv(c: Context<DashboardEnv>) {
    const env = await getEnvironmentOrThrow(sql, c.req.param("project_id") ?? "");
    const project = await getProjectOrThrow(sql, env.hashid);
    return { session: c.get("session"), env, projectName: project.name };
  }

  // GET /dashboard/environments/:project_id – the environment's first page, its links
  app.get("/environments/:project_id", async (c) => {
    const { env } = await loadEnv(c);
    return c.redirect(`${envBase(env.id)}/links`, 303);
  });

  // GET /dashboard/environments/:project_id/tokens – active feed tokens and the create form
  app.get("/environments/:project_id/tokens", async (c) => {
    const ctx = await loadEnv(c);
    const tokens = await listFeedTokens(sql, String(ctx.env.id));
    const notice = c.req.query("revoked") === "1" ? "The token was revoked." : undefined;
    return page(c, <TokensPage {...ctx} tokens={tokens} notice={notice} />);
  });

  // POST /dashboard/environments/:project_id/tokens – create a token, its value shown once
  app.post("/environments/:project_id/tokens", async (c) => {
    const ctx = await loadEnv(c);
    const form = await c.req.parseBody();
    const name = projectName.safeParse(formText(form, "name"));
    if (!name.success) {
      const tokens = await listFeedTokens(sql, String(ctx.env.id));
      return page(
        c,
        <TokensPage
          {...ctx}
          tokens={tokens}
          name={formText(form, "name")}
          error={`Name ${name.error.issues[0]!.message}.`}
        />,
        400,
      );
    }
    const created = await createFeedToken(
      sql,
      clock,
      String(ctx.env.id),
      name.data,
      auditOf(c),
    );
    const tokens = await listFeedTokens(sql, String(ctx.env.id));
    return page(c, <TokensPage {...ctx} tokens={tokens} created={created} />);
  });

  // GET /dashboard/environments/:project_id/tokens/:token_id/revoke – asks before revoking
  app.get("/environments/:project_id/tokens/:token_id/revoke", async (c) => {
    const ctx = await loadEnv(c);
    const tokens = await listFeedTokens(sql, String(ctx.env.id));
    const token = tokens.find((t) => String(t.id) === c.req.param("token_id"));
    if (!token) throw new ApiError("not_found", "There is no active feed token with that id.");
    return page(c, <RevokeTokenPage {...ctx} token={token} />);
  });

  // POST /dashboard/environments/:project_id/tokens/:token_id/revoke – the next read is a 401
  app.post("/environments/:project_id/tokens/:token_id/revoke", async (c) => {
    const { env } = await loadEnv(c);
    await revokeFeedToken(sql, clock, String(env.id), c.req.param("token_id"), auditOf(c));
    return c.redirect(`${envBase(env.id)}/tokens?revoked=1`, 303);
  });

  // …/destinations/… – push destinations, their delivery state, tests and secrets
  destinationPages(app, deps, { page, loadEnv });
  // …/metrics/analytics.csv and …/links/:path/analytics.csv – the analytics panels' figures
  analyticsPages(app, deps, { page, loadEnv });

  // …/api-keys, /projects/:hashid/members, …/audit, /accounts, /account – team access
  accessPages(app, deps, { page, loadEnv });

  /** The links page: a search and state filter, and what an import said (notice or report). */
  async function linksPage(
    c: Context<DashboardEnv>,
    ctx: Awaited<ReturnType<typeof loadEnv>>,
    outcome: { notice?: string; importReport?: ImportReport } = {},
  ) {
    const query = linkListQuery.parse(c.req.query());
    const result = await listDashboardLinks(sql, ctx.env.id, {
      search: query.q,
      page: query.page,
      state: query.state,
      now: clock.now(),
    });
    return page(
      c,
      <LinksPage
        {...ctx}
        search={query.q ?? ""}
        state={query.state ?? ""}
        page={result}
        linkBaseUrl={config.linkBaseUrl}
        {...outcome}
      />,
      outcome.importReport ? 400 : 200,
    );
  }

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
    return await linksPage(c, ctx, notice ? { notice } : {});
  });

  // POST /dashboard/environments/:project_id/links/import – a CSV file, all or nothing (the
  // admin API's import service). The body is streamed: the form token, which the form puts
  // before the file, is checked here as the body is read (security.ts leaves it to this route).
  app.post("/environments/:project_id/links/import", async (c) => {
    const ctx = await loadEnv(c);
    const upload = await openUpload(c.req.raw, {
      fileField: "file",
      accept: (fields) => csrfTokenMatches(ctx.session, fields[CSRF_FIELD]),
      maxFileBytes: MAX_IMPORT_BYTES,
    });
    if (!upload.ok) {
      if (upload.reason === "no_file") {
        return await linksPage(c, ctx, {
          importReport: { message: "Choose a CSV file to import.", errors: [] },
        });
      }
      return c.text(
        "This form has expired or was not sent from the dashboard. Reload the page and try again.",
        403,
      );
    }
    try {
      const { imported } = await importLinks(
        sql,
        ctx.env.id,
        readImportRows(upload.file),
        auditOf(c),
      );
      return c.redirect(`${envBase(ctx.env.id)}/links?imported=${imported}`, 303);
    } catch (err) {
      if (err instanceof ImportRefused) {
        return await linksPage(c, ctx, {
          importReport: { message: sentence(err.message), errors: err.errors },
        });
      }
      if (err instanceof ApiError && err.code === "payload_too_large") {
        return await linksPage(c, ctx, {
          importReport: {
            message: `${sentence(err.message)} Nothing was imported: split it into smaller files.`,
            errors: [],
          },
        });
      }
      if (err instanceof UploadCut) {
        return await linksPage(c, ctx, {
          importReport: {
            message: "The upload ended before the whole file arrived. Nothing was imported.",
            errors: [],
          },
        });
      }
      throw err;
    } finally {
      await upload.finish();
    }
  });

  // GET /dashboard/environments/:project_id/links/export.csv – the links listed here (archived
  // ones too) with their counters, streamed as the admin API's export is
  app.get("/environments/:project_id/links/export.csv", async (c) => {
    const { env } = await loadEnv(c);
    const requestId = c.env.requestId;
    const body = await linkExportBody(sql, env.id, {
      now: clock.now(),
      withSdkLinks: false,
      onError: (err) =>
        deps.logger.error("dashboard link export failed mid-stream", {
          request_id: requestId,
          ...describeError(err),
        }),
    });
    return c.body(body, 200, {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="links-${env.id}.csv"`,
    });
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
        linkBaseUrl={config.linkBaseUrl}
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
    return page(c, <DeleteLinkPage {...ctx} linkBaseUrl={config.linkBaseUrl} />);
  });

  // POST /dashboard/environments/:project_id/links/:path/delete – the link and its counters go
  app.post("/environments/:project_id/links/:path/delete", async (c) => {
    const { env, link } = await loadLink(c);
    await deleteLink(sql, env.id, link.path, auditOf(c));
    return c.redirect(`${envBase(env.id)}/links?deleted=1`, 303);
  });

  // GET /dashboard/environments/:project_id/links/:path/qr.svg – the QR code (download=1 saves)
  app.get("/environments/:project_id/links/:path/qr.svg", async (c) => {
    const { link } = await loadLink(c);
    const svg = renderSVG(accessPath(config.linkBaseUrl, link), { border: 2 });
    const headers: Record<string, string> = {
      "Content-Type": "image/svg+xml; charset=utf-8",
      "Cache-Control": "private, no-cache",
    };
    if (c.req.query("download") === "1") {
      headers["Content-Disposition"] = `attachment; filename="qr-${link.path}.svg"`;
    }
    return c.body(svg, 200, headers);
  });

  // GET /dashboard/environments/:project_id/metrics – the analytics panel (chosen range,
  // interval, zone, metrics and filters) and the links by views
  app.get("/environments/:project_id/metrics", async (c) => {
    const ctx = await loadEnv(c);
    const [links, panel] = await Promise.all([
      topDashboardLinks(sql, ctx.env.id, clock.now()),
      analyticsPanel(deps, c, ctx.env.id, metricsBase(ctx.env.id), null),
    ]);
    return page(c, <MetricsPage {...ctx} links={links} analytics={panel.props} />, panel.status);
  });

  const liveTails = deps.liveTails ?? new LiveTails(deps, { wakeup: null });

  // GET /dashboard/environments/:project_id/live – the environment's events as captured
  app.get("/environments/:project_id/live", async (c) => {
    const ctx = await loadEnv(c);
    return page(c, <LivePage {...ctx} />);
  });

  // GET /dashboard/environments/:project_id/live/stream – the same as Server-Sent Events, for
  // live.js: from the feed's head, or after the Last-Event-ID an EventSource resends.
  app.get("/environments/:project_id/live/stream", async (c) => {
    const { env } = await loadEnv(c);
    const lastEventId = c.req.header("Last-Event-ID");
    const after = lastEventId !== undefined && lastEventId !== "" ? lastEventId : undefined;
    if (after !== undefined) {
      // A cursor that is not this environment's is refused before the stream starts.
      try {
        await readAdmittedPage(sql, deps, env.id, { limit: 1, after });
      } catch (err) {
        if (err instanceof ApiError && ERROR_STATUS[err.code] === 400) {
          return c.text("Last-Event-ID is not a cursor of this environment.", 400);
        }
        throw err;
      }
    }
    const stream = await liveTails.openForAdmin(env.id, after);
    c.header("X-Accel-Buffering", "no");
    return streamSSE(c, async (sse) => {
      sse.onAbort(() => stream.close());
      stream.signal.addEventListener("abort", () => {
        setTimeout(() => sse.abort(), 1_000);
      }, { once: true });
      const keepalive = setInterval(() => void sse.write(": keep-alive\n\n"), 15_000);
      // The stream ends with its session (sign-out, 12 hours idle, the account removed) or the
      // person's right to live events here (removed from the project, demoted), checked every 2 s.
      const session = c.get("session");
      const stillAllowed = async () =>
        await sessionStands(sql, clock, session.token) &&
        await authorize(sql, session.principal, "events.live", { environmentId: env.id }).then(
          () => true,
          (err) => {
            if (err instanceof ApiError) return false;
            throw err;
          },
        );
      const sessionCheck = setInterval(() => {
        stillAllowed().then(
          (allowed) => allowed || stream.close(),
          () => {}, // the database is away: the next check, or the stream's own, decides
        );
      }, SESSION_CHECK_MS);
      try {
        await sse.write(": live\n\n");
        for await (const events of stream.pages) {
          for (const event of events) {
            await sse.writeSSE({ id: event.cursor, event: "feed_event", data: event.body });
          }
          if (sse.aborted) break;
        }
      } finally {
        clearInterval(keepalive);
        clearInterval(sessionCheck);
        stream.close();
      }
    });
  });

  function defaultRange() {
    const today = clock.now().toISOString().slice(0, 10);
    const weekAgo = new Date(clock.now().getTime() - 6 * DAY_MS).toISOString().slice(0, 10);
    return { from: weekAgo, to: today };
  }

  // GET /dashboard/environments/:project_id/export – the export form
  app.get("/environments/:project_id/export", async (c) => {
    const ctx = await loadEnv(c);
    return page(
      c,
      <ExportPage
        {...ctx}
        {...defaultRange()}
        types={[]}
        retentionDays={config.analyticsRetentionDays}
      />,
    );
  });

  // GET /dashboard/environments/:project_id/export.ndjson – the streamed download; the form's
  // days are UTC and inclusive, so `to` becomes the start of the next day.
  app.get("/environments/:project_id/export.ndjson", async (c) => {
    const ctx = await loadEnv(c);
    const fromRaw = c.req.query("from") ?? "";
    const toRaw = c.req.query("to") ?? "";
    const types = c.req.queries("types") ?? [];
    const again = (error: string) =>
      page(
        c,
        <ExportPage
          {...ctx}
          from={fromRaw}
          to={toRaw}
          types={types}
          retentionDays={config.analyticsRetentionDays}
          error={error}
        />,
        400,
      );
    const from = dateInput.safeParse(fromRaw);
    const to = dateInput.safeParse(toRaw);
    if (!from.success) return again("From must be a date.");
    if (!to.success) return again("To must be a date.");
    let plan;
    try {
      plan = await planExport(sql, String(ctx.env.id), {
        from: new Date(`${from.data}T00:00:00Z`),
        to: new Date(new Date(`${to.data}T00:00:00Z`).getTime() + DAY_MS),
        eventTypes: types,
      }, { now: clock.now(), analyticsRetentionDays: config.analyticsRetentionDays });
    } catch (err) {
      if (err instanceof ApiError && ERROR_STATUS[err.code] === 400) {
        return again(
          err.code === "invalid_field" && err.message.startsWith("to: must be later")
            ? "To must not be before From."
            : err.code === "invalid_field"
            ? "One export covers at most 31 days: narrow the range."
            : "Choose event types from the list.",
        );
      }
      throw err;
    }
    const requestId = c.env.requestId;
    const body = streamExport(sql, plan, {
      onError: (err) =>
        deps.logger.error("dashboard export failed mid-stream", {
          request_id: requestId,
          ...describeError(err),
        }),
    });
    const filename = `events-${ctx.env.id}-${from.data}-to-${to.data}.ndjson`;
    return c.body(body, 200, {
      "Content-Type": "application/x-ndjson; charset=UTF-8",
      "Content-Disposition": `attachment; filename="${filename}"`,
    });
  });

  // Anything else under /dashboard: an HTML 404, not the API's JSON one.
  app.get("*", (c) => {
    return page(
      c,
      <ErrorPage status={404} message="There is no such page." session={c.get("session")} />,
      404,
    );
  });

  // The pages' one error mapper: services/errors.ts classifies (as for REST and GraphQL), this
  // turns the result into an HTML page.
  app.onError((err, c) => {
    const e = classifyError(err);
    const httpStatus = ERROR_STATUS[e.code];
    // A page answers 402 as 403: browsers show no useful default for 402.
    const status = (httpStatus === 402
      ? 403
      : [400, 401, 403, 404, 503].includes(httpStatus)
      ? httpStatus
      : httpStatus >= 500
      ? 500
      : 400) as 400 | 401 | 403 | 404 | 500 | 503;
    const message = e.code === "enterprise_required"
      ? "This needs Enterprise access on the project: turn it on in the project's settings."
      : e.code === "unavailable"
      ? "The database is not answering. Try again in a moment."
      : e.code === "internal"
      ? "The dashboard hit an error. Try again; if it persists, check the server log."
      : sentence(e.message);
    if (e.retryAfter !== undefined) {
      c.header("Retry-After", String(e.retryAfter));
    }
    if (e.log !== "none") {
      deps.logger[e.log](`dashboard: ${e.logMessage ?? e.message}`, {
        request_id: c.env.requestId,
        ...describeError(err),
      });
    }
    return page(
      c,
      <ErrorPage status={status} message={message} session={c.get("session")} />,
      status,
    );
  });

  return app;
}
