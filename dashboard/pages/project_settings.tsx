// The project page's "Link domain and apps" card: the host its links are served on and the
// iOS and Android apps the association files declare, with a way to remove each app.
import {
  ATTRIBUTION_MODELS,
  type AttributionModel,
  type Project,
} from "../../services/projects/projects.ts";
import type { Session } from "../../services/access/sessions.ts";
import { Csrf, Field } from "../layout.tsx";
import { BASE } from "../security.ts";
import { CURRENCY_CODES } from "../../services/fx/convert.ts";
import {
  DEFAULT_LIMITS,
  type LimitErrors,
  type LimitValues,
  type SettingsErrors,
  type SettingsValues,
} from "../settings_form.ts";

function RemoveApp(props: { session: Session; project: Project; platform: "ios" | "android" }) {
  const label = props.platform === "ios" ? "iOS" : "Android";
  return (
    <form
      method="post"
      action={`${BASE}/projects/${props.project.id}/apps/remove`}
      data-confirm={`Remove the ${label} app? Its association file entry goes at once.`}
    >
      <Csrf session={props.session} />
      <input type="hidden" name="platform" value={props.platform} />
      <button type="submit" class="button secondary">Remove the {label} app</button>
    </form>
  );
}

export function DomainAndApps(props: {
  session: Session;
  project: Project;
  values: SettingsValues;
  errors: SettingsErrors;
}) {
  const { values: v, errors: e, project: p } = props;
  return (
    <section class="card" aria-labelledby="apps-h">
      <h2 id="apps-h">Link domain and apps</h2>
      <p class="muted apps-intro">
        With a link domain, this project's links are served on <code>https://&lt;domain&gt;/…</code>
        {" "}
        (point its DNS at this service and terminate TLS in front of it); with its apps, that host
        serves the association files that let iOS and Android open the app for those links. Without
        a link domain, the links share the service's default host with other projects, which
        declares this project's apps only when the instance names it that host's owner{" "}
        (<code>DEFAULT_HOST_APPS_PROJECT</code>).
      </p>
      {Object.keys(e).length > 0 && (
        <p class="notice error" role="alert">Nothing was saved: correct the fields marked below.</p>
      )}
      <form method="post" action={`${BASE}/projects/${p.id}/apps`}>
        <Csrf session={props.session} />
        <Field
          label="Link domain"
          name="link_domain"
          value={v.link_domain}
          error={e.link_domain}
          placeholder="go.example.com"
          hint="A host name only: no scheme, port or path. Leave empty to serve links on the instance's own host."
        />
        <div class="grid">
          <fieldset>
            <legend>iOS app</legend>
            <Field
              label="Team ID"
              name="ios_team_id"
              value={v.ios_team_id}
              error={e.ios_team_id}
              placeholder="ABCDE12345"
            />
            <Field
              label="Bundle ID"
              name="ios_bundle_id"
              value={v.ios_bundle_id}
              error={e.ios_bundle_id}
              placeholder="com.example.app"
            />
            <Field
              label="App Store ID (optional)"
              name="ios_app_store_id"
              value={v.ios_app_store_id}
              error={e.ios_app_store_id}
              placeholder="123456789"
            />
            <Field
              label="URL scheme (optional)"
              name="ios_scheme"
              value={v.ios_scheme}
              error={e.ios_scheme}
              placeholder="example"
            />
          </fieldset>
          <fieldset>
            <legend>Android app</legend>
            <Field
              label="Package"
              name="android_package"
              value={v.android_package}
              error={e.android_package}
              placeholder="com.example.app"
            />
            <Field
              label="SHA-256 certificate fingerprints"
              name="android_fingerprints"
              value={v.android_fingerprints}
              error={e.android_fingerprints}
              multiline
              hint="One a line, as keytool prints them: 32 hex bytes separated by colons."
            />
            <Field
              label="URL scheme (optional)"
              name="android_scheme"
              value={v.android_scheme}
              error={e.android_scheme}
              placeholder="example"
            />
          </fieldset>
        </div>
        <p class="hint">Emptying every field of an app removes it.</p>
        <button type="submit" class="button">Save domain and apps</button>
      </form>
      {(p.apps.ios || p.apps.android) && (
        <div class="actions">
          {p.apps.ios && <RemoveApp session={props.session} project={p} platform="ios" />}
          {p.apps.android && <RemoveApp session={props.session} project={p} platform="android" />}
        </div>
      )}
    </section>
  );
}

/**
 * The project page's "Write limits" card: how many links and events the project key may write a
 * minute, per key and per client address (docs/rest-api.md, "Write limits").
 */
