// The frame every dashboard page shares, and the small pieces the pages are built from. Hono's
// JSX escapes every value it renders; nothing here writes raw HTML.
import type { MadeBy } from "../services/access/makers.ts";
import type { Child } from "hono/jsx";
import { FEED_EVENT_TYPES } from "../services/feed/envelope.ts";
import type { Environment } from "../services/projects/projects.ts";
import type { Session } from "../services/access/sessions.ts";
import { assetUrl } from "./assets.ts";
import type { Operation } from "../services/access/permissions.ts";
import { BASE, CSRF_FIELD, may } from "./security.ts";

export interface Crumb {
  label: string;
  href?: string;
}

export function Layout(props: {
  title: string;
  session?: Session | undefined;
  crumbs?: Crumb[];
  /** Sends the browser on to this same-site URL once the page is shown (a meta refresh). */
  refreshTo?: string;
  children?: Child;
}) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <title>{`${props.title} · Dashboard`}</title>
        {props.refreshTo && <meta http-equiv="refresh" content={`0; url=${props.refreshTo}`} />}
        <link rel="icon" href={assetUrl("icon.svg")} type="image/svg+xml" />
        <link rel="stylesheet" href={assetUrl("app.css")} />
        <script src={assetUrl("app.js")} defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header class="top">
          <a class="brand" href={BASE}>
            <span class="logo" aria-hidden="true">↗</span> Links &amp; events
          </a>
          {props.session && (
            <nav class="top-nav" aria-label="Main">
              <a href={BASE}>Projects</a>
              {props.session.principal.type === "admin_token"
                ? (
                  <>
                    <a href={`${BASE}/accounts`}>Accounts</a>
                    <a href={`${BASE}/audit`}>Audit log</a>
                  </>
                )
                : <a href={`${BASE}/account`}>{props.session.principal.name}</a>}
              <form method="post" action={`${BASE}/sign-out`}>
                <Csrf session={props.session} />
                <button type="submit" class="link-button">Sign out</button>
              </form>
            </nav>
          )}
        </header>
        <main id="main" class="wrap">
          {props.crumbs && props.crumbs.length > 0 && (
            <nav class="crumbs" aria-label="Breadcrumb">
              <ol>
                {props.crumbs.map((c) => (
                  <li>{c.href ? <a href={c.href}>{c.label}</a> : c.label}</li>
                ))}
              </ol>
            </nav>
          )}
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** The session's synchronizer token, in every form that changes something. */
export function Csrf(props: { session: Session }) {
  return <input type="hidden" name={CSRF_FIELD} value={props.session.csrfToken} />;
}

export function envBase(projectId: number): string {
  return `${BASE}/environments/${projectId}`;
}

export type EnvTab =
  | "links"
  | "metrics"
  | "live"
  | "tokens"
  | "destinations"
  | "export"
  | "api-keys";

/**
 * The pages of one environment, each with the operation that opens it: the tabs, and the
 * project page's list of each environment's pages.
 */
export const ENV_TABS: { tab: EnvTab; label: string; path: string; operation: Operation }[] = [
  { tab: "links", label: "Links", path: "links", operation: "links.read" },
  { tab: "metrics", label: "Metrics", path: "metrics", operation: "analytics.read" },
  { tab: "live", label: "Live events", path: "live", operation: "events.live" },
  { tab: "tokens", label: "Feed tokens", path: "tokens", operation: "feed_tokens.manage" },
  {
    tab: "destinations",
    label: "Destinations",
    path: "destinations",
    operation: "destinations.manage",
  },
  { tab: "export", label: "Export", path: "export", operation: "events.export" },
  { tab: "api-keys", label: "API keys", path: "api-keys", operation: "api_keys.manage" },
];

/** The environment's title and tabs: only those the session's role opens. */
export function EnvHeader(
  props: { env: Environment; projectName: string; active: EnvTab; session?: Session },
) {
  const base = envBase(props.env.id);
  // Pages that pass no session are seen by whoever may open them: every tab then shows.
  const tabs = props.session ? ENV_TABS.filter((t) => may(props.session, t.operation)) : ENV_TABS;
  return (
    <>
      <div class="page-head">
        <h1>
          {props.projectName}
          <span class={`badge env-${props.env.kind}`}>{envLabel(props.env.kind)}</span>
        </h1>
        <p class="muted">
          Project ID <code>{props.env.id}</code> ·{" "}
          {props.env.enterprise ? "Enterprise" : "No Enterprise access"}
        </p>
      </div>
      <nav class="tabs" aria-label="Environment">
        {tabs.map((t) => (
          <a
            href={`${base}/${t.path}`}
            aria-current={t.tab === props.active ? "page" : undefined}
          >
            {t.label}
          </a>
        ))}
      </nav>
    </>
  );
}

export function envLabel(kind: "production" | "test"): string {
  return kind === "production" ? "Production" : "Test";
}

export function envCrumbs(env: Environment, projectName: string, page: string): Crumb[] {
  return [
    { label: "Projects", href: BASE },
    { label: projectName, href: `${BASE}/projects/${env.hashid}` },
    { label: `${envLabel(env.kind)}: ${page}` },
  ];
}

/** A checkbox per feed event type (none ticked means every type), as the forms submit them. */
export function EventTypeBoxes(props: {
  name: string;
  hint: string;
  selected: readonly string[];
  error?: string | undefined;
}) {
  return (
    <fieldset
      class={props.error ? "has-error" : undefined}
      aria-describedby={props.error ? "types-error" : undefined}
    >
      <legend>Event types</legend>
      <p class="hint">{props.hint}</p>
      <div class="types">
        {FEED_EVENT_TYPES.map((t) => (
          <div class="check">
            <input
              type="checkbox"
              id={`type-${t}`}
              name={props.name}
              value={t}
              checked={props.selected.includes(t)}
            />
            <label for={`type-${t}`}>{t}</label>
          </div>
        ))}
      </div>
      {props.error && <p class="error-text" id="types-error">{props.error}</p>}
    </fieldset>
  );
}

