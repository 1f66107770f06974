// "Top links by revenue": the environment's funnel over a range (views, installs, purchasers,
// purchases, revenue, each step's rate, the median time from click to install) as a chart of
// bars, and the top links by revenue with their own funnels, all from services/analytics/funnel.ts.
// The chart is SVG drawn here, as the metrics page's bars: no script, sizes as attributes,
// colours from the stylesheet; the figures beside it say the same in text.
import type { FunnelFigures, FunnelResult } from "../../services/analytics/funnel.ts";
import type { Session } from "../../services/access/sessions.ts";
import type { Environment } from "../../services/projects/projects.ts";
import { formatDuration, formatMoney } from "../analytics_form.ts";
import { Empty, envCrumbs, EnvHeader, formatNumber, Layout, Notice } from "../layout.tsx";
import { ScrollNote, share } from "./analytics.tsx";

/** The page's form: days as the person picks them (`to` inclusive), the zone, how many links. */
export interface FunnelForm {
  from: string;
  to: string;
  tz: string;
  limit: string;
}

/** A listed link as the table shows it: its title, and its page when the dashboard has one. */
export interface FunnelLinkInfo {
  title: string;
  href: string | null;
}

export interface FunnelPageProps {
  session: Session;
  env: Environment;
  projectName: string;
  base: string;
  form: FunnelForm;
  zones: string[];
  presets: { label: string; href: string; current: boolean }[];
  result: { funnel: FunnelResult; links: Map<number, FunnelLinkInfo> } | { error: string };
}

export const LIMITS = ["10", "25", "50", "100"];

/** A rate as a percentage with one decimal; "–" when there is nothing to divide by. */
function percent(rate: number | null): string {
  return rate === null ? "–" : `${(Math.round(rate * 1000) / 10).toFixed(1)}%`;
}

function perPurchaser(rate: number | null): string {
  return rate === null ? "–" : (Math.round(rate * 100) / 100).toFixed(2);
}

function median(seconds: number | null): string {
  return seconds === null ? "–" : formatDuration(seconds);
}

/** The steps of a funnel, each with its figure and the rate from the step before. */
function steps(f: FunnelFigures) {
  return [
    { key: "views", label: "Views", value: f.views, rate: null as string | null },
    {
      key: "installs",
      label: "Installs",
      value: f.installs,
      rate: `${percent(f.installs_per_view)} of views`,
    },
    {
      key: "purchasers",
      label: "Purchasers",
      value: f.purchasers,
      rate: `${percent(f.purchasers_per_install)} of installs`,
    },
    {
      key: "purchases",
      label: "Purchases",
      value: f.purchases,
      rate: `${perPurchaser(f.purchases_per_purchaser)} per purchaser`,
    },
  ];
}

function FunnelChart(props: { figures: FunnelFigures; currency: string; rangeText: string }) {
  const list = steps(props.figures);
  const max = Math.max(1, ...list.map((s) => s.value));
  const desc = list.map((s) => `${s.label} ${formatNumber(s.value)}`).join(", ") +
    `; revenue ${formatMoney(props.figures.revenue, props.currency)}.`;
  return (
    <figure class="funnel-chart">
      <figcaption class="visually-hidden">
        The funnel, {props.rangeText}: {desc}
      </figcaption>
      <ol class="bars funnel-steps">
        {list.map((s) => (
          <li class={`step-${s.key}`}>
            <span class="name">
              {s.label}
              {s.rate && <small class="muted">{s.rate}</small>}
            </span>
            <svg viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
              <rect class="bar-track" x="0" y="0" width="100" height="10" rx="2" />
              <rect
                class="bar-fill"
                x="0"
                y="0"
                width={((s.value / max) * 100).toFixed(2)}
                height="10"
                rx="2"
              />
            </svg>
            <span class="num">{formatNumber(s.value)}</span>
          </li>
        ))}
      </ol>
    </figure>
  );
}

function FunnelFormView(props: FunnelPageProps) {
  const { form } = props;
  const zones = props.zones.includes(form.tz) ? props.zones : [form.tz, ...props.zones];
  return (
    <form method="get" action={props.base} class="ac-form">
      <div class="ac-fields">
        <div class="field">
          <label for="fn-from">From</label>
          <input id="fn-from" type="date" name="from" value={form.from} required />
        </div>
        <div class="field">
          <label for="fn-to">To (inclusive)</label>
          <input id="fn-to" type="date" name="to" value={form.to} required />
        </div>
        <div class="field">
          <label for="fn-tz">Time zone</label>
          <select id="fn-tz" name="tz">
            {zones.map((z) => <option key={z} value={z} selected={z === form.tz}>{z}</option>)}
          </select>
        </div>
        <div class="field">
          <label for="fn-limit">Links</label>
          <select id="fn-limit" name="limit">
            {LIMITS.map((l) => (
              <option key={l} value={l} selected={l === form.limit}>Top {l}</option>
            ))}
          </select>
        </div>
      </div>
      <button type="submit" class="button">Show</button>
    </form>
  );
}

