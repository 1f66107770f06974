// GET/POST /dashboard/environments/:project_id/links/:path/rules – the rules editor (rules, split,
// forwarding, password) and the split results; GET …/qr and …/qr-image – the QR designer and its
// images. Over the same services and input schemas as the admin API's routes.
import type { Context, Hono } from "hono";
import { qrOptionsQuery } from "../inputs/qr.ts";
import type { AppDeps } from "../services/deps.ts";
import { ApiError } from "../services/errors.ts";
import { getDashboardLink } from "../services/links/dashboard.ts";
import { accessPath } from "../services/links/links.ts";
import { updateLink } from "../services/links/manage.ts";
import { checkColours, qrPng, qrSvg } from "../services/links/qr.ts";
import { getQrLogoOrThrow, hasQrLogo } from "../services/links/qr_logo.ts";
import { splitFigures, type SplitResults, splitResults } from "../services/links/split_results.ts";
import type { PageKit } from "./kit.tsx";
import { QrPage, RulesPage } from "./pages/link_rules.tsx";
import { applyOperation, draftFromForm, draftOf, draftToPatch } from "./rules_form.ts";
import { auditOf, type DashboardEnv, may } from "./security.ts";

export function linkRulesPages(app: Hono<DashboardEnv>, deps: AppDeps, kit: PageKit): void {
  const { sql, clock, config } = deps;
  const { page, loadEnv } = kit;
  const path = "/environments/:project_id/links/:path";

  async function loadLink(c: Context<DashboardEnv>) {
    const ctx = await loadEnv(c);
    const link = await getDashboardLink(sql, ctx.env.id, c.req.param("path") ?? "", clock.now());
    if (!link) throw new ApiError("not_found", "There is no dashboard link at that path here.");
    return { ...ctx, link };
  }

  /** Every split of the link with its results, for those who may read analytics. */
  async function resultsOf(ctx: Awaited<ReturnType<typeof loadLink>>): Promise<SplitResults[]> {
    const { link, session, env } = ctx;
    if (!may(session, "analytics.read")) return [];
    const splits = [
      ...(link.split ? [{ label: null, split: link.split }] : []),
      ...(link.rules ?? []).flatMap((r, i) =>
        r.split ? [{ label: r.name ?? i + 1, split: r.split }] : []
      ),
    ];
    if (splits.length === 0) return [];
    const figures = (await splitFigures(sql, env.id, [link.id])).get(link.id) ?? [];
    return splits.map((s) => splitResults(s.label, s.split, figures));
  }

  // GET …/links/:path/rules – the editor (or, for viewers, the rules as text) and the results
  app.get(`${path}/rules`, async (c) => {
    const ctx = await loadLink(c);
    return page(
      c,
      <RulesPage
        {...ctx}
        draft={draftOf(ctx.link)}
        results={await resultsOf(ctx)}
        notice={c.req.query("saved") === "1" ? "Rules saved." : undefined}
      />,
    );
  });

  // POST …/links/:path/rules – a button's change to the form (shown back, nothing saved), or
  // the save
  app.post(`${path}/rules`, async (c) => {
    const ctx = await loadLink(c);
    const form = await c.req.parseBody({ all: true });
    const draft = draftFromForm(form);
    const op = typeof form.op === "string" ? form.op : "save";
    if (op !== "save") {
      applyOperation(draft, op);
      return page(c, <RulesPage {...ctx} draft={draft} results={await resultsOf(ctx)} />);
    }
    const patch = draftToPatch(draft);
    if ("errors" in patch) {
      return page(
        c,
        <RulesPage {...ctx} draft={draft} errors={patch.errors} results={await resultsOf(ctx)} />,
        400,
      );
    }
    await updateLink(sql, ctx.env.id, ctx.link.path, patch.body, auditOf(c));
    return c.redirect(`${c.req.path}?saved=1`, 303);
  });

  // GET …/links/:path/qr – the QR designer: its options as a GET form, and the preview
  app.get(`${path}/qr`, async (c) => {
    const ctx = await loadLink(c);
    const q = c.req.query();
    const design = {
      format: "svg",
      size: q.size ?? "512",
      fg: q.fg ?? "#000000",
      bg: q.bg ?? "#ffffff",
      transparent: q.transparent === "on",
      margin: q.margin ?? "4",
      ecc: q.ecc ?? "M",
      logo: q.logo === "on",
    };
    let error: string | undefined;
    const parsed = qrOptionsQuery.safeParse({
      size: design.size,
      fg: design.fg,
      bg: design.transparent ? "transparent" : design.bg,
      margin: design.margin,
      ecc: design.ecc,
    });
    if (!parsed.success) {
      error = parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`).join("; ");
    } else {
      try {
        checkColours(parsed.data.fg, parsed.data.bg);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        error = err.message;
      }
    }
    return page(
      c,
      <QrPage
        {...ctx}
        linkUrl={accessPath(config.linkBaseUrl, ctx.link)}
        design={design}
        error={error}
        hasLogo={await hasQrLogo(sql, ctx.env.id)}
      />,
      error ? 400 : 200,
    );
  });

  // GET …/links/:path/qr-image – the code itself, as GET …/links/:link_path/qr draws it
  // (download=1 saves it)
  app.get(`${path}/qr-image`, async (c) => {
    const { link, env } = await loadLink(c);
    const options = qrOptionsQuery.parse(c.req.query());
    checkColours(options.fg, options.bg);
    const logo = options.logo ? await getQrLogoOrThrow(sql, env.id) : null;
    const url = accessPath(config.linkBaseUrl, link);
    const headers: Record<string, string> = {
      "Cache-Control": "private, no-cache",
      "Content-Security-Policy": "default-src 'none'; img-src data:; style-src 'unsafe-inline'",
    };
    if (c.req.query("download") === "1") {
      headers["Content-Disposition"] = `attachment; filename="qr-${link.path}.${options.format}"`;
    }
    if (options.format === "png") {
      return c.body(qrPng(url, { ...options, logo }) as Uint8Array<ArrayBuffer>, 200, {
        ...headers,
        "Content-Type": "image/png",
      });
    }
    return c.body(qrSvg(url, { ...options, logo }), 200, {
      ...headers,
      "Content-Type": "image/svg+xml",
    });
  });
}
