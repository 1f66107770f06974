// GET/POST /dashboard/… – team access: an environment's API keys, a project's members, the audit
// logs, the instance's accounts and a person's own account, over the same services as the REST
// routes (rest/access_routes.ts). Each page's permission is checked before it runs
// (security.ts's requireAccess, from services/access/routes.ts).
import type { Context, Hono } from "hono";
import { getCookie } from "hono/cookie";
import { clientAddress } from "../inputs/headers.ts";
import { DEVICE_COOKIE, verifiedDevice } from "../services/access/devices.ts";
import { createApiKeyBody } from "../inputs/access.ts";
import {
  changePassword,
  createAccount,
  deleteAccount,
  findAccountByEmail,
  listAccounts,
} from "../services/access/accounts.ts";
import { createApiKey, listApiKeys, revokeApiKey } from "../services/access/api_keys.ts";
import { listAudit, parseAuditPage } from "../services/access/audit.ts";
import { listMembers, removeMember, setMemberRole } from "../services/access/members.ts";
import { revokeEverythingMadeBy } from "../services/access/revoke_made.ts";
import { ROLES } from "../services/access/permissions.ts";
import type { AppDeps } from "../services/deps.ts";
import { ApiError } from "../services/errors.ts";
import { getProjectOrThrow } from "../services/projects/projects.ts";
import { type PageKit, sentence } from "./kit.tsx";
import { formText } from "./forms.ts";
import { envBase } from "./layout.tsx";
import {
  AccountPage,
  AccountsPage,
  ApiKeysPage,
  AuditPage,
  MembersPage,
  RemoveAccountPage,
  RemoveMemberPage,
  RevokeApiKeyPage,
  RevokeMadePage,
} from "./pages/access.tsx";
import { auditOf, BASE, type DashboardEnv, isHttps, may, SESSION_COOKIE } from "./security.ts";

