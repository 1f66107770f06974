import type { CreatedFeedToken, FeedTokenSummary } from "../../services/feed/tokens.ts";
import type { Environment } from "../../services/projects/projects.ts";
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
} from "../layout.tsx";

export function TokensPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  tokens: FeedTokenSummary[];
  created?: CreatedFeedToken;
  notice?: string | undefined;
  error?: string | undefined;
  name?: string | undefined;
}) {
  const base = envBase(props.env.id);
  return (
    <Layout
      title="Feed tokens"
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, "Feed tokens")}
    >
      <EnvHeader
        session={props.session}
        env={props.env}
        projectName={props.projectName}
        active="tokens"
      />
      {props.notice && <Notice>{props.notice}</Notice>}
      {props.created && (
        <SecretBox
          label={`Feed token “${props.created.name}”`}
          value={props.created.value}
          id="token-value"
        />
      )}
      <div class="grid">
        <section class="card" aria-labelledby="tokens-h">
          <h2 id="tokens-h">Active tokens</h2>
          <p class="muted">
            A feed reader sends one as <code>Authorization: Bearer est_…</code> to{" "}
            <code>/api/v1/projects/{props.env.id}/event_stream</code>.
          </p>
          {props.tokens.length === 0
            ? (
              <Empty title="No feed tokens yet.">
                <p>
                  Create one for each system that reads this environment's event feed (a warehouse
                  loader, a CRM sync). The feed starts capturing events with the first token.
                </p>
              </Empty>
            )
            : (
              <ul class="list">
                {props.tokens.map((t) => (
                  <li>
                    <div class="main">
                      <span class="title">{t.name}</span>
                      <p class="muted">
                        <code>{t.hint}</code> · created {formatDate(t.created_at)} · last used{" "}
                        {formatDate(t.last_used_at)}
                      </p>
                      <p class="muted made-by">{madeByText(t)}</p>
                    </div>
                    <a class="button secondary" href={`${base}/tokens/${t.id}/revoke`}>
                      Revoke…
                    </a>
                  </li>
                ))}
              </ul>
            )}
        </section>
        <section class="card" aria-labelledby="new-token-h">
          <h2 id="new-token-h">Create a feed token</h2>
          {props.env.enterprise
            ? (
              <form method="post" action={`${base}/tokens`}>
                <Csrf session={props.session} />
                <Field
                  label="Name"
                  name="name"
                  required
                  value={props.name}
                  error={props.error}
                  hint="Who reads with it, so you know what a revocation stops."
                  placeholder="warehouse"
                />
                <button type="submit" class="button">Create token</button>
              </form>
            )
            : (
              <p>
                Feed tokens need Enterprise access. Turn it on in the{" "}
                <a href={`/dashboard/projects/${props.env.hashid}`}>project's settings</a>.
              </p>
            )}
        </section>
      </div>
    </Layout>
  );
}

export function RevokeTokenPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  token: FeedTokenSummary;
}) {
  const base = envBase(props.env.id);
  return (
    <Layout
      title="Revoke a feed token"
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, "Revoke a feed token")}
    >
      <div class="card">
        <h1>Revoke “{props.token.name}”?</h1>
        <p>
          The next feed read with <code>{props.token.hint}</code>{" "}
          answers 401. This cannot be undone: a reader that still needs access gets a new token.
        </p>
        <div class="actions">
          <form method="post" action={`${base}/tokens/${props.token.id}/revoke`}>
            <Csrf session={props.session} />
            <button type="submit" class="button danger">Revoke the token</button>
          </form>
          <a href={`${base}/tokens`}>Cancel</a>
        </div>
      </div>
    </Layout>
  );
}
