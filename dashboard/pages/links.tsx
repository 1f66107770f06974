import {
  DASHBOARD_LINK_STATES,
  type DashboardLinkPage,
  type DashboardLinkRow,
} from "../../services/links/dashboard.ts";
import type { ImportError } from "../../services/links/csv.ts";
import type { LinkState } from "../../services/links/manage.ts";
import type { Environment } from "../../services/projects/projects.ts";
import type { Session } from "../../services/access/sessions.ts";
import type { LinkFormValues } from "../forms.ts";
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
  linkBaseUrl: string;
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
                <a class="button" href={`${base}/links/new`}>Make your first link</a>
              </Empty>
            ))
          : (
            <ul class="list">
              {links.map((l) => (
                <li>
                  <div class="main">
                    <a class="title" href={`${base}/links/${l.path}`}>{l.title || l.path}</a>
                    <p class="muted">
                      <code>{`${props.linkBaseUrl}/${l.path}`}</code>
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
 * The CSV import (a file upload, all or nothing; a refused file's report of bad rows) and the
 * export download. The form token comes before the file input: the upload is read as it
 * arrives, and the token is checked before the file is.
 */
function ImportExport(props: {
  session: Session;
  base: string;
  report: ImportReport | undefined;
}) {
  const errors = props.report?.errors ?? [];
  return (
    <section class="card" aria-labelledby="import-h">
      <h2 id="import-h">Import and export</h2>
      <p class="muted import-intro">
        A CSV with a header row of field names (<code>path</code>, <code>title</code>,{" "}
        <code>desktop_url</code>, …) and up to 100,000 links. Either every row is imported or none
        is: a file with a bad row changes nothing, and the report names each bad row.
      </p>
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
          <a class="button secondary" href={`${props.base}/links/export.csv`} download>
            Export all links (CSV)
          </a>
        </div>
      </form>
      <p class="muted import-note">
        The export has every link listed here, archived ones included, with its state and lifetime
        counters, and imports as it is into another environment. (Links your apps make are in the
        admin API's export.)
      </p>
    </section>
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
      <form method="post" action={action} class="card">
        <Csrf session={props.session} />
        <h2>{heading}</h2>
        {Object.keys(e).length > 0 && (
          <Notice kind="error">Some fields need a change; each says why below.</Notice>
        )}
        <fieldset>
          <legend>What people see</legend>
          {props.editing
            ? (
              <p class="muted field">
                Path <code>{props.editing}</code> (a link's path never changes)
              </p>
            )
            : (
              <Field
                label="Path (optional)"
                name="path"
                value={v.path}
                error={e.path}
                hint="1 to 64 letters, digits, - or _; empty draws a random one. Never reusable."
                placeholder="spring-sale"
              />
            )}
          <Field label="Title" name="title" value={v.title} error={e.title} />
          <Field label="Subtitle" name="subtitle" value={v.subtitle} error={e.subtitle} />
          <Field
            label="Image URL"
            name="image"
            type="url"
            value={v.image}
            error={e.image}
            hint="Shown on the preview page and in social cards."
            placeholder="https://…"
          />
          <Checkbox
            label="Show a preview page on iOS"
            name="show_preview_ios"
            checked={v.show_preview_ios}
          />
          <Checkbox
            label="Show a preview page on Android"
            name="show_preview_android"
            checked={v.show_preview_android}
          />
        </fieldset>
        <fieldset>
          <legend>Where it goes</legend>
          <Field
            label="iOS redirect URL"
            name="ios_url"
            type="url"
            value={v.ios_url}
            error={e.ios_url}
            placeholder="https://apps.apple.com/…"
          />
          <Checkbox
            label="Open the iOS app if installed"
            name="ios_open_app"
            checked={v.ios_open_app}
          />
          <Field
            label="Android redirect URL"
            name="android_url"
            type="url"
            value={v.android_url}
            error={e.android_url}
            placeholder="https://play.google.com/…"
          />
          <Checkbox
            label="Open the Android app if installed"
            name="android_open_app"
            checked={v.android_open_app}
          />
          <Field
            label="Desktop redirect URL"
            name="desktop_url"
            type="url"
            value={v.desktop_url}
            error={e.desktop_url}
            placeholder="https://example.com/…"
          />
        </fieldset>
        <fieldset>
          <legend>Data, tags and tracking</legend>
          <Field
            label="Data (JSON object)"
            name="data"
            value={v.data}
            error={e.data}
            multiline
            hint="Delivered to your app when the link opens it."
            placeholder='{"promo": "spring"}'
          />
          <Field
            label="Tags"
            name="tags"
            value={v.tags}
            error={e.tags}
            hint="Separated by commas; the list searches them."
            placeholder="sale, poster"
          />
          <Field
            label="Campaign"
            name="tracking_campaign"
            value={v.tracking_campaign}
            error={e.tracking_campaign}
          />
          <Field
            label="Source"
            name="tracking_source"
            value={v.tracking_source}
            error={e.tracking_source}
          />
          <Field
            label="Medium"
            name="tracking_medium"
            value={v.tracking_medium}
            error={e.tracking_medium}
          />
        </fieldset>
        <fieldset>
          <legend>Expiry</legend>
          <Field
            label="Expires at"
            name="expires_at"
            value={v.expires_at}
            error={e.expires_at}
            hint="ISO 8601 with an offset; empty: never."
            placeholder="2026-12-31T23:59:59Z"
          />
          <Field
            label="Maximum views"
            name="max_views"
            value={v.max_views}
            error={e.max_views}
            hint="After this many views the link has expired; empty: no limit."
          />
          <Field
            label="Expired link URL"
            name="expired_url"
            type="url"
            value={v.expired_url}
            error={e.expired_url}
            hint="Where an expired link sends people; empty: a page saying it expired."
            placeholder="https://…"
          />
        </fieldset>
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
  linkBaseUrl: string;
  notice?: string | undefined;
  analytics: AnalyticsPanelProps;
}) {
  const l = props.link;
  const base = `${envBase(props.env.id)}/links/${l.path}`;
  const url = `${props.linkBaseUrl}/${l.path}`;
  const c = l.counters;
  const counters: [string, number][] = [
    ["Views", c.total_views],
    ["Opens", c.total_opens],
    ["Installs", c.total_installs],
    ["Reinstalls", c.total_reinstalls],
    ["Reactivations", c.total_reactivations],
    ["App opens", c.total_app_opens],
    ["Users referred", c.total_user_referred],
    ["Revenue (minor units)", c.total_revenue],
  ];
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
          </div>
        </section>
      </div>
      <section class="card" aria-labelledby="counters-h">
        <h2 id="counters-h">Counters</h2>
        <dl class="stats">
          {counters.map(([label, n]) => (
            <div>
              <dt>{label}</dt>
              <dd>{formatNumber(n)}</dd>
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
  linkBaseUrl: string;
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
          <code>{`${props.linkBaseUrl}/${l.path}`}</code>{" "}
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
