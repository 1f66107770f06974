// The environment's metrics page, the analytics panel's figures for it and each link's page, and
// their CSV downloads: everything through services/analytics (the REST route's parser and
// query), nothing read here directly.
import type { Context, Hono } from "hono";
import { answerableZones, parseAnalyticsParams } from "../services/analytics/params.ts";
import {
  type AnalyticsAnswer,
  type AnalyticsQuery,
  type Dimension,
  queryAnalytics,
} from "../services/analytics/query.ts";
import { parseFunnelParams, queryFunnel } from "../services/analytics/funnel.ts";
import { listLinksByIds } from "../services/links/links.ts";
import { csvText } from "../infra/csv_cells.ts";
import type { AppDeps } from "../services/deps.ts";
import { ApiError, ERROR_STATUS } from "../services/errors.ts";
import { getDashboardLink, topDashboardLinks } from "../services/links/dashboard.ts";
import {
  addDays,
  type AnalyticsForm,
  BREAKDOWN_LIMIT,
  BREAKDOWNS,
  DIMENSION_LABELS,
  formMetrics,
  readAnalyticsForm,
  serviceParams,
  todayIn,
} from "./analytics_form.ts";
import type { PageKit } from "./kit.tsx";
import { envBase } from "./layout.tsx";
import type { AnalyticsPanelProps, Breakdown } from "./pages/analytics.tsx";
import { MetricsPage } from "./pages/metrics.tsx";
import {
  type FunnelForm,
  type FunnelLinkInfo,
  FunnelPage,
  type FunnelPageProps,
  LIMITS,
} from "./pages/funnel.tsx";
import type { DashboardEnv } from "./security.ts";

/** The form's own words for a parameter a service message names. */
const FIELD_LABELS: Record<string, string> = {
  from: "From",
  to: "To",
  interval: "Interval",
  tz: "Time zone",
  metrics: "Metrics",
  link: "Link",
  limit: "Links",
};

