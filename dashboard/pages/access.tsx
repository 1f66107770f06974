// Team access in the dashboard: an environment's API keys, a project's members, the audit logs,
// the instance's accounts, and a person's own account.
import type { Account } from "../../services/access/accounts.ts";
import type { ApiKeySummary, CreatedApiKey } from "../../services/access/api_keys.ts";
import type { AuditEntry } from "../../services/access/audit.ts";
import type { Member } from "../../services/access/members.ts";
import { type Role, ROLES, SCOPES } from "../../services/access/permissions.ts";
import type { Environment, Project } from "../../services/projects/projects.ts";
import type { Session } from "../../services/access/sessions.ts";
import {
  Csrf,
  Empty,
  envBase,
  envCrumbs,
  EnvHeader,
  Field,
  formatDate,
  Layout,
  madeByText,
  Notice,
  SecretBox,
  When,
} from "../layout.tsx";
import { BASE, may } from "../security.ts";

const SCOPE_HINTS: Record<string, string> = {
  "links:read": "read links",
  "links:write": "create, edit and delete links",
  "analytics:read": "link metrics and analytics",
  "events:read": "the history export",
  "admin": "feed tokens, destinations, API keys, the project key, settings, the audit log",
};

export function ApiKeysPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  keys: ApiKeySummary[];
  created?: CreatedApiKey;
  notice?: string | undefined;
  error?: string | undefined;
  name?: string | undefined;
}) {
  const base = envBase(props.env.id);
  return (
    <Layout
      title="API keys"
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, "API keys")}
    >
      <EnvHeader
        session={props.session}
        env={props.env}
        projectName={props.projectName}
        active="api-keys"
      />
      {props.notice && <Notice>{props.notice}</Notice>}
      {props.created && (
        <SecretBox
          label={`API key “${props.created.name}”`}
          value={props.created.value}
          id="api-key-value"
        />
      )}
      <div class="grid">
        <section class="card" aria-labelledby="keys-h">
          <h2 id="keys-h">Keys</h2>
          <p class="muted">
            A program sends one as <code>Authorization: Bearer sk_…</code>{" "}
            to this environment's admin API, <code>/api/v1/projects/{props.env.id}/…</code>.
          </p>
          {props.keys.length === 0
            ? (
              <Empty title="No API keys yet.">
                <p>
                  Create one per program (a CI job, a backend service), with only the scopes it
                  needs.
                </p>
              </Empty>
            )
            : (
              <ul class="list">
                {props.keys.map((k) => (
                  <li>
                    <div class="main">
                      <span class="title">{k.name}</span>
                      <p class="muted">
                        <code>{k.hint}</code> · {k.scopes.join(", ")}
                      </p>
                      <p class="muted">
                        created {formatDate(k.created_at)} · last used {formatDate(k.last_used_at)}
                        {k.expires_at && <>· expires {formatDate(k.expires_at)}</>}
                      </p>
                      <p class="muted made-by">{madeByText(k)}</p>
                    </div>
                    <a class="button secondary" href={`${base}/api-keys/${k.id}/revoke`}>
                      Revoke…
                    </a>
                  </li>
                ))}
              </ul>
            )}
        </section>
        <section class="card" aria-labelledby="new-key-h">
          <h2 id="new-key-h">Create an API key</h2>
          <form method="post" action={`${base}/api-keys`}>
            <Csrf session={props.session} />
            <Field
              label="Name"
              name="name"
              required
              value={props.name}
              error={props.error}
              hint="Which program uses it, so you know what a revocation stops."
              placeholder="ci"
            />
            <fieldset>
              <legend>Scopes</legend>
              <div class="scopes">
                {SCOPES.map((s) => (
                  <div class="check">
                    <input type="checkbox" id={`scope-${s}`} name="scopes" value={s} />
                    <label for={`scope-${s}`}>
                      <code>{s}</code> <span class="muted">{SCOPE_HINTS[s]}</span>
                    </label>
                  </div>
                ))}
              </div>
            </fieldset>
            <Field
              label="Expires (optional)"
              name="expires_at"
              type="date"
              hint="The key stops working at the start of this day (UTC)."
            />
            <button type="submit" class="button">Create key</button>
          </form>
        </section>
      </div>
    </Layout>
  );
}