export function WriteLimits(props: {
  session: Session;
  project: Project;
  values: LimitValues;
  errors: LimitErrors;
}) {
  const { values: v, errors: e, project: p } = props;
  const number = (n: number) => n.toLocaleString("en-US");
  return (
    <section class="card" aria-labelledby="limits-h">
      <h2 id="limits-h">Write limits</h2>
      <p class="muted apps-intro">
        The project key ships inside your apps, so anyone can extract it: these bound what it may
        write, counted over the last minute (a link made with <code>generate_link</code>{" "}
        or an event sent is one write). Over a limit, the SDK's writes answer{" "}
        <code>503 rate_limited</code> with <code>Retry-After</code>{" "}
        and clients retry. Link lookups and the links themselves are never limited.
      </p>
      {Object.keys(e).length > 0 && (
        <p class="notice error" role="alert">Nothing was saved: correct the fields marked below.</p>
      )}
      <form method="post" action={`${BASE}/projects/${p.id}/sdk_limits`}>
        <Csrf session={props.session} />
        <div class="grid">
          <Field
            label="Writes a minute for the key"
            name="per_key"
            value={v.per_key}
            error={e.per_key}
            placeholder={number(DEFAULT_LIMITS.per_key)}
            hint={`Both environments together. Blank: the default, ${
              number(DEFAULT_LIMITS.per_key)
            }.`}
          />
          <Field
            label="Writes a minute from one address"
            name="per_address"
            value={v.per_address}
            error={e.per_address}
            placeholder={number(DEFAULT_LIMITS.per_address)}
            hint={`An IPv6 address counts as its /64. Blank: the default, ${
              number(DEFAULT_LIMITS.per_address)
            }.`}
          />
        </div>
        <button type="submit" class="button">Save write limits</button>
      </form>
    </section>
  );
}

/**
 * The project page's "Reporting currency" card: the currency revenue is summed in
 * (docs/analytics.md, "One currency"). Changing it reconverts every purchase of the project.
 */
export function ReportingCurrency(props: { session: Session; project: Project; error?: string }) {
  const p = props.project;
  return (
    <section class="card" aria-labelledby="currency-h">
      <h2 id="currency-h">Reporting currency</h2>
      <p class="muted apps-intro">
        Revenue is summed in this currency. Purchases in another currency are converted at the
        European Central Bank's reference rate of their day; those no rate converts yet count as
        unconverted purchases, not as revenue.
      </p>
      <form method="post" action={`${BASE}/projects/${p.id}/reporting_currency`}>
        <Csrf session={props.session} />
        <div class="field">
          <label for="reporting-currency">Currency</label>
          <select
            id="reporting-currency"
            name="reporting_currency"
            aria-invalid={props.error ? "true" : undefined}
          >
            {[...CURRENCY_CODES].map((c) => (
              <option value={c} selected={c === p.reporting_currency}>{c}</option>
            ))}
          </select>
          {props.error && <p class="error">{props.error}</p>}
        </div>
        <button type="submit" class="button">Save reporting currency</button>
      </form>
    </section>
  );
}

/** The attribution card's fields as typed, and their errors (to show them again). */
export interface AttributionForm {
  values: { attribution_window_days: string; attribution_model: string };
  errors: { attribution_window_days?: string; attribution_model?: string };
}

const MODEL_LABELS: Record<AttributionModel, string> = {
  first_touch: "First touch",
  last_touch: "Last touch",
};

/**
 * The project page's "Attribution" card: how long a click or a user's touch attributes later
 * events, and which touch a user's events go to (docs/analytics.md, "Attribution").
 */
export function Attribution(props: { session: Session; project: Project; form?: AttributionForm }) {
  const p = props.project;
  const v = props.form?.values ?? {
    attribution_window_days: String(p.attribution_window_days),
    attribution_model: p.attribution_model,
  };
  const e = props.form?.errors ?? {};
  return (
    <section class="card" aria-labelledby="attribution-h">
      <h2 id="attribution-h">Attribution</h2>
      <p class="muted apps-intro">
        An event your app sends with a link's click id counts for that link when the click is within
        the window. An event with only the user's id counts for the link that brought that user
        within the window: the first such link, or the latest. A change applies to events received
        from then on; events already stored keep their attribution.
      </p>
      {Object.keys(e).length > 0 && (
        <p class="notice error" role="alert">Nothing was saved: correct the fields marked below.</p>
      )}
      <form method="post" action={`${BASE}/projects/${p.id}/attribution`}>
        <Csrf session={props.session} />
        <div class="grid">
          <Field
            label="Window in days"
            name="attribution_window_days"
            value={v.attribution_window_days}
            error={e.attribution_window_days}
            hint="1 to 90; 30 by default."
          />
          <div class={e.attribution_model ? "field has-error" : "field"}>
            <label for="f-attribution_model">Model</label>
            <p class="hint" id="f-attribution_model-hint">
              A user's events count for the first link that brought them, or the latest.
            </p>
            <select
              id="f-attribution_model"
              name="attribution_model"
              aria-describedby={e.attribution_model
                ? "f-attribution_model-hint f-attribution_model-error"
                : "f-attribution_model-hint"}
              aria-invalid={e.attribution_model ? "true" : undefined}
            >
              {ATTRIBUTION_MODELS.map((m) => (
                <option value={m} selected={m === v.attribution_model}>{MODEL_LABELS[m]}</option>
              ))}
            </select>
            {e.attribution_model && (
              <p class="error-text" id="f-attribution_model-error">{e.attribution_model}</p>
            )}
          </div>
        </div>
        <button type="submit" class="button">Save attribution</button>
      </form>
    </section>
  );
}