export function Field(props: {
  label: string;
  name: string;
  value?: string | undefined;
  type?: string;
  hint?: string;
  error?: string | undefined;
  required?: boolean;
  placeholder?: string;
  autocomplete?: string;
  multiline?: boolean;
}) {
  const id = `f-${props.name}`;
  const describedBy = [props.hint && `${id}-hint`, props.error && `${id}-error`]
    .filter(Boolean).join(" ") || undefined;
  return (
    <div class={props.error ? "field has-error" : "field"}>
      <label for={id}>{props.label}</label>
      {props.hint && <p class="hint" id={`${id}-hint`}>{props.hint}</p>}
      {props.multiline
        ? (
          <textarea
            id={id}
            name={props.name}
            rows={4}
            required={props.required}
            placeholder={props.placeholder}
            aria-describedby={describedBy}
            aria-invalid={props.error ? "true" : undefined}
          >
            {props.value ?? ""}
          </textarea>
        )
        : (
          <input
            id={id}
            name={props.name}
            type={props.type ?? "text"}
            value={props.value}
            required={props.required}
            placeholder={props.placeholder}
            autocomplete={props.autocomplete}
            aria-describedby={describedBy}
            aria-invalid={props.error ? "true" : undefined}
          />
        )}
      {props.error && <p class="error-text" id={`${id}-error`}>{props.error}</p>}
    </div>
  );
}

export function Checkbox(props: { label: string; name: string; checked?: boolean; hint?: string }) {
  const id = `f-${props.name}`;
  return (
    <div class="check">
      <input type="checkbox" id={id} name={props.name} value="on" checked={props.checked} />
      <label for={id}>{props.label}</label>
      {props.hint && <p class="hint">{props.hint}</p>}
    </div>
  );
}

/**
 * A secret shown this once, with a copy button (app.js) and the warning that goes with it. The
 * children say why it cannot be shown again, where that is not "only its hash is kept" (a
 * webhook secret is kept encrypted: it must sign every delivery).
 */
export function SecretBox(props: { label: string; value: string; id: string; children?: Child }) {
  return (
    <section class="secret" aria-labelledby={`${props.id}-label`}>
      <h2 id={`${props.id}-label`}>{props.label}</h2>
      <p class="warn">
        <strong>Copy it now: you will not see this again.</strong>{" "}
        {props.children ?? "Only its hash is kept, so it cannot be shown later."}
      </p>
      <div class="copy-row">
        <input
          id={props.id}
          class="mono"
          type="text"
          readonly
          value={props.value}
          aria-label={props.label}
        />
        <button type="button" class="button" data-copy={props.id}>Copy</button>
      </div>
      <p class="copy-status" role="status" aria-live="polite" data-copy-status={props.id}></p>
    </section>
  );
}

/**
 * A URL as code that wraps only after a separator (`/`, `.`, `?`, `&`, `=`, `#`), never inside a
 * word; a single part longer than the line is the only thing the stylesheet breaks.
 */
export function LinkUrl(props: { url: string }) {
  const parts = props.url.split(/(?<=[.?&=#]|\/(?!\/))/);
  return (
    <code class="url">
      {parts.map((part, i) => (i === 0 ? part : <>{<wbr />}{part}</>))}
    </code>
  );
}

export function Empty(props: { title: string; children?: Child }) {
  return (
    <div class="empty">
      <p class="empty-title">{props.title}</p>
      {props.children}
    </div>
  );
}

export function Notice(props: { kind?: "error" | "ok"; children?: Child }) {
  return (
    <p class={`notice ${props.kind ?? "ok"}`} role={props.kind === "error" ? "alert" : "status"}>
      {props.children}
    </p>
  );
}

export function formatDate(iso: string | Date | null): string {
  if (iso === null) return "never";
  const d = typeof iso === "string" ? new Date(iso) : iso;
  return d.toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

/**
 * Who made a key, token or destination and whose it is, in words: "made by Ada", "made by the
 * key “ci” for Ada", "made by the instance admin", or "maker unknown" (before 00025).
 */
export function madeByText(m: MadeBy): string {
  const whose = (b: MadeBy["belongs_to"]) =>
    b === null
      ? "an unknown person"
      : b.type === "admin_token"
      ? "the instance admin"
      : b.name ?? `a removed account (#${b.id ?? "?"})`;
  const by = m.created_by;
  if (by === null) return m.belongs_to === null ? "maker unknown" : `for ${whose(m.belongs_to)}`;
  if (by.type === "admin_token") return "made by the instance admin";
  if (by.type === "account") {
    return m.belongs_to?.type === "account" && m.belongs_to.name === null
      ? `made by ${by.name} (account removed)`
      : `made by ${by.name}`;
  }
  return `made by the key “${by.name}” for ${whose(m.belongs_to)}`;
}

/** A moment as the dashboard writes it, kept on one line (tables scroll rather than stack it). */
export function When(props: { at: string | Date | null }) {
  const at = props.at;
  if (at === null) return <>never</>;
  const iso = typeof at === "string" ? at : at.toISOString();
  return <time class="when" datetime={iso}>{formatDate(at)}</time>;
}

export function formatNumber(n: number): string {
  return n.toLocaleString("en-US");
}
