import type { Environment } from "../../services/projects/projects.ts";
import type { Session } from "../../services/access/sessions.ts";
import { assetUrl } from "../assets.ts";
import { envBase, envCrumbs, EnvHeader, Layout } from "../layout.tsx";

/**
 * The environment's events as they are captured, newest first. The page itself is static;
 * live.js fills the list from the session-authenticated stream (…/live/stream): each event
 * says what happened (a custom event's name, a purchase's amount, a session's length), then
 * when, through which link, from where, and its id.
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
        <ol class="live-list" data-live-rows aria-label="Events, newest first"></ol>
      </section>
      <script src={assetUrl("live.js")} defer></script>
    </Layout>
  );
}
