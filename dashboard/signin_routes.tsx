// GET/POST /dashboard/sign-in…, /dashboard/setup and POST /dashboard/sign-out – how a person or
// the instance admin gets a session and ends it: password, admin token, OpenID Connect, and an
// account's setup link. Every page here but sign-out is open (no session needed).
import type { Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { clientAddress } from "../inputs/headers.ts";
import { completeSetup, setupLinkAccount } from "../services/access/accounts.ts";
import {
  createOidcProvider,
  finishOidcLogin,
  LOGIN_TTL_MS,
  type OidcRefusal,
  OidcRefused,
  safeErrorFields,
  startOidcLogin,
} from "../services/access/oidc.ts";
import type { AppDeps } from "../services/deps.ts";
import { ApiError } from "../services/errors.ts";
import {
  type Session,
  signIn,
  signInWithPassword,
  signOut,
  startAccountSession,
} from "../services/access/sessions.ts";
import { DEVICE_COOKIE, deviceCookieFor, verifiedDevice } from "../services/access/devices.ts";
import { formText } from "./forms.ts";
import { page, sentence } from "./kit.tsx";
import { ErrorPage } from "./pages/error.tsx";
import { SetupPage } from "./pages/setup.tsx";
import { SignedInPage, SignInPage } from "./pages/signin.tsx";
import {
  BASE,
  clearSessionCookie,
  type DashboardEnv,
  isCrossSite,
  isHttps,
  SESSION_COOKIE,
  setDeviceCookie,
  setSessionCookie,
} from "./security.ts";

/** The login under way with the OpenID Connect provider: its key, for the callback only. */
const OIDC_COOKIE = "dashboard_oidc";
const OIDC_COOKIE_PATH = `${BASE}/sign-in/oidc`;

/** The paths (below /dashboard) that need no session: signing in and setting a password. */
export function isOpenPath(path: string): boolean {
  return path === "/sign-in" || path === "/setup" || path === "/sign-in/oidc" ||
    path === "/sign-in/oidc/callback";
}

/** The open pages: sign-in (password, admin token, OpenID Connect) and an account's setup. */
export function signInPages(app: Hono<DashboardEnv>, deps: AppDeps): void {
  const { sql, clock, config } = deps;
  // A person who proved who they are (password, setup link, OIDC) gets a device cookie: their
  // later password attempts from this browser count apart from the account's
  // (services/access/devices.ts). The instance admin's sessions get none.
  const markDevice = (c: Context, s: Session) => {
    if (s.principal.type !== "account") return;
    setDeviceCookie(c, deviceCookieFor(deps.cursorSecret, s.principal.email, clock.now()), config);
  };
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
      markDevice(c, s);
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
  // API); passwords have their own limits per address and per account
  // (services/access/password_limit.ts).
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
          device: verifiedDevice(
            deps.cursorSecret,
            getCookie(c, DEVICE_COOKIE),
            formText(form, "email"),
            clock.now(),
          ),
        })
        : await signIn(sql, clock, {
          adminToken: formText(form, "token").trim(),
          address: clientAddress(c, config.trustProxy),
          adminTokenHash: deps.adminTokenHash,
        });
      setSessionCookie(c, s.token, config);
      markDevice(c, s);
      return c.redirect(BASE, 303);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.retryAfter !== undefined) c.header("Retry-After", String(err.retryAfter));
      const message = err.code === "rate_limited"
        ? (withPassword
          ? `Too many failed sign-ins ${
            err.message.includes("account") ? "for this account" : "from your address"
          }. Try again in ${Math.ceil((err.retryAfter ?? 60) / 60)} minutes.`
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
      markDevice(c, s);
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
}

/** POST /dashboard/sign-out, behind the session check. */
export function signOutPage(app: Hono<DashboardEnv>, deps: AppDeps): void {
  const { sql, config } = deps;
  // POST /dashboard/sign-out – ends the session on every instance at once
  app.post("/sign-out", async (c) => {
    const token = getCookie(c, SESSION_COOKIE);
    if (token) await signOut(sql, token);
    clearSessionCookie(c, config);
    return c.redirect(`${BASE}/sign-in`, 303);
  });
}
