import type { Environment } from "../../services/projects/projects.ts";
import type { Session } from "../../services/access/sessions.ts";
import {
  envBase,
  envCrumbs,
  EnvHeader,
  EventTypeBoxes,
  Field,
  Layout,
  Notice,
} from "../layout.tsx";

export function ExportPage(props: {
  session: Session;
  env: Environment;
  projectName: string;
  from: string;
  to: string;
  types: string[];
  retentionDays: number;
  error?: string | undefined;
}) {
  return (
    <Layout
      title="Export"
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, "Export")}
    >
      <EnvHeader
        session={props.session}
        env={props.env}
        projectName={props.projectName}
        active="export"
      />
      <section class="card" aria-labelledby="export-h">
        <h2 id="export-h">Download the analytics history</h2>
        <p>
          Every recorded event of this environment whose time falls in the range, one JSON object a
          line (NDJSON), as the feed delivers them. History is kept for {props.retentionDays}{" "}
          days; one export covers at most 31 days.
        </p>
        {props.error && <Notice kind="error">{props.error}</Notice>}
        <form method="get" action={`${envBase(props.env.id)}/export.ndjson`}>
          <div class="grid">
            <Field
              label="From (UTC, inclusive)"
              name="from"
              type="date"
              value={props.from}
              required
            />
            <Field label="To (UTC, inclusive)" name="to" type="date" value={props.to} required />
          </div>
          <EventTypeBoxes
            name="types"
            hint="None ticked exports every type."
            selected={props.types}
          />
          <button type="submit" class="button">Download NDJSON</button>
        </form>
      </section>
    </Layout>
  );
}
