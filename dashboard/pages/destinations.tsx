// A minimal destinations page: register and remove push destinations. Delivery state, pause,
// test deliveries and secret rotation join this page with the push worker.
import type { DestinationStatus as Destination } from "../../services/destinations.ts";
import type { Environment } from "../../services/projects.ts";
import type { Session } from "../../services/sessions.ts";
import {
  Csrf,
  Empty,
  envBase,
  envCrumbs,
  EnvHeader,
  Field,
  formatDate,
  Layout,
  Notice,
} from "../layout.tsx";

export function DestinationsPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  destinations: Destination[];
  notice?: string | undefined;
  error?: string | undefined;
  url?: string | undefined;
}) {
  const base = envBase(props.env.id);
  return (
    <Layout
      title="Destinations"
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, "Destinations")}
    >
      <EnvHeader env={props.env} projectName={props.projectName} active="destinations" />
      {props.notice && <Notice>{props.notice}</Notice>}
      <div class="grid">
        <section class="card" aria-labelledby="dest-h">
          <h2 id="dest-h">Push destinations</h2>
          <p class="muted">
            Web addresses (http or https) that receive this environment's events as they are
            captured.
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
                  <li>
                    <div class="main">
                      <code class="title">{d.url}</code>
                      <p class="muted">added {formatDate(d.created_at)}</p>
                    </div>
                    <a class="button secondary" href={`${base}/destinations/${d.id}/delete`}>
                      Remove…
                    </a>
                  </li>
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
              value={props.url}
              error={props.error}
              placeholder="https://hooks.example.com/events"
            />
            <button type="submit" class="button">Add destination</button>
          </form>
        </section>
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
  const base = envBase(props.env.id);
  return (
    <Layout
      title="Remove a destination"
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, "Remove a destination")}
    >
      <div class="card">
        <h1>Remove this destination?</h1>
        <p>
          <code>{props.destination.url}</code> stops receiving events at once.
        </p>
        <div class="actions">
          <form method="post" action={`${base}/destinations/${props.destination.id}/delete`}>
            <Csrf session={props.session} />
            <button type="submit" class="button danger">Remove the destination</button>
          </form>
          <a href={`${base}/destinations`}>Cancel</a>
        </div>
      </div>
    </Layout>
  );
}