export function FunnelPage(props: FunnelPageProps) {
  const data = "funnel" in props.result ? props.result : null;
  const error = "error" in props.result ? props.result.error : undefined;
  const funnel = data?.funnel;
  const rangeText = `${props.form.from} to ${props.form.to} (${props.form.tz})`;
  const money = (n: number) => formatMoney(n, funnel?.currency ?? "USD");
  const groups = funnel?.groups ?? [];
  const empty = funnel !== undefined && funnel.totals.views === 0 &&
    funnel.totals.installs === 0 && funnel.totals.purchases === 0;
  return (
    <Layout
      title="Top links by revenue"
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, "Top links by revenue")}
    >
      <EnvHeader
        session={props.session}
        env={props.env}
        projectName={props.projectName}
        active="metrics"
      />
      <section class="card" aria-labelledby="funnel-h">
        <h2 id="funnel-h">Funnel</h2>
        <p class="muted funnel-intro">
          Views of links, the installs attributed to them, the people who bought (by user id) and
          their purchases, in the project's reporting currency.{" "}
          <a href={props.base.replace(/\/funnel$/, "/metrics")}>Back to the metrics</a>
        </p>
        <nav class="presets" aria-label="Ranges">
          {props.presets.map((p) => (
            <a
              class="button secondary"
              href={p.href}
              aria-current={p.current ? "true" : undefined}
            >
              {p.label}
            </a>
          ))}
        </nav>
        <FunnelFormView {...props} />
        {error !== undefined && <Notice kind="error">{error}</Notice>}
        {funnel && (
          <>
            <p class="muted range">{rangeText}</p>
            {empty
              ? (
                <Empty title="Nothing attributed in this range.">
                  <p>
                    Views of links, and the installs and purchases your apps send with a click id, a
                    link path or a user id, are counted here. Choose a longer range.
                  </p>
                </Empty>
              )
              : (
                <div class="funnel-summary">
                  <FunnelChart
                    figures={funnel.totals}
                    currency={funnel.currency}
                    rangeText={rangeText}
                  />
                  <dl class="funnel-figures">
                    <div>
                      <dt>Revenue ({funnel.currency})</dt>
                      <dd>{money(funnel.totals.revenue)}</dd>
                    </div>
                    <div>
                      <dt>Median time from click to install</dt>
                      <dd>{median(funnel.totals.median_seconds_to_install)}</dd>
                    </div>
                  </dl>
                </div>
              )}
          </>
        )}
      </section>
      {funnel && !empty && (
        <section class="card" aria-labelledby="top-h">
          <h2 id="top-h">Top links by revenue</h2>
          {groups.length === 0
            ? <p class="muted">No link has an attributed install or purchase in this range.</p>
            : (
              <>
                <ScrollNote />
                <div class="table-scroll scroll-x">
                  <table class="funnel-links">
                    <thead>
                      <tr>
                        <th scope="col">Link</th>
                        <th scope="col" class="num">Revenue</th>
                        <th scope="col" class="num">Share</th>
                        <th scope="col" class="num">Purchases</th>
                        <th scope="col" class="num">Purchasers</th>
                        <th scope="col" class="num">Installs</th>
                        <th scope="col" class="num">Views</th>
                        <th scope="col" class="num">Installs per view</th>
                        <th scope="col" class="num">Purchasers per install</th>
                        <th scope="col" class="num">Median click to install</th>
                      </tr>
                    </thead>
                    <tbody>
                      {groups.map((g) => {
                        const info = data!.links.get(g.linkId);
                        const text = info?.title || g.key;
                        const t = g.totals;
                        const whole = funnel.totals.revenue;
                        return (
                          <tr>
                            <th scope="row" class="link-name">
                              {info?.href ? <a href={info.href}>{text}</a> : <span>{text}</span>}
                              {text !== g.key && <small class="muted">/{g.key}</small>}
                            </th>
                            <td class="num">{money(t.revenue)}</td>
                            <td class="num share">
                              <span>{share(t.revenue, whole)}</span>
                              <svg
                                viewBox="0 0 100 4"
                                preserveAspectRatio="none"
                                aria-hidden="true"
                              >
                                <rect class="bar-track" width="100" height="4" />
                                <rect
                                  class="bar-fill"
                                  width={whole > 0
                                    ? Math.max(0, (t.revenue / whole) * 100).toFixed(2)
                                    : "0"}
                                  height="4"
                                />
                              </svg>
                            </td>
                            <td class="num">{formatNumber(t.purchases)}</td>
                            <td class="num">{formatNumber(t.purchasers)}</td>
                            <td class="num">{formatNumber(t.installs)}</td>
                            <td class="num">{formatNumber(t.views)}</td>
                            <td class="num">{percent(t.installs_per_view)}</td>
                            <td class="num">{percent(t.purchasers_per_install)}</td>
                            <td class="num">{median(t.median_seconds_to_install)}</td>
                          </tr>
                        );
                      })}
                    </tbody>
                  </table>
                </div>
                <p class="hint">
                  The links with an attributed install or purchase in the range, by revenue, then
                  purchases, installs and views; share of all attributed revenue.
                </p>
              </>
            )}
        </section>
      )}
    </Layout>
  );
}
