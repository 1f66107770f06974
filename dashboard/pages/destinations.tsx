// Push destinations: register one (its signing secret shown once), their delivery state, pause
// and resume, a test delivery, a new secret (after a confirmation), removal (after another).
import type { Child } from "hono/jsx";
import type { DestinationStatus as Destination } from "../../services/destinations/destinations.ts";
import type { Environment } from "../../services/projects/projects.ts";
import type { Session } from "../../services/access/sessions.ts";
import {
  Csrf,
  Empty,
  envBase,
  envCrumbs,
  EnvHeader,
  EventTypeBoxes,
  Field,
  formatDate,
  formatNumber,
  Layout,
  madeByText,
  Notice,
  SecretBox,
} from "../layout.tsx";

/** What the add form shows again beside its errors. */
export interface DestinationFormValues {
  url: string;
  types: string[];
}

export interface DestinationFormErrors {
  url?: string;
  types?: string;
}

/** A test delivery's outcome, as the page reports it. */
export interface TestOutcome {
  url: string;
  status: number | null;
  error: string | null;
  durationMs: number;
}

const STATE_LABEL = { active: "Active", paused: "Paused", failing: "Failing" } as const;

function TestResult(props: { outcome: TestOutcome }) {
  const o = props.outcome;
  const ok = o.status !== null && o.status >= 200 && o.status < 300;
  return (
    <Notice kind={ok ? "ok" : "error"}>
      <span class="test-result">
        Test delivery to <code>{o.url}</code>: {ok
          ? `the receiver answered ${o.status} in ${o.durationMs} ms.`
          : o.status !== null
          ? `the receiver answered ${o.status} (${o.error ?? "not a 2xx"}).`
          : `no answer (${o.error ?? "no response"}).`}
      </span>
    </Notice>
  );
}

function DestinationItem(props: { base: string; d: Destination; session: Session }) {
  const { d, base } = props;
  const url = `${base}/destinations/${d.id}`;
  return (
    <li data-destination={String(d.id)}>
      <div class="main">
        <code class="title">{d.url}</code>
        <span class={`badge state-${d.state}`}>{STATE_LABEL[d.state]}</span>
        <p class="muted">
          {d.event_types.length === 0 ? "every event type" : d.event_types.join(", ")}
        </p>
        <dl class="stats dest-stats">
          <div>
            <dt>Pending</dt>
            <dd>{formatNumber(d.pending)}</dd>
          </div>
          <div>
            <dt>Dropped</dt>
            <dd>{formatNumber(d.dropped)}</dd>
          </div>
        </dl>
        <p class="muted">
          Last attempt {formatDate(d.last_attempt_at)} · last success{" "}
          {formatDate(d.last_success_at)} · added {formatDate(d.created_at)}
        </p>
        <p class="muted made-by">{madeByText(d)}</p>
        {d.last_error && (
          <p class="error-text last-error">
            Last error: <span>{d.last_error}</span>
          </p>
        )}
        <div class="actions">
          <form method="post" action={`${url}/test`}>
            <Csrf session={props.session} />
            <button type="submit" class="button secondary">Send a test</button>
          </form>
          <form method="post" action={`${url}/paused`}>
            <Csrf session={props.session} />
            <input type="hidden" name="paused" value={d.state === "paused" ? "false" : "true"} />
            <button type="submit" class="button secondary">
              {d.state === "paused" ? "Resume" : "Pause"}
            </button>
          </form>
          <a class="button secondary" href={`${url}/rotate`}>New secret…</a>
          <a class="button secondary" href={`${url}/delete`}>Remove…</a>
        </div>
      </div>
    </li>
  );
}