/** A service's refusal as the sentence the panel shows. */
function refusal(err: ApiError): string {
  const m = /^([^:]+): (.*)$/s.exec(err.message);
  if (!m) return err.message;
  const [, field, rest] = m as unknown as [string, string, string];
  if (field === "to" && rest.startsWith("must be later than from")) {
    return "To must not be before From.";
  }
  const filter = /^filter\[(.*)\]$/.exec(field);
  const label = filter
    ? `Filter ${DIMENSION_LABELS[filter[1] as Dimension] ?? filter[1]}`
    : FIELD_LABELS[field] ?? field;
  const text = `${label}: ${rest}`;
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

interface Figures {
  series: AnalyticsAnswer;
  breakdowns: Breakdown[];
}

/** The series and every breakdown of `form` (a link's only, with `linkPath`). */
async function figures(
  deps: AppDeps,
  environmentId: number,
  form: AnalyticsForm,
  linkPath: string | null,
): Promise<Figures> {
  const query: AnalyticsQuery = await parseAnalyticsParams(
    deps.sql,
    environmentId,
    serviceParams(form, linkPath),
    deps.clock.now(),
  );
  const [series, ...groups] = await Promise.all([
    queryAnalytics(deps.sql, query),
    ...BREAKDOWNS.map((b) =>
      queryAnalytics(deps.sql, {
        ...query,
        interval: null,
        groupBy: b.dimension,
        limit: BREAKDOWN_LIMIT,
      })
    ),
  ]);
  return {
    series: series!,
    breakdowns: BREAKDOWNS.map((b, i) => ({ ...b, answer: groups[i]! })),
  };
}

/**
 * The panel of the page at `base` for the request's query: its figures, or the refusal of a
 * bad value shown beside the form (the status to answer with says which).
 */
export async function analyticsPanel(
  deps: AppDeps,
  c: Context<DashboardEnv>,
  environmentId: number,
  base: string,
  linkPath: string | null,
): Promise<{ props: AnalyticsPanelProps; status: 200 | 400 }> {
  const now = deps.clock.now();
  const form = readAnalyticsForm(c.req.queries(), now);
  const zones = await answerableZones(deps.sql, now);
  const common = { form, base, csvBase: `${base}/analytics.csv`, zones, now };
  try {
    const result = await figures(deps, environmentId, form, linkPath);
    return { props: { ...common, result }, status: 200 };
  } catch (err) {
    if (err instanceof ApiError && ERROR_STATUS[err.code] === 400) {
      return { props: { ...common, result: { error: refusal(err) } }, status: 400 };
    }
    throw err;
  }
}

/**
 * The panel's figures as one CSV: a header, then a row per bucket of the series (`series`), its
 * total (`total`) and a row per group of each breakdown (its dimension), with the group's share
 * of the first metric.
 */
export function analyticsCsv(form: AnalyticsForm, data: Figures): string {
  const metrics = formMetrics(form);
  const first = metrics[0]!;
  const figures = (f: Record<string, number>) => metrics.map((m) => f[m] ?? 0);
  const rows: (string | number)[][] = [["table", "key", "start", ...metrics, "share"]];
  for (const p of data.series.series ?? []) {
    rows.push(["series", "", p.start, ...figures(p), ""]);
  }
  rows.push(["total", "", data.series.from, ...figures(data.series.totals), ""]);
  for (const b of data.breakdowns) {
    const whole = b.answer.totals[first] ?? 0;
    for (const g of b.answer.groups ?? []) {
      const part = g.totals[first] ?? 0;
      rows.push([
        b.dimension,
        g.key ?? "",
        "",
        ...figures(g.totals),
        whole === 0 ? "" : (part / whole).toFixed(4),
      ]);
    }
  }
  return csvText(rows);
}

export function analyticsPages(app: Hono<DashboardEnv>, deps: AppDeps, kit: PageKit): void {
  const { page, loadEnv } = kit;

  // GET /dashboard/environments/:project_id/metrics – the analytics panel (chosen range,
  // interval, zone, metrics and filters) and the links by views
  app.get("/environments/:project_id/metrics", async (c) => {
    const ctx = await loadEnv(c);
    const [links, panel] = await Promise.all([
      topDashboardLinks(deps.sql, ctx.env.id, deps.clock.now()),
      analyticsPanel(deps, c, ctx.env.id, metricsBase(ctx.env.id), null),
    ]);
    return page(c, <MetricsPage {...ctx} links={links} analytics={panel.props} />, panel.status);
  });

  async function csv(
    c: Context<DashboardEnv>,
    environmentId: number,
    linkPath: string | null,
    name: string,
  ) {
    const form = readAnalyticsForm(c.req.queries(), deps.clock.now());
    let data: Figures;
    try {
      data = await figures(deps, environmentId, form, linkPath);
    } catch (err) {
      if (err instanceof ApiError && ERROR_STATUS[err.code] === 400) {
        return c.text(refusal(err), 400);
      }
      throw err;
    }
    const filename = `analytics-${name}-${form.from}-to-${form.to}.csv`
      .replace(/[^A-Za-z0-9._-]/g, "_");
    return c.body(analyticsCsv(form, data), 200, {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="${filename}"`,
    });
  }

  // GET /dashboard/environments/:project_id/funnel – "Top links by revenue": the environment's
  // funnel and its top links (services/analytics/funnel.ts)
  app.get("/environments/:project_id/funnel", async (c) => {
    const ctx = await loadEnv(c);
    const now = deps.clock.now();
    const base = `${envBase(ctx.env.id)}/funnel`;
    const query = c.req.queries();
    const one = (name: string) => {
      const v = query[name]?.[0];
      return v === undefined || v === "" ? undefined : v;
    };
    const tz = one("tz") ?? "UTC";
    const to = one("to") ?? todayIn(tz, now);
    const limit = one("limit") ?? LIMITS[0]!;
    const form: FunnelForm = { from: one("from") ?? addDays(to, -29), to, tz, limit };
    const today = todayIn(tz, now);
    const url = (f: FunnelForm) => `${base}?${new URLSearchParams({ ...f })}`;
    const presets = [7, 30, 90].map((days) => {
      const f = { ...form, from: addDays(today, 1 - days), to: today };
      return {
        label: `${days} days`,
        href: url(f),
        current: f.from === form.from && f.to === form.to,
      };
    });
    const zones = await answerableZones(deps.sql, now);
    let result: FunnelPageProps["result"];
    let status: 200 | 400 = 200;
    try {
      const q = await parseFunnelParams(deps.sql, ctx.env.id, {
        from: form.from,
        to: addDays(form.to, 1),
        tz: form.tz,
        group_by: "link",
        limit: form.limit,
      }, now);
      const funnel = await queryFunnel(deps.sql, q);
      const ids = (funnel.groups ?? []).map((g) => g.linkId);
      const rows = await listLinksByIds(deps.sql, ids, ["id", "path", "title", "sdk_generated"]);
      // Links made by apps (generate_link) have no page in the dashboard.
      const links = new Map<number, FunnelLinkInfo>(rows.map((r) => [r.id, {
        title: r.title,
        href: r.sdk_generated ? null : `${envBase(ctx.env.id)}/links/${encodeURIComponent(r.path)}`,
      }]));
      result = { funnel, links };
    } catch (err) {
      if (!(err instanceof ApiError && ERROR_STATUS[err.code] === 400)) throw err;
      result = { error: refusal(err) };
      status = 400;
    }
    return page(
      c,
      <FunnelPage
        {...ctx}
        base={base}
        form={form}
        zones={zones}
        presets={presets}
        result={result}
      />,
      status,
    );
  });

  // GET /dashboard/environments/:project_id/metrics/analytics.csv – what the metrics page shows
  app.get("/environments/:project_id/metrics/analytics.csv", async (c) => {
    const { env } = await loadEnv(c);
    return await csv(c, env.id, null, String(env.id));
  });

  // GET /dashboard/environments/:project_id/links/:path/analytics.csv – what the link's page shows
  app.get("/environments/:project_id/links/:path/analytics.csv", async (c) => {
    const { env } = await loadEnv(c);
    const link = await getDashboardLink(deps.sql, env.id, c.req.param("path"), deps.clock.now());
    if (!link) throw new ApiError("not_found", "There is no dashboard link at that path here.");
    return await csv(c, env.id, link.path, `${env.id}-${link.path}`);
  });
}

/** The metrics page's path. */
export function metricsBase(environmentId: number): string {
  return `${envBase(environmentId)}/metrics`;
}
