// GraphiQL for GET /graphql in a browser, with every file it needs served by this process from
// the npm package @graphql-yoga/render-graphiql: no CDN, so it works on a closed network. The
// page is small; the bundle, its stylesheet and the editor's three workers are separate files
// under /graphql/assets/, cached by the browser.
import type { GraphiQLOptions } from "graphql-yoga";
import type { Db } from "../db/connect.ts";
import type { Principal } from "../services/access/principal.ts";
import { listProjects } from "../services/projects/projects.ts";
import { AssetSet, escapeHtml, scriptJson, StaticAsset } from "./assets.ts";

export const GRAPHIQL_ASSET_PREFIX = "/graphql/assets/";

const JS = "text/javascript; charset=utf-8";

/**
 * Runs before the bundle: points the Monaco editor at its workers (same-origin files), then
 * renders GraphiQL once the bundle has run. A file rather than inline code, so the page's
 * Content-Security-Policy can forbid inline scripts.
 */
const BOOT = `(function () {
  var config = JSON.parse(document.getElementById("graphiql-config").textContent);
  self.MonacoEnvironment = {
    globalAPI: false,
    getWorkerUrl: function (_moduleId, label) { return config.workers[label]; },
  };
  document.addEventListener("DOMContentLoaded", function () {
    YogaGraphiQL.renderYogaGraphiQL(document.getElementById("root"), config.options);
  });
})();
`;

/**
 * On a narrow screen GraphiQL keeps its desktop layout: the query and the response side by side,
 * the response a few characters wide. Below 700 px they stack, each as wide as the screen, the
 * response under the query.
 */
const NARROW_CSS = `@media (max-width: 700px) {
  .graphiql-container .graphiql-sessions > [role="tabpanel"] {
    flex-direction: column;
  }
  .graphiql-container .graphiql-horizontal-drag-bar {
    display: none;
  }
  .graphiql-container .graphiql-editors,
  .graphiql-container .graphiql-response {
    min-height: 18rem;
  }
  .graphiql-container .graphiql-response {
    margin-top: 0.5rem;
  }
  .graphiql-container .graphiql-logo {
    display: none;
  }
}
`;

export const graphiqlAssets = new AssetSet(async () => {
  const bundle = await import("@graphql-yoga/render-graphiql/graphiql");
  const favicon = bundle.favicon.replace(/^data:image\/x-icon;base64,/, "");
  return [
    new StaticAsset("boot.js", JS, BOOT),
    new StaticAsset("graphiql.js", JS, bundle.js),
    new StaticAsset("graphiql.css", "text/css; charset=utf-8", bundle.css),
    new StaticAsset("narrow.css", "text/css; charset=utf-8", NARROW_CSS),
    new StaticAsset(
      "favicon.ico",
      "image/x-icon",
      Uint8Array.from(atob(favicon), (c) => c.charCodeAt(0)),
    ),
    new StaticAsset("editor.worker.js", JS, bundle.editorWorkerService),
    new StaticAsset("json.worker.js", JS, bundle.jsonWorker),
    new StaticAsset("graphql.worker.js", JS, bundle.graphqlWorker),
  ];
});

/**
 * What GraphiQL opens with (until the browser has tabs of its own): the admin graph, a links
 * screen with each link's counters and series, and where each credential goes.
 */
export const GRAPHIQL_DEFAULT_QUERY =
  `# The admin graph. Signed in to the dashboard in this browser? Queries and mutations run as
# you, with your role, and Variables already hold your newest project's production environment:
# press Run. Otherwise put the admin token or an sk_ API key in Headers below, replacing
# <admin token>, and an environment's numeric ID (the admin API's project_id) in Variables.
#
# The SDK fields (link, projectMetrics, generateLink) take the PROJECT-KEY and ENVIRONMENT
# headers instead, and eventFeed a feed token (Authorization: Bearer est_...).
# Ctrl+Space completes; the Docs pane shows every type.
query LinksScreen($projectId: ID!) {
  environment(projectId: $projectId) {
    name
    project {
      name
      linkDomain
    }
    links(first: 20, orderBy: { field: VIEWS, direction: DESC }) {
      edges {
        node {
          path
          title
          state
          metrics {
            totalViews
            totalInstalls
          }
          analytics(interval: DAY) {
            series {
              start
              views
              installs
            }
          }
        }
      }
      pageInfo {
        endCursor
        hasNextPage
      }
    }
    analytics(interval: DAY, groupBy: COUNTRY, limit: 5) {
      totals {
        views
        installs
      }
      groups {
        key
        totals {
          views
          installs
        }
      }
    }
  }
}
`;

/**
 * GraphiQL's options as this page passes them on: Yoga's GraphiQL also takes `variables`, the
 * Variables editor's first content (its typings leave it out).
 */
export type GraphiQLPageOptions = GraphiQLOptions & { variables?: string };

/**
 * The Variables the default query needs, so that it runs as it opens. With a dashboard session,
 * the production environment of the newest project the session sees (null when it sees none:
 * the query then answers null); without one, a placeholder beside the admin token's.
 */
export async function graphiqlVariables(
  db: Db,
  session: { principal: Principal } | null,
): Promise<string> {
  let projectId: string | null = "<project_id>";
  if (session) {
    const principal = session.principal;
    const [newest] = await listProjects(db, {
      limit: 1,
      memberOf: principal.type === "account" ? principal.id : undefined,
    });
    const id = newest?.environments.production.project_id;
    projectId = id === undefined ? null : String(id);
  }
  return JSON.stringify({ projectId }, null, 2);
}

/** GraphiQL's initial headers without a dashboard session: where the admin token goes. */
export const GRAPHIQL_DEFAULT_HEADERS = JSON.stringify(
  { Authorization: "Bearer <admin token>" },
  null,
  2,
);

/** The page's own policy: everything from this origin, nothing from anywhere else. */
export const GRAPHIQL_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // Monaco and GraphiQL set style attributes and add <style> elements at run time.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "worker-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Yoga's `renderGraphiQL`: the HTML of GET /graphql for a browser. */
export async function renderGraphiQL(options: GraphiQLPageOptions): Promise<string> {
  const url = async (name: string) => GRAPHIQL_ASSET_PREFIX + await graphiqlAssets.pathOf(name);
  const config = {
    options,
    workers: {
      editorWorkerService: await url("editor.worker.js"),
      json: await url("json.worker.js"),
      graphql: await url("graphql.worker.js"),
    },
  };
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(options.title ?? "GraphiQL")}</title>
    <link rel="icon" href="${await url("favicon.ico")}" />
    <link rel="stylesheet" href="${await url("graphiql.css")}" />
    <link rel="stylesheet" href="${await url("narrow.css")}" />
    <script id="graphiql-config" type="application/json">${scriptJson(config)}</script>
    <script src="${await url("boot.js")}"></script>
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>GraphiQL needs JavaScript.</noscript>
    <div id="root"></div>
    <script src="${await url("graphiql.js")}"></script>
  </body>
</html>
`;
}
