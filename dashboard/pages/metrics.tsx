// The environment's metrics: the analytics panel (./analytics.tsx) and its links by lifetime
// views. Bars and charts are SVG drawn here on the server: a few rectangles need no chart
// library, work without JavaScript, and obey the CSP (sizes are SVG attributes, colours come
// from the stylesheet).
import type { DashboardLinkRow } from "../../services/links/dashboard.ts";
import type { Environment } from "../../services/projects/projects.ts";
import type { Session } from "../../services/access/sessions.ts";
import { AnalyticsPanel, type AnalyticsPanelProps } from "./analytics.tsx";
import { Empty, envBase, envCrumbs, EnvHeader, formatNumber, Layout } from "../layout.tsx";
import { may } from "../security.ts";

export function MetricsPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  links: DashboardLinkRow[];
  analytics: AnalyticsPanelProps;
}) {
  const base = envBase(props.env.id);
  const maxViews = Math.max(1, ...props.links.map((l) => l.counters.total_views));
  return (
    <Layout
      title="Metrics"
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, "Metrics")}
    >
      <EnvHeader
        session={props.session}
        env={props.env}
        projectName={props.projectName}
        active="metrics"
      />
      <p class="page-links">
        <a href={`${base}/funnel`}>Top links by revenue</a>{" "}
        <span class="muted">
          – the funnel from views to installs, purchasers and revenue, per link.
        </span>
      </p>
      <AnalyticsPanel {...props.analytics} />
      <section class="card" aria-labelledby="views-h">
        <h2 id="views-h">Links by views, since they were made</h2>
        {props.links.length === 0
          ? (
            <Empty title="No active dashboard links yet.">
              {may(props.session, "links.write")
                ? (
                  <p>
                    <a href={`${base}/links/new`}>Make a link</a>{" "}
                    and share it: its views show here, most viewed first.
                  </p>
                )
                : <p>Once links are made and shared, their views show here, most viewed first.</p>}
            </Empty>
          )
          : (
            <ol class="bars">
              {props.links.map((l) => {
                const width = (l.counters.total_views / maxViews) * 100;
                return (
                  <li>
                    <a class="name" href={`${base}/links/${l.path}`}>{l.title || l.path}</a>
                    <svg viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
                      <rect class="bar-track" x="0" y="0" width="100" height="10" rx="2" />
                      <rect
                        class="bar-fill"
                        x="0"
                        y="0"
                        width={width.toFixed(2)}
                        height="10"
                        rx="2"
                      />
                    </svg>
                    <span class="num">{formatNumber(l.counters.total_views)}</span>
                  </li>
                );
              })}
            </ol>
          )}
      </section>
    </Layout>
  );
}