export function RevokeApiKeyPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  apiKey: ApiKeySummary;
}) {
  const base = envBase(props.env.id);
  return (
    <Layout
      title="Revoke an API key"
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, "Revoke an API key")}
    >
      <div class="card">
        <h1>Revoke “{props.apiKey.name}”?</h1>
        <p>
          The next request with <code>{props.apiKey.hint}</code>{" "}
          answers 401, on every instance. This cannot be undone.
        </p>
        <div class="actions">
          <form method="post" action={`${base}/api-keys/${props.apiKey.id}/revoke`}>
            <Csrf session={props.session} />
            <button type="submit" class="button danger">Revoke the key</button>
          </form>
          <a href={`${base}/api-keys`}>Cancel</a>
        </div>
      </div>
    </Layout>
  );
}

const projectCrumbs = (project: Project, page: string) => [
  { label: "Projects", href: BASE },
  { label: project.name, href: `${BASE}/projects/${project.id}` },
  { label: page },
];

export function MembersPage(props: {
  session: Session;
  project: Project;
  members: Member[];
  notice?: string | undefined;
  error?: string | undefined;
  email?: string | undefined;
  /** The role the add form had when it came back with an error. */
  role?: Role | undefined;
}) {
  const base = `${BASE}/projects/${props.project.id}/members`;
  const owner = may(props.session, "members.owners");
  const roles = ROLES.filter((r) => owner || r !== "owner");
  // A project with members always has an owner among them: the first one added is it.
  const first = props.members.length === 0;
  return (
    <Layout
      title="Members"
      session={props.session}
      crumbs={projectCrumbs(props.project, "Members")}
    >
      <div class="page-head">
        <h1>Members of {props.project.name}</h1>
        <p class="muted">
          Viewers read links and metrics; editors also create and change links; admins manage
          tokens, destinations, API keys, settings and members; owners also manage owners and the
          project's name.
        </p>
      </div>
      {props.notice && <Notice>{props.notice}</Notice>}
      {props.error && <Notice kind="error">{props.error}</Notice>}
      <div class="grid">
        <section class="card" aria-labelledby="members-h">
          <h2 id="members-h">Members</h2>
          {props.members.length === 0
            ? (
              <Empty title="No members yet.">
                <p>Add the project's first owner with the form on this page.</p>
              </Empty>
            )
            : (
              <ul class="list">
                {props.members.map((m) => (
                  <li>
                    <div class="main">
                      <span class="title">{m.name}</span>
                      <p class="muted">{m.email}</p>
                    </div>
                    {(owner || m.role !== "owner")
                      ? (
                        <div class="actions">
                          <form method="post" action={base} class="inline">
                            <Csrf session={props.session} />
                            <input type="hidden" name="email" value={m.email} />
                            <label for={`role-${m.account_id}`} class="skip">
                              Role of {m.name}
                            </label>
                            <select id={`role-${m.account_id}`} name="role">
                              {roles.map((r) => (
                                <option key={r} value={r} selected={r === m.role}>{r}</option>
                              ))}
                            </select>
                            <button type="submit" class="button secondary">Change</button>
                          </form>
                          <a class="button secondary" href={`${base}/${m.account_id}/remove`}>
                            Remove…
                          </a>
                        </div>
                      )
                      : <span class="badge on">{m.role}</span>}
                  </li>
                ))}
              </ul>
            )}
        </section>
        <section class="card" aria-labelledby="add-member-h">
          <h2 id="add-member-h">Add a member</h2>
          <form method="post" action={base}>
            <Csrf session={props.session} />
            <Field
              label="Email"
              name="email"
              type="email"
              required
              value={props.email}
              hint="The email of an account on this instance (the instance admin creates accounts)."
            />
            {first
              ? (
                <div class="field">
                  <input type="hidden" name="role" value="owner" />
                  <p class="field-note" id="f-role-first">
                    <strong>Role: owner.</strong>{" "}
                    The first member is the project's owner: a project with members always has one.
                    Add the others with their roles next.
                  </p>
                </div>
              )
              : (
                <div class="field">
                  <label for="f-role">Role</label>
                  <select id="f-role" name="role">
                    {roles.map((r) => (
                      <option key={r} value={r} selected={r === (props.role ?? "viewer")}>
                        {r}
                      </option>
                    ))}
                  </select>
                </div>
              )}
            <button type="submit" class="button">Add member</button>
          </form>
        </section>
      </div>
    </Layout>
  );
}

