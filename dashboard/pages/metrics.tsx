// Charts are SVG drawn here on the server: a few rectangles need no chart library, work without
// JavaScript, and obey the CSP (sizes are SVG attributes, colours come from the stylesheet).
import type { DashboardLinkRow } from "../../services/links/dashboard.ts";
import type { DayCounts } from "../../services/events_per_day.ts";
import { FEED_EVENT_TYPES } from "../../services/feed_envelope.ts";
import type { Environment } from "../../services/projects.ts";
import type { Session } from "../../services/sessions.ts";
import { Empty, envBase, envCrumbs, EnvHeader, formatNumber, Layout } from "../layout.tsx";

export function MetricsPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  links: DashboardLinkRow[];
  days: DayCounts[];
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
      <section class="card" aria-labelledby="chart-h">
        <h2 id="chart-h">Events per day, last {props.days.length} days</h2>
        <EventsChart days={props.days} />
      </section>
      <section class="card" aria-labelledby="views-h">
        <h2 id="views-h">Links by views</h2>
        {props.links.length === 0
          ? (
            <Empty title="No active dashboard links yet.">
              <p>
                <a href={`${base}/links/new`}>Make a link</a>{" "}
                and share it: its views show here, most viewed first.
              </p>
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

function EventsChart(props: { days: DayCounts[] }) {
  const days = props.days;
  const max = Math.max(0, ...days.map((d) => d.total));
  const total = days.reduce((n, d) => n + d.total, 0);
  if (total === 0) {
    return (
      <Empty title="No events in this period.">
        <p>
          Events your apps send (and views of your links) are counted here by the day they happened.
        </p>
      </Empty>
    );
  }
  const slot = 10;
  const height = 100;
  const used = FEED_EVENT_TYPES.filter((t) => days.some((d) => (d.counts[t] ?? 0) > 0));
  return (
    <div class="chart">
      <p class="muted">
        {formatNumber(total)} events · busiest day {formatNumber(max)}
      </p>
      <svg
        viewBox={`0 0 ${days.length * slot} ${height}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={`Events per day by type: ${formatNumber(total)} in ${days.length} days`}
      >
        <line class="gridline" x1="0" x2={days.length * slot} y1={height / 2} y2={height / 2} />
        <line class="gridline" x1="0" x2={days.length * slot} y1={height} y2={height} />
        {days.map((d, i) => {
          let y = height;
          return (
            <g>
              <title>{`${d.date}: ${d.total} events`}</title>
              {used.map((t) => {
                const n = d.counts[t] ?? 0;
                if (n === 0) return null;
                const h = (n / max) * (height - 4);
                y -= h;
                return (
                  <rect
                    class={`t-${t}`}
                    x={(i * slot + 1).toFixed(1)}
                    y={y.toFixed(2)}
                    width={(slot - 2).toFixed(1)}
                    height={h.toFixed(2)}
                  />
                );
              })}
            </g>
          );
        })}
      </svg>
      <div class="axis" aria-hidden="true">
        <span>{days[0]?.date}</span>
        <span>{days[days.length - 1]?.date}</span>
      </div>
      <ul class="legend">
        {used.map((t) => (
          <li>
            <svg viewBox="0 0 10 10" aria-hidden="true">
              <rect class={`t-${t}`} width="10" height="10" rx="2" />
            </svg>
            {t}
          </li>
        ))}
      </ul>
      <details>
        <summary>Show as a table</summary>
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                <th scope="col">Events</th>
                <th scope="col">By type</th>
              </tr>
            </thead>
            <tbody>
              {days.filter((d) => d.total > 0).map((d) => (
                <tr>
                  <td>{d.date}</td>
                  <td>{formatNumber(d.total)}</td>
                  <td>
                    {used.filter((t) => (d.counts[t] ?? 0) > 0)
                      .map((t) => `${t} ${d.counts[t]}`).join(", ")}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </div>
  );
}
