import type { Project } from "../../services/projects/projects.ts";
import type { Session } from "../../services/access/sessions.ts";
import {
  Checkbox,
  Csrf,
  Empty,
  ENV_TABS,
  envBase,
  Field,
  formatDate,
  Layout,
  Notice,
  SecretBox,
} from "../layout.tsx";
import { BASE, may } from "../security.ts";
import {
  type LimitErrors,
  type LimitValues,
  limitValuesOf,
  type SettingsErrors,
  type SettingsValues,
  settingsValuesOf,
} from "../settings_form.ts";
import {
  Attribution,
  type AttributionForm,
  DomainAndApps,
  ReportingCurrency,
  WriteLimits,
} from "./project_settings.tsx";

export function ProjectsPage(props: {
  session: Session;
  projects: Project[];
  search: string;
  error?: string | undefined;
  name?: string | undefined;
}) {
  return (
    <Layout title="Projects" session={props.session}>
      <div class="page-head">
        <h1>Projects</h1>
        <p class="muted">
          Each project has a production and a test environment, each with its own links, metrics,
          feed tokens and export.
        </p>
      </div>
      <div class="grid">
        <section class="card" aria-labelledby="list-h">
          <h2 id="list-h">Your projects</h2>
          <form method="get" action={BASE} class="search" role="search">
            <label for="q" class="skip">Search projects</label>
            <input
              id="q"
              type="search"
              name="q"
              value={props.search}
              placeholder="Search by name"
              aria-label="Search projects by name"
            />
            <button type="submit" class="button secondary">Search</button>
          </form>
          {props.projects.length === 0
            ? (props.search
              ? (
                <Empty title="No project matches that search.">
                  <p>
                    <a href={BASE}>Show all projects</a>
                  </p>
                </Empty>
              )
              : (
                <Empty title="No projects yet.">
                  {props.session.principal.type === "admin_token"
                    ? (
                      <p>
                        Create your first project with the form on this page: you get its project
                        key for the app SDKs, and links, metrics and feed tokens for each
                        environment.
                      </p>
                    )
                    : (
                      <p>
                        You are not a member of any project yet: ask your instance admin or a
                        project's owner to add you.
                      </p>
                    )}
                </Empty>
              ))
            : (
              <ul class="list">
                {props.projects.map((p) => (
                  <li>
                    <div class="main">
                      <a class="title" href={`${BASE}/projects/${p.id}`}>{p.name}</a>
                      <p class="muted">
                        <code>{p.id}</code> · created {formatDate(p.created_at)}
                      </p>
                    </div>
                    <span class={p.enterprise ? "badge on" : "badge off"}>
                      {p.enterprise ? "Enterprise" : "No Enterprise"}
                    </span>
                  </li>
                ))}
              </ul>
            )}
        </section>
        {props.session.principal.type === "admin_token" && (
          <section class="card" aria-labelledby="create-h">
            <h2 id="create-h">Create a project</h2>
            <form method="post" action={`${BASE}/projects`}>
              <Csrf session={props.session} />
              <Field
                label="Name"
                name="name"
                required
                value={props.name}
                error={props.error}
                placeholder="Acme"
              />
              <Checkbox
                label="Enterprise access"
                name="enterprise"
                checked
                hint="Needed for feed tokens and the event feed."
              />
              <button type="submit" class="button">Create project</button>
            </form>
          </section>
        )}
      </div>
    </Layout>
  );
}

