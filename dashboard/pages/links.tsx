import {
  DASHBOARD_LINK_STATES,
  type DashboardLinkPage,
  type DashboardLinkRow,
} from "../../services/links/dashboard.ts";
import type { ImportError } from "../../services/links/csv.ts";
import type { LinkState } from "../../services/links/manage.ts";
import type { Environment } from "../../services/projects/projects.ts";
import type { Session } from "../../services/access/sessions.ts";
import { EXPIRY_ZONES, type LinkFormValues } from "../forms.ts";
import { formatMetric, metricLabel } from "../analytics_form.ts";
import { may } from "../security.ts";
import { AnalyticsPanel, type AnalyticsPanelProps } from "./analytics.tsx";
import {
  Checkbox,
  Csrf,
  Empty,
  envBase,
  envCrumbs,
  EnvHeader,
  Field,
  formatDate,
  formatNumber,
  Layout,
  LinkUrl,
  Notice,
} from "../layout.tsx";

function listHref(base: string, search: string, state: string, page: number): string {
  const params = new URLSearchParams();
  if (search) params.set("q", search);
  if (state) params.set("state", state);
  if (page > 1) params.set("page", String(page));
  const query = params.toString();
  return `${base}/links${query ? `?${query}` : ""}`;
}

const STATE_LABELS: Record<LinkState, string> = {
  active: "Active",
  inactive: "Inactive",
  expired: "Expired",
  archived: "Archived",
};

/** A link's state as a badge: green when the link host serves it, red otherwise. */
export function StateBadge(props: { state: LinkState }) {
  return (
    <span class={`badge ${props.state === "active" ? "on" : "off"} link-${props.state}`}>
      {STATE_LABELS[props.state]}
    </span>
  );
}

/** What an import that was refused says: a message, and the bad rows when there are some. */
export interface ImportReport {
  message: string;
  errors: ImportError[];
}

export function LinksPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  search: string;
  /** The state filter ("" for every link but the archived ones). */
  state: LinkState | "";
  page: DashboardLinkPage;
  linkUrl: (path: string) => string;
  notice?: string | undefined;
  importReport?: ImportReport | undefined;
}) {
  const base = envBase(props.env.id);
  const { page, per_page, total, links } = props.page;
  const lastPage = Math.max(1, Math.ceil(total / per_page));
  const filtered = props.search !== "" || props.state !== "";
  return (
    <Layout
      title="Links"
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, "Links")}
    >
      <EnvHeader
        session={props.session}
        env={props.env}
        projectName={props.projectName}
        active="links"
      />
      {props.notice && <Notice>{props.notice}</Notice>}
      {props.importReport && (
        <Notice kind="error">
          {props.importReport.message} <a href="#import-h">See the report below.</a>
        </Notice>
      )}
      <section class="card" aria-labelledby="links-h">
        <div class="actions">
          <h2 id="links-h">Links made here, by the admin API or by an import</h2>
        </div>
        <p class="muted">
          Links your apps make through <code>generate_link</code>{" "}
          are not listed here; their totals are on the metrics API.
        </p>
        {may(props.session, "links.write") && (
          <div class="actions">
            <a class="button" href={`${base}/links/new`}>New link</a>
          </div>
        )}
        <form method="get" action={`${base}/links`} class="search" role="search">
          <input
            type="search"
            name="q"
            value={props.search}
            placeholder="Title, path or tag"
            aria-label="Search links by title, path or tag"
          />
          <select name="state" aria-label="State">
            <option value="" selected={props.state === ""}>All but archived</option>
            {DASHBOARD_LINK_STATES.map((s) => (
              <option value={s} selected={props.state === s}>{STATE_LABELS[s]}</option>
            ))}
          </select>
          <button type="submit" class="button secondary">Search</button>
        </form>
        {links.length === 0
          ? (filtered
            ? (
              <Empty title="No link matches that search.">
                <p>
                  <a href={`${base}/links`}>Show all links</a>
                </p>
              </Empty>
            )
            : (
              <Empty title="No links yet.">
                <p>
                  Make a link for a campaign, a poster or a newsletter: each gets a short URL, a QR
                  code and its own counters.
                </p>
                {may(props.session, "links.write") && (
                  <a class="button" href={`${base}/links/new`}>Make your first link</a>
                )}
              </Empty>
            ))
          : (
            <ul class="list">
              {links.map((l) => (
                <li>
                  <div class="main">
                    <a class="title" href={`${base}/links/${l.path}`}>{l.title || l.path}</a>
                    <p class="muted">
                      <LinkUrl url={props.linkUrl(l.path)} />
                    </p>
                    {l.tags.length > 0 && (
                      <span class="tags">
                        {l.tags.map((t) => <span class="tag" key={String(t)}>{String(t)}</span>)}
                      </span>
                    )}
                  </div>
                  <span class="views">
                    {formatNumber(l.counters.total_views)}{" "}
                    {l.counters.total_views === 1 ? "view" : "views"}
                  </span>
                  <StateBadge state={l.state} />
                </li>
              ))}
            </ul>
          )}
        {total > per_page && (
          <nav class="pager" aria-label="Pages">
            {page > 1
              ? <a href={listHref(base, props.search, props.state, page - 1)} rel="prev">← Newer</a>
              : <span></span>}
            <span class="muted">Page {page} of {lastPage} · {total} links</span>
            {page < lastPage
              ? <a href={listHref(base, props.search, props.state, page + 1)} rel="next">Older →</a>
              : <span></span>}
          </nav>
        )}
      </section>
      <ImportExport
        session={props.session}
        base={base}
        report={props.importReport}
      />
    </Layout>
  );
}

