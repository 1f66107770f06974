import type { DashboardLinkPage, DashboardLinkRow } from "../../services/links/dashboard.ts";
import type { Environment } from "../../services/projects.ts";
import type { Session } from "../../services/sessions.ts";
import type { LinkFormValues } from "../forms.ts";
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

function listHref(base: string, search: string, page: number): string {
  const params = new URLSearchParams();
  if (search) params.set("q", search);
  if (page > 1) params.set("page", String(page));
  const query = params.toString();
  return `${base}/links${query ? `?${query}` : ""}`;
}

export function LinksPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  search: string;
  page: DashboardLinkPage;
  linkBaseUrl: string;
}) {
  const base = envBase(props.env.id);
  const { page, per_page, total, links } = props.page;
  const lastPage = Math.max(1, Math.ceil(total / per_page));
  return (
    <Layout
      title="Links"
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, "Links")}
    >
      <EnvHeader env={props.env} projectName={props.projectName} active="links" />
      <section class="card" aria-labelledby="links-h">
        <div class="actions">
          <h2 id="links-h">Links made in the dashboard</h2>
        </div>
        <p class="muted">
          Links your apps make through <code>generate_link</code>{" "}
          are not listed here; their totals are on the metrics API.
        </p>
        <div class="actions">
          <a class="button" href={`${base}/links/new`}>New link</a>
        </div>
        <form method="get" action={`${base}/links`} class="search" role="search">
          <input
            type="search"
            name="q"
            value={props.search}
            placeholder="Title, path or tag"
            aria-label="Search links by title, path or tag"
          />
          <button type="submit" class="button secondary">Search</button>
        </form>
        {links.length === 0
          ? (props.search
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
                  <span>{formatNumber(l.counters.total_views)} views</span>
                  <span class={l.active ? "badge on" : "badge off"}>
                    {l.active ? "Active" : "Inactive"}
                  </span>
                </li>
              ))}
            </ul>
          )}
        {total > per_page && (
          <nav class="pager" aria-label="Pages">
            {page > 1
              ? <a href={listHref(base, props.search, page - 1)} rel="prev">← Newer</a>
              : <span></span>}
            <span class="muted">Page {page} of {lastPage} · {total} links</span>
            {page < lastPage
              ? <a href={listHref(base, props.search, page + 1)} rel="next">Older →</a>
              : <span></span>}
          </nav>
        )}
      </section>
    </Layout>
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
      <EnvHeader env={props.env} projectName={props.projectName} active="links" />
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
              <p class="muted">
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
      <EnvHeader env={props.env} projectName={props.projectName} active="links" />
      {props.notice && <Notice>{props.notice}</Notice>}
      <div class="grid">
        <section class="card" aria-labelledby="link-h">
          <h2 id="link-h">
            {l.title || l.path}
            <span class={l.active && !l.archived ? "badge on" : "badge off"}>
              {l.archived ? "Archived" : l.active ? "Active" : "Inactive"}
            </span>
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
          <div class="actions">
            <a class="button secondary" href={`${base}/edit`}>Edit</a>
            <form method="post" action={`${base}/archive`}>
              <Csrf session={props.session} />
              <input type="hidden" name="archived" value={l.archived ? "false" : "true"} />
              <button type="submit" class="button secondary">
                {l.archived ? "Unarchive" : "Archive"}
              </button>
            </form>
            <a class="button danger" href={`${base}/delete`}>Delete</a>
          </div>
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
      <EnvHeader env={props.env} projectName={props.projectName} active="links" />
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