export function AuditPage(props: {
  session: Session;
  title: string;
  crumbs: { label: string; href?: string }[];
  entries: AuditEntry[];
  next: string | null;
  base: string;
}) {
  return (
    <Layout title={props.title} session={props.session} crumbs={props.crumbs}>
      <div class="page-head">
        <h1>{props.title}</h1>
        <p class="muted">Every change, newest first: who made it, what and when.</p>
      </div>
      <section class="card" aria-label="Entries">
        {props.entries.length === 0
          ? <Empty title="No changes recorded yet." />
          : (
            <div class="table-scroll">
              <table>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Who</th>
                    <th scope="col">What</th>
                    <th scope="col">On</th>
                  </tr>
                </thead>
                <tbody>
                  {props.entries.map((e) => (
                    <tr>
                      <td>
                        <When at={e.at} />
                      </td>
                      <td>
                        {e.actor.name}
                        {e.actor.type !== "admin_token" && (
                          <span class="muted">
                            {` (${e.actor.type === "api_key" ? "API key" : "account"})`}
                          </span>
                        )}
                      </td>
                      <td>
                        <code>{e.action}</code>
                      </td>
                      <td>
                        {e.target.type} <code>{e.target.id}</code>
                        {e.detail && (
                          <span class="muted">
                            {` (${
                              Object.entries(e.detail).map(([k, v]) => `${k} ${v}`).join(", ")
                            })`}
                          </span>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        {props.next && (
          <p>
            <a
              class="button secondary"
              href={`${props.base}?after=${encodeURIComponent(props.next)}`}
            >
              Older entries
            </a>
          </p>
        )}
      </section>
    </Layout>
  );
}

export function AccountsPage(props: {
  session: Session;
  accounts: Account[];
  created?: { account: Account; setupUrl: string };
  notice?: string | undefined;
  error?: string | undefined;
  values?: { email: string; name: string };
}) {
  return (
    <Layout
      title="Accounts"
      session={props.session}
      crumbs={[{ label: "Projects", href: BASE }, { label: "Accounts" }]}
    >
      <div class="page-head">
        <h1>Accounts</h1>
        <p class="muted">
          People who sign in with their email. Give them roles on projects from each project's
          Members page.
        </p>
      </div>
      {props.notice && <Notice>{props.notice}</Notice>}
      {props.error && <Notice kind="error">{props.error}</Notice>}
      {props.created && (
        <SecretBox
          label={`Setup link for ${props.created.account.email} (valid 7 days, works once)`}
          value={props.created.setupUrl}
          id="setup-url"
        />
      )}
      <div class="grid">
        <section class="card" aria-labelledby="accounts-h">
          <h2 id="accounts-h">Accounts</h2>
          {props.accounts.length === 0 ? <Empty title="No accounts yet." /> : (
            <ul class="list">
              {props.accounts.map((a) => (
                <li>
                  <div class="main">
                    <span class="title">{a.name}</span>
                    <p class="muted">{a.email} · created {formatDate(a.created_at)}</p>
                  </div>
                  <div class="actions">
                    <a class="button secondary" href={`${BASE}/accounts/${a.id}/revoke-made`}>
                      Revoke all they made…
                    </a>
                    <a class="button secondary" href={`${BASE}/accounts/${a.id}/remove`}>
                      Remove…
                    </a>
                  </div>
                </li>
              ))}
            </ul>
          )}
        </section>
        <section class="card" aria-labelledby="new-account-h">
          <h2 id="new-account-h">Create an account</h2>
          <form method="post" action={`${BASE}/accounts`}>
            <Csrf session={props.session} />
            <Field label="Name" name="name" required value={props.values?.name} />
            <Field label="Email" name="email" type="email" required value={props.values?.email} />
            <button type="submit" class="button">Create account</button>
          </form>
        </section>
      </div>
    </Layout>
  );
}

/** Asks before removing an account: what goes with it, and that it cannot be undone. */
export function RemoveAccountPage(props: { session: Session; account: Account }) {
  const a = props.account;
  return (
    <Layout
      title="Remove an account"
      session={props.session}
      crumbs={[
        { label: "Projects", href: BASE },
        { label: "Accounts", href: `${BASE}/accounts` },
        { label: "Remove an account" },
      ]}
    >
      <div class="card">
        <h1>Remove {a.name}?</h1>
        <p>
          <strong>{a.email}</strong>{" "}
          can no longer sign in: their sessions end at once, on every instance; they leave every
          project, and their API keys (those they made, and those made by their keys) are revoked.
          Feed tokens and destinations they set up keep working, naming them: to stop those too,
          {" "}
          <a href={`${BASE}/accounts/${a.id}/revoke-made`}>revoke all they made</a>. The audit log
          keeps their name. This cannot be undone (an account made again with the same email starts
          with no projects).
        </p>
        <div class="actions">
          <form method="post" action={`${BASE}/accounts/${a.id}/remove`}>
            <Csrf session={props.session} />
            <button type="submit" class="button danger">Remove the account</button>
          </form>
          <a href={`${BASE}/accounts`}>Cancel</a>
        </div>
      </div>
    </Layout>
  );
}

/** Asks before revoking everything a person made, and says what that stops. */
export function RevokeMadePage(props: { session: Session; account: Account }) {
  const a = props.account;
  return (
    <Layout
      title="Revoke all they made"
      session={props.session}
      crumbs={[
        { label: "Projects", href: BASE },
        { label: "Accounts", href: `${BASE}/accounts` },
        { label: "Revoke all they made" },
      ]}
    >
      <div class="card">
        <h1>Revoke all {a.name} made?</h1>
        <p>
          In every project: the API keys that are{" "}
          {a.name}'s (made by them, or by a key of theirs) and their feed tokens are revoked, and
          the next request with any of them is refused, on every instance. Their destinations are
          paused: deliveries stop at once and each keeps its place in the feed, so a project admin
          can resume those the team still needs. The account itself, its sessions and its roles
          stay.
        </p>
        <div class="actions">
          <form method="post" action={`${BASE}/accounts/${a.id}/revoke-made`}>
            <Csrf session={props.session} />
            <button type="submit" class="button danger">Revoke all they made</button>
          </form>
          <a href={`${BASE}/accounts`}>Cancel</a>
        </div>
      </div>
    </Layout>
  );
}

/** Asks before removing a member from a project. */
export function RemoveMemberPage(props: { session: Session; project: Project; member: Member }) {
  const m = props.member;
  const base = `${BASE}/projects/${props.project.id}/members`;
  return (
    <Layout
      title="Remove a member"
      session={props.session}
      crumbs={projectCrumbs(props.project, "Remove a member")}
    >
      <div class="card">
        <h1>Remove {m.name} from {props.project.name}?</h1>
        <p>
          <strong>{m.email}</strong> ({m.role}){" "}
          loses this project at their next request, on every instance, and their API keys for it
          (those they made and those made by their keys) are revoked. The feed tokens and
          destinations they set up keep working: the lists say whose each is, so revoke or replace
          those the project no longer wants. Their account stays; add them again to give access
          back.
        </p>
        <div class="actions">
          <form method="post" action={`${base}/${m.account_id}/remove`}>
            <Csrf session={props.session} />
            <button type="submit" class="button danger">Remove the member</button>
          </form>
          <a href={base}>Cancel</a>
        </div>
      </div>
    </Layout>
  );
}

export function AccountPage(props: {
  session: Session;
  notice?: string | undefined;
  error?: string | undefined;
}) {
  const principal = props.session.principal;
  return (
    <Layout
      title="Your account"
      session={props.session}
      crumbs={[{ label: "Projects", href: BASE }, { label: "Your account" }]}
    >
      <div class="page-head">
        <h1>Your account</h1>
      </div>
      {props.notice && <Notice>{props.notice}</Notice>}
      {props.error && <Notice kind="error">{props.error}</Notice>}
      {principal.type === "account"
        ? (
          <section class="card" aria-labelledby="password-h">
            <p>
              <strong>{principal.name}</strong> · {principal.email}
            </p>
            <h2 id="password-h">Change your password</h2>
            <form method="post" action={`${BASE}/account`}>
              <Csrf session={props.session} />
              <input
                type="hidden"
                name="username"
                value={principal.email}
                autocomplete="username"
              />
              <Field
                label="Current password"
                name="current"
                type="password"
                required
                autocomplete="current-password"
              />
              <Field
                label="New password"
                name="password"
                type="password"
                required
                autocomplete="new-password"
                hint="At least 12 characters. Your other sessions end."
              />
              <Field
                label="New password again"
                name="confirm"
                type="password"
                required
                autocomplete="new-password"
              />
              <button type="submit" class="button">Change password</button>
            </form>
          </section>
        )
        : (
          <section class="card">
            <p>
              You are signed in with the instance's admin token: it has no password to change. To
              replace it, set a new <code>ADMIN_TOKEN</code> and restart.
            </p>
          </section>
        )}
    </Layout>
  );
}