/**
 * The CSV export download, and for those who may make links the import (a file upload, all or
 * nothing; a refused file's report of bad rows). The form token comes before the file input:
 * the upload is read as it arrives, and the token is checked before the file is.
 */
function ImportExport(props: {
  session: Session;
  base: string;
  report: ImportReport | undefined;
}) {
  const errors = props.report?.errors ?? [];
  const canImport = may(props.session, "links.write");
  const exportLink = (
    <a class="button secondary" href={`${props.base}/links/export.csv`} download>
      Export all links (CSV)
    </a>
  );
  return (
    <section class="card" aria-labelledby="import-h">
      <h2 id="import-h">{canImport ? "Import and export" : "Export"}</h2>
      {canImport && (
        <p class="muted import-intro">
          A CSV with a header row of field names (<code>path</code>, <code>title</code>,{" "}
          <code>desktop_url</code>, …) and up to 100,000 links. Either every row is imported or none
          is: a file with a bad row changes nothing, and the report names each bad row.
        </p>
      )}
      {props.report && (
        <div class="import-report" role="group" aria-labelledby="import-report-h">
          <h3 id="import-report-h">Import report</h3>
          <p>{props.report.message}</p>
          {errors.length > 0 && (
            <div class="table-scroll">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Row</th>
                    <th scope="col">Column</th>
                    <th scope="col">Problem</th>
                  </tr>
                </thead>
                <tbody>
                  {errors.map((e) => (
                    <tr>
                      <td>{e.row === 0 ? "header" : formatNumber(e.row)}</td>
                      <td>
                        <code>{e.field}</code>
                      </td>
                      <td>{e.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <p class="muted">
            Row 1 is the first row after the header. Fix the rows named here and import the whole
            file again.
          </p>
        </div>
      )}
      {canImport
        ? (
          <form
            method="post"
            action={`${props.base}/links/import`}
            enctype="multipart/form-data"
            class="import-form"
          >
            <Csrf session={props.session} />
            <div class="field">
              <label for="f-file">CSV file</label>
              <input id="f-file" type="file" name="file" accept=".csv,text/csv" required />
            </div>
            <div class="actions">
              <button type="submit" class="button">Import</button>
              {exportLink}
            </div>
          </form>
        )
        : <div class="actions">{exportLink}</div>}
      <p class="muted import-note">
        The export has every link listed here, archived ones included, with its state and lifetime
        counters, and imports as it is into another environment. (Links your apps make are in the
        admin API's export.)
      </p>
    </section>
  );
}

/** One field of the link form, as data: a text input (or textarea) or a checkbox. */
type FormField =
  | {
    kind: "text";
    name: Exclude<keyof LinkFormValues, CheckboxName | "expires_at" | "expires_tz">;
    label: string;
    type?: "url";
    hint?: string;
    placeholder?: string;
    multiline?: boolean;
    /** Only on the create form (a path never changes). */
    newOnly?: boolean;
  }
  | { kind: "check"; name: CheckboxName; label: string }
  | { kind: "expiry" };
type CheckboxName =
  | "show_preview_ios"
  | "show_preview_android"
  | "ios_open_app"
  | "android_open_app"
  | "pass_click_id";

/**
 * A group of the form: the first is always open (where the link goes); the others are
 * disclosures, open when one of their fields has a value or an error.
 */
interface FormSection {
  id: string;
  title: string;
  /** What the closed disclosure says it holds. */
  summary?: string;
  fields: FormField[];
}

const LINK_FORM: FormSection[] = [
  {
    id: "destination",
    title: "Where it goes",
    fields: [
      {
        kind: "text",
        name: "desktop_url",
        label: "Destination URL",
        type: "url",
        hint: "Where people on a computer go, and on a phone with no app or address below.",
        placeholder: "https://example.com/spring",
      },
      {
        kind: "text",
        name: "title",
        label: "Title (optional)",
        hint: "How the link is listed here, and the heading of its preview page.",
      },
      {
        kind: "text",
        name: "path",
        label: "Path (optional)",
        hint: "1 to 64 letters, digits, - or _; empty draws a random one. Never reusable.",
        placeholder: "spring-sale",
        newOnly: true,
      },
    ],
  },
  {
    id: "apps",
    title: "Phones: apps and stores",
    summary: "an iOS or Android address, opening your app",
    fields: [
      {
        kind: "text",
        name: "ios_url",
        label: "iOS redirect URL",
        type: "url",
        placeholder: "https://apps.apple.com/…",
      },
      { kind: "check", name: "ios_open_app", label: "Open the iOS app if installed" },
      {
        kind: "text",
        name: "android_url",
        label: "Android redirect URL",
        type: "url",
        placeholder: "https://play.google.com/…",
      },
      { kind: "check", name: "android_open_app", label: "Open the Android app if installed" },
    ],
  },
  {
    id: "preview",
    title: "Preview page and social cards",
    summary: "subtitle, image, a preview before the app opens",
    fields: [
      { kind: "text", name: "subtitle", label: "Subtitle" },
      {
        kind: "text",
        name: "image",
        label: "Image URL",
        type: "url",
        hint: "Shown on the preview page and in social cards.",
        placeholder: "https://…",
      },
      { kind: "check", name: "show_preview_ios", label: "Show a preview page on iOS" },
      { kind: "check", name: "show_preview_android", label: "Show a preview page on Android" },
    ],
  },
  {
    id: "tracking",
    title: "Tags and tracking",
    summary: "tags to search by, campaign, source and medium, click ids",
    fields: [
      {
        kind: "text",
        name: "tags",
        label: "Tags",
        hint: "Separated by commas; the list searches them.",
        placeholder: "sale, poster",
      },
      { kind: "text", name: "tracking_campaign", label: "Campaign" },
      { kind: "text", name: "tracking_source", label: "Source" },
      { kind: "text", name: "tracking_medium", label: "Medium" },
      {
        kind: "check",
        name: "pass_click_id",
        label: "Add the click id to web addresses (click_id)",
      },
    ],
  },
  {
    id: "data",
    title: "Data for your app",
    summary: "a JSON object your app receives",
    fields: [
      {
        kind: "text",
        name: "data",
        label: "Data (JSON object)",
        multiline: true,
        hint: "Delivered to your app when the link opens it.",
        placeholder: '{"promo": "spring"}',
      },
    ],
  },
  {
    id: "expiry",
    title: "Expiry",
    summary: "a date, a number of views, where it goes after",
    fields: [
      { kind: "expiry" },
      {
        kind: "text",
        name: "max_views",
        label: "Maximum views",
        hint: "After this many views the link has expired; empty: no limit.",
      },
      {
        kind: "text",
        name: "expired_url",
        label: "Expired link URL",
        type: "url",
        hint: "Where an expired link sends people; empty: a page saying it expired.",
        placeholder: "https://…",
      },
    ],
  },
];

/** A field with a value or an error opens its disclosure. */
function filled(f: FormField, v: LinkFormValues, e: Record<string, string>): boolean {
  if (f.kind === "expiry") return v.expires_at !== "" || e.expires_at !== undefined;
  if (f.kind === "check") return v[f.name];
  return v[f.name] !== "" || e[f.name] !== undefined;
}

/**
 * The expiry: the platform's date and time picker and the zone it is read in (UTC unless
 * chosen; app.js preselects the browser's own zone on an empty form). Stored, and shown on the
 * link's page, in UTC.
 */
function ExpiryField(props: { values: LinkFormValues; error: string | undefined }) {
  const zone = props.values.expires_tz || "UTC";
  const zones = EXPIRY_ZONES.includes(zone) ? EXPIRY_ZONES : [zone, ...EXPIRY_ZONES];
  const describedBy = ["f-expires_at-hint", props.error && "f-expires_at-error"]
    .filter(Boolean).join(" ");
  return (
    <div class={props.error ? "field expiry has-error" : "field expiry"}>
      <label for="f-expires_at">Expires at (optional)</label>
      <p class="hint" id="f-expires_at-hint">
        A date and time in the zone chosen beside it; empty: never. The link's page shows it in UTC.
      </p>
      <div class="expiry-row">
        <input
          id="f-expires_at"
          name="expires_at"
          type="datetime-local"
          step="1"
          value={props.values.expires_at}
          aria-describedby={describedBy}
          aria-invalid={props.error ? "true" : undefined}
        />
        <label for="f-expires_tz" class="visually-hidden">Time zone of the expiry</label>
        <select
          id="f-expires_tz"
          name="expires_tz"
          data-browser-zone={props.values.expires_at === "" ? "" : undefined}
        >
          {zones.map((z) => <option key={z} value={z} selected={z === zone}>{z}</option>)}
        </select>
      </div>
      {props.error && <p class="error-text" id="f-expires_at-error">{props.error}</p>}
    </div>
  );
}

function FormFieldView(
  props: { field: FormField; values: LinkFormValues; errors: Record<string, string> },
) {
  const f = props.field;
  if (f.kind === "expiry") {
    return <ExpiryField values={props.values} error={props.errors.expires_at} />;
  }
  if (f.kind === "check") {
    return <Checkbox label={f.label} name={f.name} checked={props.values[f.name]} />;
  }
  return (
    <Field
      label={f.label}
      name={f.name}
      value={props.values[f.name]}
      error={props.errors[f.name]}
      {...(f.type ? { type: f.type } : {})}
      {...(f.hint ? { hint: f.hint } : {})}
      {...(f.placeholder ? { placeholder: f.placeholder } : {})}
      {...(f.multiline ? { multiline: true } : {})}
    />
  );
}

export function NewLinkPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  values: LinkFormValues;
  errors: Record<string, string>;
  /** Present: the edit form of the link at this path. */
  editing?: string;
}) {
  const v = props.values;
  const e = props.errors;
  const heading = props.editing ? "Edit link" : "New link";
  const action = props.editing
    ? `${envBase(props.env.id)}/links/${props.editing}/edit`
    : `${envBase(props.env.id)}/links`;
  return (
    <Layout
      title={heading}
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, heading)}
    >
      <EnvHeader
        session={props.session}
        env={props.env}
        projectName={props.projectName}
        active="links"
      />
      <form method="post" action={action} class="card link-form">
        <Csrf session={props.session} />
        <h2>{heading}</h2>
        {Object.keys(e).length > 0 && (
          <Notice kind="error">Some fields need a change; each says why below.</Notice>
        )}
        {LINK_FORM.map((section, i) => {
          const fields = section.fields.filter((f) =>
            !(f.kind === "text" && f.newOnly && props.editing)
          );
          const body = fields.map((f) => (
            <FormFieldView
              key={f.kind === "expiry" ? "expires_at" : f.name}
              field={f}
              values={v}
              errors={e}
            />
          ));
          if (i === 0) {
            return (
              <fieldset id={`link-${section.id}`}>
                <legend>{section.title}</legend>
                {props.editing && (
                  <p class="muted field">
                    Path <code>{props.editing}</code> (a link's path never changes)
                  </p>
                )}
                {body}
              </fieldset>
            );
          }
          return (
            <details
              id={`link-${section.id}`}
              class="form-section"
              open={fields.some((f) => filled(f, v, e))}
            >
              <summary>
                <span class="section-title">{section.title}</span>
                {section.summary && <span class="muted">{section.summary}</span>}
              </summary>
              <div class="section-body">{body}</div>
            </details>
          );
        })}
        <div class="actions">
          <button type="submit" class="button">{props.editing ? "Save" : "Create link"}</button>
          <a
            href={props.editing
              ? `${envBase(props.env.id)}/links/${props.editing}`
              : `${envBase(props.env.id)}/links`}
          >
            Cancel
          </a>
        </div>
      </form>
    </Layout>
  );
}

export function LinkPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  link: DashboardLinkRow;
  linkUrl: (path: string) => string;
  notice?: string | undefined;
  analytics: AnalyticsPanelProps;
}) {
  const l = props.link;
  const base = `${envBase(props.env.id)}/links/${l.path}`;
  const url = props.linkUrl(l.path);
  const c = l.counters;
  // Lifetime counters, by the analytics metric each one is; revenue in the panel's currency.
  const counters: [string, number][] = [
    ["views", c.total_views],
    ["opens", c.total_opens],
    ["installs", c.total_installs],
    ["reinstalls", c.total_reinstalls],
    ["reactivations", c.total_reactivations],
    ["app_opens", c.total_app_opens],
    ["user_referred", c.total_user_referred],
    ["revenue", c.total_revenue],
  ];
  const currency = props.analytics.form.currency;
  const redirects: [string, { url?: string; open_app_if_installed?: boolean }][] = [
    ["iOS", l.ios_custom_redirect],
    ["Android", l.android_custom_redirect],
    ["Desktop", l.desktop_custom_redirect],
  ];
  return (
    <Layout
      title={l.title || l.path}
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, l.title || l.path)}
    >
      <EnvHeader
        session={props.session}
        env={props.env}
        projectName={props.projectName}
        active="links"
      />
      {props.notice && <Notice>{props.notice}</Notice>}
      <div class="grid">
        <section class="card" aria-labelledby="link-h">
          <h2 id="link-h">
            {l.title || l.path}
            <StateBadge state={l.state} />
          </h2>
          {l.subtitle && <p>{l.subtitle}</p>}
          <div class="copy-row">
            <input
              id="link-url"
              class="mono"
              type="text"
              readonly
              value={url}
              aria-label="Link URL"
            />
            <button type="button" class="button secondary" data-copy="link-url">Copy</button>
          </div>
          <p class="copy-status" role="status" aria-live="polite" data-copy-status="link-url"></p>
          <p class="muted">Updated {formatDate(l.updated_at)}</p>
          {(l.expires_at || l.max_views !== null) && (
            <p class="muted">
              {l.expires_at ? `Expires ${formatDate(l.expires_at)}. ` : ""}
              {l.max_views !== null ? `At most ${formatNumber(l.max_views)} views. ` : ""}
              {l.expired_url ? `Then goes to ${l.expired_url}.` : "Then answers that it expired."}
            </p>
          )}
          {(may(props.session, "links.write") || may(props.session, "links.delete")) && (
            <div class="actions">
              {may(props.session, "links.write") && (
                <>
                  <a class="button secondary" href={`${base}/edit`}>Edit</a>
                  <form method="post" action={`${base}/archive`}>
                    <Csrf session={props.session} />
                    <input type="hidden" name="archived" value={l.archived ? "false" : "true"} />
                    <button type="submit" class="button secondary">
                      {l.archived ? "Unarchive" : "Archive"}
                    </button>
                  </form>
                </>
              )}
              {may(props.session, "links.delete") && (
                <a class="button danger" href={`${base}/delete`}>Delete</a>
              )}
            </div>
          )}
          {may(props.session, "links.write") && (
            <form method="post" action={`${base}/active`} class="actions">
              <Csrf session={props.session} />
              <input type="hidden" name="active" value={l.active ? "false" : "true"} />
              {l.active
                ? <button type="submit" class="button danger">Deactivate</button>
                : <button type="submit" class="button">Activate</button>}
              <span class="muted">
                {l.active
                  ? "A deactivated link answers 404 and stops counting."
                  : "The link host answers 404 for it until it is activated."}
              </span>
            </form>
          )}
        </section>
        <section class="card" aria-labelledby="qr-h">
          <h2 id="qr-h">QR code</h2>
          <img
            class="qr"
            src={`${base}/qr.svg`}
            alt={`QR code for ${url}`}
            width="220"
            height="220"
          />
          <div class="actions">
            <a
              class="button secondary"
              href={`${base}/qr.svg?download=1`}
              download={`${l.path}.svg`}
            >
              Download SVG
            </a>
            <a class="button secondary" href={`${base}/qr`}>Design QR code</a>
          </div>
        </section>
      </div>
      <section class="card" aria-labelledby="counters-h">
        <h2 id="counters-h">Counters</h2>
        <dl class="stats">
          {counters.map(([metric, n]) => (
            <div key={metric}>
              <dt>{metricLabel(metric, currency)}</dt>
              <dd>{formatMetric(metric, n, currency)}</dd>
            </div>
          ))}
        </dl>
      </section>
      <AnalyticsPanel {...props.analytics} />
      <section class="card" aria-labelledby="details-h">
        <h2 id="details-h">Details</h2>
        <div class="table-scroll">
          <table>
            <tbody>
              {redirects.map(([label, r]) => (
                <tr>
                  <th scope="row">{label} redirect</th>
                  <td>
                    {r.url ? <code>{r.url}</code> : <span class="muted">none</span>}
                    {r.open_app_if_installed ? " (opens the app if installed)" : ""}
                  </td>
                </tr>
              ))}
              <tr>
                <th scope="row">Rules and split</th>
                <td>
                  {(l.rules?.length ?? 0) === 0 && !l.split
                    ? <span class="muted">none</span>
                    : `${l.rules?.length ?? 0} rule${l.rules?.length === 1 ? "" : "s"}${
                      l.split ? `, a split of ${l.split.length} variants` : ""
                    }`}
                  {l.forward_query ? "; forwards the query" : ""}
                  {l.append_utm ? "; adds UTM parameters" : ""}
                  {l.password_hash !== null ? "; asks for a password" : ""}{" "}
                  <a href={`${base}/rules`}>
                    {may(props.session, "links.write") ? "Edit rules" : "See rules"}
                  </a>
                </td>
              </tr>
              <tr>
                <th scope="row">Preview page</th>
                <td>
                  iOS {l.show_preview_ios ? "on" : "off"}, Android{" "}
                  {l.show_preview_android ? "on" : "off"}
                </td>
              </tr>
              <tr>
                <th scope="row">Tags</th>
                <td>
                  {l.tags.length ? l.tags.map(String).join(", ") : <span class="muted">none</span>}
                </td>
              </tr>
              <tr>
                <th scope="row">Tracking</th>
                <td>
                  {[l.tracking_campaign, l.tracking_source, l.tracking_medium].some(Boolean)
                    ? `campaign ${l.tracking_campaign ?? "–"}, source ${
                      l.tracking_source ?? "–"
                    }, medium ${l.tracking_medium ?? "–"}`
                    : <span class="muted">none</span>}
                  {l.pass_click_id ? "; adds the click id to web addresses" : ""}
                </td>
              </tr>
              <tr>
                <th scope="row">Data</th>
                <td>
                  <code>{JSON.stringify(l.data)}</code>
                </td>
              </tr>
            </tbody>
          </table>
        </div>
      </section>
    </Layout>
  );
}

export function DeleteLinkPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  link: DashboardLinkRow;
  linkUrl: (path: string) => string;
}) {
  const l = props.link;
  const base = `${envBase(props.env.id)}/links/${l.path}`;
  return (
    <Layout
      title="Delete link"
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, "Delete link")}
    >
      <EnvHeader
        session={props.session}
        env={props.env}
        projectName={props.projectName}
        active="links"
      />
      <form method="post" action={`${base}/delete`} class="card">
        <Csrf session={props.session} />
        <h2>Delete {l.title || l.path}?</h2>
        <p>
          <LinkUrl url={props.linkUrl(l.path)} />{" "}
          will answer 404 from now on, and its counters ({formatNumber(l.counters.total_views)}{" "}
          views) are deleted with it. Its path can never be used again. Events already recorded stay
          in the feed and the history.
        </p>
        <p class="muted">To stop it without losing anything, archive it instead.</p>
        <div class="actions">
          <button type="submit" class="button danger">Delete for good</button>
          <a href={base}>Cancel</a>
        </div>
      </form>
    </Layout>
  );
}