export function accessPages(
  app: Hono<DashboardEnv>,
  deps: AppDeps,
  kit: PageKit,
): void {
  const { sql, clock, config } = deps;
  const { page, loadEnv } = kit;

  // GET /dashboard/environments/:project_id/api-keys – the keys and the create form
  app.get("/environments/:project_id/api-keys", async (c) => {
    const ctx = await loadEnv(c);
    const keys = await listApiKeys(sql, String(ctx.env.id));
    const notice = c.req.query("revoked") === "1" ? "The key was revoked." : undefined;
    return page(c, <ApiKeysPage {...ctx} keys={keys} notice={notice} />);
  });

  // POST /dashboard/environments/:project_id/api-keys – create a key, its value shown once
  app.post("/environments/:project_id/api-keys", async (c) => {
    const ctx = await loadEnv(c);
    const form = await c.req.parseBody({ all: true });
    const scopes = [form["scopes"] ?? []].flat().filter((s) => typeof s === "string");
    const expires = formText(form, "expires_at");
    const parsed = createApiKeyBody.safeParse({
      name: formText(form, "name"),
      scopes,
      expires_at: expires === "" ? null : `${expires}T00:00:00Z`,
    });
    const again = async (error: string) =>
      page(
        c,
        <ApiKeysPage
          {...ctx}
          keys={await listApiKeys(sql, String(ctx.env.id))}
          name={formText(form, "name")}
          error={error}
        />,
        400,
      );
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = String(issue.path[0] ?? "");
      return again(
        field === "scopes"
          ? "Choose at least one scope."
          : field === "expires_at"
          ? "The expiry must be a date."
          : `Name ${issue.message}.`,
      );
    }
    let created;
    try {
      created = await createApiKey(
        sql,
        clock,
        c.get("session").principal,
        String(ctx.env.id),
        parsed.data,
        auditOf(c),
      );
    } catch (err) {
      if (err instanceof ApiError && err.code !== "not_found") return again(sentence(err.message));
      throw err;
    }
    const keys = await listApiKeys(sql, String(ctx.env.id));
    return page(c, <ApiKeysPage {...ctx} keys={keys} created={created} />);
  });

  async function findKey(c: Context<DashboardEnv>, envId: number) {
    const key = (await listApiKeys(sql, String(envId)))
      .find((k) => String(k.id) === c.req.param("key_id"));
    if (!key) throw new ApiError("not_found", "There is no such API key here.");
    return key;
  }

  // GET /dashboard/environments/:project_id/api-keys/:key_id/revoke – asks before revoking
  app.get("/environments/:project_id/api-keys/:key_id/revoke", async (c) => {
    const ctx = await loadEnv(c);
    return page(c, <RevokeApiKeyPage {...ctx} apiKey={await findKey(c, ctx.env.id)} />);
  });

  // POST /dashboard/environments/:project_id/api-keys/:key_id/revoke – the next use is a 401
  app.post("/environments/:project_id/api-keys/:key_id/revoke", async (c) => {
    const { env } = await loadEnv(c);
    await revokeApiKey(sql, clock, String(env.id), c.req.param("key_id"), auditOf(c));
    return c.redirect(`${envBase(env.id)}/api-keys?revoked=1`, 303);
  });

  const membersPath = "/projects/:hashid/members";
  const membersUrl = (hashid: string) => `${BASE}/projects/${encodeURIComponent(hashid)}/members`;

  // GET /dashboard/projects/:hashid/members – members, their roles, the add form
  app.get(membersPath, async (c) => {
    const project = await getProjectOrThrow(sql, c.req.param("hashid"));
    const members = await listMembers(sql, project.id);
    const notice = c.req.query("saved") === "1"
      ? "Saved."
      : c.req.query("removed") === "1"
      ? "The member was removed."
      : undefined;
    return page(
      c,
      <MembersPage
        session={c.get("session")}
        project={project}
        members={members}
        notice={notice}
      />,
    );
  });

  // POST /dashboard/projects/:hashid/members – add an account by email, or change a role
  app.post(membersPath, async (c) => {
    const project = await getProjectOrThrow(sql, c.req.param("hashid"));
    const form = await c.req.parseBody();
    const email = formText(form, "email");
    const role = ROLES.find((r) => r === formText(form, "role"));
    const again = async (error: string, status: 400 | 404 | 409 = 400) =>
      page(
        c,
        <MembersPage
          session={c.get("session")}
          project={project}
          members={await listMembers(sql, project.id)}
          error={error}
          email={email}
          role={role}
        />,
        status,
      );
    if (!role) return again("Choose a role.");
    const account = await findAccountByEmail(sql, email);
    if (!account) {
      return again("There is no account with this email: the instance admin creates accounts.");
    }
    try {
      await setMemberRole(
        sql,
        project.id,
        String(account.id),
        role,
        c.get("session").principal,
        auditOf(c),
      );
    } catch (err) {
      if (err instanceof ApiError && err.code === "conflict") {
        return again(sentence(err.message), 409);
      }
      throw err;
    }
    return c.redirect(`${membersUrl(project.id)}?saved=1`, 303);
  });

  // GET /dashboard/projects/:hashid/members/:account_id/remove – asks before removing
  app.get(`${membersPath}/:account_id/remove`, async (c) => {
    const project = await getProjectOrThrow(sql, c.req.param("hashid"));
    const member = (await listMembers(sql, project.id))
      .find((m) => String(m.account_id) === c.req.param("account_id"));
    if (!member) throw new ApiError("not_found", "There is no such member of this project.");
    if (member.role === "owner" && !may(c.get("session"), "members.owners")) {
      throw new ApiError("forbidden", "Only an owner may remove an owner.");
    }
    return page(
      c,
      <RemoveMemberPage session={c.get("session")} project={project} member={member} />,
    );
  });

  // POST /dashboard/projects/:hashid/members/:account_id/remove – remove a member
  app.post(`${membersPath}/:account_id/remove`, async (c) => {
    const project = await getProjectOrThrow(sql, c.req.param("hashid"));
    try {
      await removeMember(
        sql,
        clock,
        project.id,
        c.req.param("account_id"),
        c.get("session").principal,
        auditOf(c),
      );
    } catch (err) {
      if (err instanceof ApiError && err.code === "conflict") {
        return page(
          c,
          <MembersPage
            session={c.get("session")}
            project={project}
            members={await listMembers(sql, project.id)}
            error={sentence(err.message)}
          />,
          409,
        );
      }
      throw err;
    }
    return c.redirect(`${membersUrl(project.id)}?removed=1`, 303);
  });

  // GET /dashboard/projects/:hashid/audit – the project's audit log, newest first
  app.get("/projects/:hashid/audit", async (c) => {
    const project = await getProjectOrThrow(sql, c.req.param("hashid"));
    const [row] = await sql<{ id: number }[]>`select id from projects where hashid = ${project.id}`;
    const result = await listAudit(sql, row!.id, parseAuditPage({ after: c.req.query("after") }));
    return page(
      c,
      <AuditPage
        session={c.get("session")}
        title={`Audit log of ${project.name}`}
        crumbs={[
          { label: "Projects", href: BASE },
          { label: project.name, href: `${BASE}/projects/${project.id}` },
          { label: "Audit log" },
        ]}
        entries={result.entries}
        next={result.next_after}
        base={`${BASE}/projects/${project.id}/audit`}
      />,
    );
  });

  // GET /dashboard/audit – the whole instance's audit log
  app.get("/audit", async (c) => {
    const result = await listAudit(sql, null, parseAuditPage({ after: c.req.query("after") }));
    return page(
      c,
      <AuditPage
        session={c.get("session")}
        title="Audit log"
        crumbs={[{ label: "Projects", href: BASE }, { label: "Audit log" }]}
        entries={result.entries}
        next={result.next_after}
        base={`${BASE}/audit`}
      />,
    );
  });

  /** Where a person opens the dashboard, for their setup link. */
  const origin = (c: Context<DashboardEnv>) => {
    const url = new URL(c.req.url);
    if (isHttps(c, config)) url.protocol = "https:";
    const host = config.trustProxy ? c.req.header("X-Forwarded-Host")?.split(",")[0]?.trim() : "";
    if (host && /^[A-Za-z0-9.:[\]-]{1,300}$/.test(host)) url.host = host;
    return url.origin;
  };

  // GET /dashboard/accounts – every account, and the create form (instance admin)
  app.get("/accounts", async (c) => {
    const notice = c.req.query("removed") === "1" ? "The account was removed." : undefined;
    return page(
      c,
      <AccountsPage
        session={c.get("session")}
        accounts={await listAccounts(sql)}
        notice={notice}
      />,
    );
  });

  // POST /dashboard/accounts – an account; its setup link shown once
  app.post("/accounts", async (c) => {
    const form = await c.req.parseBody();
    const values = { email: formText(form, "email").trim(), name: formText(form, "name").trim() };
    const again = async (error: string, status: 400 | 409 = 400) =>
      page(
        c,
        <AccountsPage
          session={c.get("session")}
          accounts={await listAccounts(sql)}
          error={error}
          values={values}
        />,
        status,
      );
    if (!values.name || values.name.length > 200) {
      return again("Give a name (200 characters at most).");
    }
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(values.email) || values.email.length > 320) {
      return again("Give an email address.");
    }
    try {
      const { account, setupToken } = await createAccount(sql, clock, values, auditOf(c));
      const setupUrl = `${origin(c)}${BASE}/setup?token=${encodeURIComponent(setupToken)}`;
      return page(
        c,
        <AccountsPage
          session={c.get("session")}
          accounts={await listAccounts(sql)}
          created={{ account, setupUrl }}
        />,
      );
    } catch (err) {
      if (err instanceof ApiError && err.code === "conflict") {
        return again(sentence(err.message), 409);
      }
      throw err;
    }
  });

  // GET /dashboard/accounts/:account_id/revoke-made – asks before revoking all they made
  app.get("/accounts/:account_id/revoke-made", async (c) => {
    const account = (await listAccounts(sql))
      .find((a) => String(a.id) === c.req.param("account_id"));
    if (!account) throw new ApiError("not_found", "There is no such account.");
    return page(c, <RevokeMadePage session={c.get("session")} account={account} />);
  });

  // POST /dashboard/accounts/:account_id/revoke-made – their keys, tokens and destinations stop
  app.post("/accounts/:account_id/revoke-made", async (c) => {
    const account = (await listAccounts(sql))
      .find((a) => String(a.id) === c.req.param("account_id"));
    if (!account) throw new ApiError("not_found", "There is no such account.");
    const r = await revokeEverythingMadeBy(sql, clock, String(account.id), auditOf(c));
    const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
    return page(
      c,
      <AccountsPage
        session={c.get("session")}
        accounts={await listAccounts(sql)}
        notice={`Revoked what ${account.name} made: ${
          count(r.api_keys, "API key", "API keys")
        } and ${count(r.feed_tokens, "feed token", "feed tokens")} revoked, ${
          count(r.destinations_paused, "destination", "destinations")
        } paused.`}
      />,
    );
  });

  // GET /dashboard/accounts/:account_id/remove – asks before removing
  app.get("/accounts/:account_id/remove", async (c) => {
    const account = (await listAccounts(sql))
      .find((a) => String(a.id) === c.req.param("account_id"));
    if (!account) throw new ApiError("not_found", "There is no such account.");
    return page(c, <RemoveAccountPage session={c.get("session")} account={account} />);
  });

  // POST /dashboard/accounts/:account_id/remove – its sessions and keys stop at once
  app.post("/accounts/:account_id/remove", async (c) => {
    try {
      await deleteAccount(sql, clock, c.req.param("account_id"), auditOf(c));
    } catch (err) {
      if (err instanceof ApiError && err.code === "conflict") {
        return page(
          c,
          <AccountsPage
            session={c.get("session")}
            accounts={await listAccounts(sql)}
            error={sentence(err.message)}
          />,
          409,
        );
      }
      throw err;
    }
    return c.redirect(`${BASE}/accounts?removed=1`, 303);
  });

  // GET /dashboard/account – the signed-in person's account: change the password
  app.get("/account", (c) => {
    const notice = c.req.query("saved") === "1" ? "Your password was changed." : undefined;
    return page(c, <AccountPage session={c.get("session")} notice={notice} />);
  });

  // POST /dashboard/account – change the password (the current one first); other sessions end
  app.post("/account", async (c) => {
    const session = c.get("session");
    const principal = session.principal;
    if (principal.type !== "account") {
      throw new ApiError("forbidden", "the admin token has no password to change");
    }
    const form = await c.req.parseBody();
    const again = (error: string) => page(c, <AccountPage session={session} error={error} />, 400);
    if (formText(form, "password") !== formText(form, "confirm")) {
      return again("The two new passwords differ.");
    }
    try {
      await changePassword(sql, clock, principal, {
        current: formText(form, "current"),
        next: formText(form, "password"),
        keepSessionToken: getCookie(c, SESSION_COOKIE) ?? "",
        address: clientAddress(c, config.trustProxy),
        device: verifiedDevice(
          deps.cursorSecret,
          getCookie(c, DEVICE_COOKIE),
          principal.email,
          clock.now(),
        ),
      }, c.env.requestId);
    } catch (err) {
      if (err instanceof ApiError && err.code === "invalid_field") {
        return again(sentence(err.message));
      }
      if (err instanceof ApiError && err.code === "rate_limited") {
        const seconds = err.retryAfter ?? 60;
        c.header("Retry-After", String(seconds));
        return page(
          c,
          <AccountPage
            session={session}
            error={`Too many wrong passwords were tried. Try again in ${
              Math.ceil(seconds / 60)
            } minutes.`}
          />,
          503,
        );
      }
      throw err;
    }
    return c.redirect(`${BASE}/account?saved=1`, 303);
  });
}