export function ProjectPage(props: {
  session: Session;
  project: Project;
  projectKey?: string;
  notice?: string;
  error?: string | undefined;
  /** The link domain and apps form as submitted, when it had errors. */
  settings?: { values: SettingsValues; errors: SettingsErrors };
  limits?: { values: LimitValues; errors: LimitErrors };
  /** The reporting currency form's error, when it had one. */
  currencyError?: string;
  /** The attribution form as submitted, when it had errors. */
  attribution?: AttributionForm;
}) {
  const p = props.project;
  return (
    <Layout
      title={p.name}
      session={props.session}
      crumbs={[{ label: "Projects", href: BASE }, { label: p.name }]}
    >
      <div class="page-head">
        <h1>
          {p.name}
          <span class={p.enterprise ? "badge on" : "badge off"}>
            {p.enterprise ? "Enterprise" : "No Enterprise"}
          </span>
        </h1>
        <p class="muted">
          Project <code>{p.id}</code> · created {formatDate(p.created_at)}
        </p>
      </div>
      {props.notice && <Notice>{props.notice}</Notice>}
      {props.projectKey && (
        <SecretBox label="Project key" value={props.projectKey} id="project-key" />
      )}
      <div class="grid">
        {(["production", "test"] as const).map((kind) => {
          const id = p.environments[kind].project_id;
          const base = envBase(id);
          return (
            <section class="card" aria-labelledby={`env-${kind}`}>
              <h2 id={`env-${kind}`}>
                {kind === "production" ? "Production" : "Test"}
              </h2>
              <p class="muted">
                Project ID <code>{id}</code> · SDK header{" "}
                <code>ENVIRONMENT: {kind === "production" ? "production" : "development"}</code>
              </p>
              <ul class="list">
                {ENV_TABS.filter((l) => may(props.session, l.operation)).map((l) => (
                  <li>
                    <a href={`${base}/${l.path}`}>{l.label}</a>
                  </li>
                ))}
              </ul>
            </section>
          );
        })}
      </div>
      {(may(props.session, "members.manage") || may(props.session, "audit.read")) && (
        <nav class="tabs" aria-label="Project">
          {may(props.session, "members.manage") && (
            <a href={`${BASE}/projects/${p.id}/members`}>Members</a>
          )}
          {may(props.session, "audit.read") && (
            <a href={`${BASE}/projects/${p.id}/audit`}>Audit log</a>
          )}
        </nav>
      )}
      <div class="grid">
        {may(props.session, "project.rename") && (
          <section class="card" aria-labelledby="settings-h">
            <h2 id="settings-h">Settings</h2>
            <form method="post" action={`${BASE}/projects/${p.id}`}>
              <Csrf session={props.session} />
              <Field label="Name" name="name" required value={p.name} error={props.error} />
              {props.session.principal.type === "admin_token" && (
                <Checkbox
                  label="Enterprise access"
                  name="enterprise"
                  checked={p.enterprise}
                  hint="Without it, feed tokens cannot be created and existing ones read 402."
                />
              )}
              <button type="submit" class="button">Save</button>
            </form>
          </section>
        )}
        {may(props.session, "project.key") && (
          <section class="card" aria-labelledby="key-h">
            <h2 id="key-h">Project key</h2>
            <p>
              The app SDKs send it as{" "}
              <code>PROJECT-KEY</code>. It is stored only as a hash; if it is lost or leaked,
              replace it: the old key stops working at once.
            </p>
            <a class="button secondary" href={`${BASE}/projects/${p.id}/regenerate-key`}>
              Replace the key…
            </a>
          </section>
        )}
      </div>
      {may(props.session, "project.settings") && (
        <DomainAndApps
          session={props.session}
          project={p}
          values={props.settings?.values ?? settingsValuesOf(p)}
          errors={props.settings?.errors ?? {}}
        />
      )}
      {may(props.session, "project.settings") && (
        <WriteLimits
          session={props.session}
          project={p}
          values={props.limits?.values ?? limitValuesOf(p)}
          errors={props.limits?.errors ?? {}}
        />
      )}
      {may(props.session, "project.settings") && (
        <ReportingCurrency session={props.session} project={p} error={props.currencyError} />
      )}
      {may(props.session, "project.settings") && (
        <Attribution session={props.session} project={p} form={props.attribution} />
      )}
    </Layout>
  );
}

export function RegenerateKeyPage(props: { session: Session; project: Project }) {
  const p = props.project;
  return (
    <Layout
      title="Replace the project key"
      session={props.session}
      crumbs={[
        { label: "Projects", href: BASE },
        { label: p.name, href: `${BASE}/projects/${p.id}` },
        { label: "Replace the key" },
      ]}
    >
      <div class="card">
        <h1>Replace the project key of {p.name}?</h1>
        <p>
          Apps that still send the current key get 401 from the moment you confirm. The new key is
          shown once.
        </p>
        <div class="actions">
          <form method="post" action={`${BASE}/projects/${p.id}/regenerate-key`}>
            <Csrf session={props.session} />
            <button type="submit" class="button danger">Replace the key</button>
          </form>
          <a href={`${BASE}/projects/${p.id}`}>Cancel</a>
        </div>
      </div>
    </Layout>
  );
}
