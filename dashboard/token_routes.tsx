// GET/POST /dashboard/environments/:project_id/tokens/… – an environment's feed tokens: the list,
// creating one (its value shown once) and revoking one.
import type { Hono } from "hono";
import type { AppDeps } from "../services/deps.ts";
import { ApiError } from "../services/errors.ts";
import { createFeedToken, listFeedTokens, revokeFeedToken } from "../services/feed/tokens.ts";
import { formText } from "./forms.ts";
import { nameInput, type PageKit } from "./kit.tsx";
import { envBase } from "./layout.tsx";
import { RevokeTokenPage, TokensPage } from "./pages/tokens.tsx";
import { auditOf, type DashboardEnv } from "./security.ts";

export function tokenPages(app: Hono<DashboardEnv>, deps: AppDeps, kit: PageKit): void {
  const { sql, clock } = deps;
  const { page, loadEnv } = kit;

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
    const name = nameInput.safeParse(formText(form, "name"));
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
}