export function DestinationsPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  destinations: Destination[];
  notice?: string | undefined;
  /** A secret to show once: a new destination's, or a rotated one's. */
  secret?: { label: string; value: string } | undefined;
  test?: TestOutcome | undefined;
  values?: DestinationFormValues | undefined;
  errors?: DestinationFormErrors | undefined;
}) {
  const base = envBase(props.env.id);
  const values = props.values ?? { url: "", types: [] };
  const errors = props.errors ?? {};
  return (
    <Layout
      title="Destinations"
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, "Destinations")}
    >
      <EnvHeader
        session={props.session}
        env={props.env}
        projectName={props.projectName}
        active="destinations"
      />
      {props.notice && <Notice>{props.notice}</Notice>}
      {props.test && <TestResult outcome={props.test} />}
      {props.secret && (
        <SecretBox {...props.secret} id="webhook-secret">
          Your receiver verifies every delivery's <code>webhook-signature</code>{" "}
          with it (any Standard Webhooks library does).
        </SecretBox>
      )}
      <div class="grid">
        <section class="card" aria-labelledby="dest-h">
          <h2 id="dest-h">Push destinations</h2>
          <p class="muted">
            Web addresses (http or https) that receive this environment's events as they are
            captured: signed POSTs, in order, at least once, retried until they succeed or leave the
            feed's seven days (then counted as dropped).
          </p>
          {props.destinations.length === 0
            ? (
              <Empty title="No destinations yet.">
                <p>
                  Add the URL of a webhook receiver (your backend, a workflow tool) to have events
                  pushed to it instead of polling the feed.
                </p>
              </Empty>
            )
            : (
              <ul class="list">
                {props.destinations.map((d) => (
                  <DestinationItem base={base} d={d} session={props.session} />
                ))}
              </ul>
            )}
        </section>
        <section class="card" aria-labelledby="new-dest-h">
          <h2 id="new-dest-h">Add a destination</h2>
          <form method="post" action={`${base}/destinations`}>
            <Csrf session={props.session} />
            <Field
              label="URL"
              name="url"
              type="url"
              required
              value={values.url}
              error={errors.url}
              placeholder="https://hooks.example.com/events"
            />
            <EventTypeBoxes
              name="event_types"
              hint="None ticked sends every type."
              selected={values.types}
              error={errors.types}
            />
            <button type="submit" class="button">Add destination</button>
          </form>
        </section>
      </div>
    </Layout>
  );
}

/** A confirmation page for removing or re-keying a destination. */
function ConfirmDestination(props: {
  session: Session;
  env: Environment;
  projectName: string;
  destination: Destination;
  title: string;
  question: string;
  children?: Child;
  action: string;
  button: string;
}) {
  const base = envBase(props.env.id);
  return (
    <Layout
      title={props.title}
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, props.title)}
    >
      <div class="card">
        <h1>{props.question}</h1>
        <p>
          <code class="dest-url">{props.destination.url}</code>
        </p>
        <p>{props.children}</p>
        <div class="actions">
          <form
            method="post"
            action={`${base}/destinations/${props.destination.id}/${props.action}`}
          >
            <Csrf session={props.session} />
            <button type="submit" class="button danger">{props.button}</button>
          </form>
          <a href={`${base}/destinations`}>Cancel</a>
        </div>
      </div>
    </Layout>
  );
}

export function RemoveDestinationPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  destination: Destination;
}) {
  return (
    <ConfirmDestination
      {...props}
      title="Remove a destination"
      question="Remove this destination?"
      action="delete"
      button="Remove the destination"
    >
      It stops receiving events at once; its undelivered events are not sent.
    </ConfirmDestination>
  );
}

export function RotateSecretPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  destination: Destination;
}) {
  return (
    <ConfirmDestination
      {...props}
      title="Replace a destination's secret"
      question="Replace this destination's signing secret?"
      action="rotate"
      button="Replace the secret"
    >
      The new secret is shown once. For 24 hours every delivery is signed with both the old and the
      new secret, so you can update the receiver without losing a delivery; after that only the new
      one signs.
    </ConfirmDestination>
  );
}
