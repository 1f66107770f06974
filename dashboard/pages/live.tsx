import type { Environment } from "../../services/projects/projects.ts";
import type { Session } from "../../services/access/sessions.ts";
import { assetUrl } from "../assets.ts";
import { envBase, envCrumbs, EnvHeader, Layout } from "../layout.tsx";

/**
 * The environment's events as they are captured, newest first. The page itself is static;
 * live.js fills the table from the session-authenticated stream (…/live/stream).
 */
export function LivePage(props: { session: Session; env: Environment; projectName: string }) {
  return (
    <Layout
      title="Live events"
      session={props.session}
      crumbs={envCrumbs(props.env, props.projectName, "Live events")}
    >
      <EnvHeader
        session={props.session}
        env={props.env}
        projectName={props.projectName}
        active="live"
      />
      <section
        class="card"
        aria-labelledby="live-h"
        data-live-stream={`${envBase(props.env.id)}/live/stream`}
      >
        <div class="live-head">
          <h2 id="live-h">Live events</h2>
          <button type="button" class="button" data-live-toggle aria-pressed="false">
            Pause
          </button>
        </div>
        <p class="hint">
          Events captured from now on, newest first (the latest 200 are shown). Paused events are
          held and shown on resume. The feed is captured only while this environment has a feed
          token or a destination: without one, nothing arrives here.
        </p>
        <p class="live-status" role="status" aria-live="polite" data-live-status>
          Connecting…
        </p>
        <noscript>
          <p>This page needs JavaScript; the Export tab downloads past events without it.</p>
        </noscript>
        <div class="table-wrap">
          <table class="live-table">
            <thead>
              <tr>
                <th scope="col">Occurred at</th>
                <th scope="col">Type</th>
                <th scope="col">Link</th>
                <th scope="col">Event id</th>
              </tr>
            </thead>
            <tbody data-live-rows></tbody>
          </table>
        </div>
      </section>
      <script src={assetUrl("live.js")} defer></script>
    </Layout>
  );
}
