// deno task profile -- <scenario> [--seconds N]: serves the app in this process under wrk and
// writes a CPU profile (run with --cpu-prof), then prints the top frames by self time. For
// finding where a hot path's JavaScript time goes before optimising it.
import { CLI_AUDIT } from "../services/access/audit.ts";
import { parseArgs } from "node:util";
import { createLink } from "../services/links/links.ts";
import { createProject } from "../services/projects/projects.ts";
import {
  benchDatabase,
  postJson,
  seedFeedPage,
  seedMetricsLinks,
  serveService,
  wrk,
} from "./lib.ts";

const argv = Deno.args[0] === "--" ? Deno.args.slice(1) : Deno.args;
const { values, positionals } = parseArgs({
  args: argv,
  allowPositionals: true,
  options: { seconds: { type: "string", default: "8" } },
});
const scenario = positionals[0] ?? "graphql-link";
const seconds = Number(values.seconds);

const db = await benchDatabase();
const { sql } = db;
const { envId, sdk, auth, links } = await seedFeedPage(sql);
const redirecting = await createLink(sql, envId, {
  title: "Redirect",
  ios_custom_redirect: { url: "https://apps.apple.com/app/id1" },
});
const service = serveService(sql);
const path = links[0]!.path;
const feedQuery = (fields: string) =>
  postJson(JSON.stringify({
    query: `query($id: ID!) { eventFeed(projectId: $id, first: 1000) { ${fields} } }`,
    variables: { id: String(envId) },
  }));
/**
 * The metrics scenarios' project: 10,000 active links with counters, seeded as bench/sdk.ts
 * seeds them (one created link, then 9,999 in one insert), in a project of their own.
 */
async function seedMetrics() {
  const { project, projectKey } = await createProject(
    sql,
    { name: "metrics", enterprise: true },
    CLI_AUDIT,
  );
  const env = project.environments.production.project_id;
  await createLink(sql, env, { title: "Bench link", tags: ["bench"], tracking_campaign: "spring" });
  await seedMetricsLinks(sql, env);
  return { "PROJECT-KEY": projectKey, "ENVIRONMENT": "production" };
}
const metricsHeaders = scenario.endsWith("-metrics") ? await seedMetrics() : {};
const scenarios: Record<string, () => ReturnType<typeof wrk>> = {
  "graphql-link": () =>
    wrk(`${service.url}/graphql`, {
      connections: 32,
      seconds,
      headers: sdk,
      lua: postJson(JSON.stringify({ query: `{ link(path: "${path}") { id path title } }` })),
    }),
  "rest-link": () =>
    wrk(`${service.url}/api/v1/sdk/link/${path}`, { connections: 32, seconds, headers: sdk }),
  "rest-feed": () =>
    wrk(`${service.url}/api/v1/projects/${envId}/event_stream?limit=1000`, {
      connections: 1,
      threads: 1,
      seconds,
      headers: auth,
    }),
  "graphql-feed": () =>
    wrk(`${service.url}/graphql`, {
      connections: 1,
      threads: 1,
      seconds,
      headers: auth,
      lua: feedQuery(
        "edges { node { id type occurredAt device user geo { country } link { path title } } }",
      ),
    }),
  "graphql-relay": () =>
    wrk(`${service.url}/graphql`, {
      connections: 1,
      threads: 1,
      seconds,
      headers: auth,
      lua: feedQuery(
        `schemaVersion edges { cursor node { schemaVersion id type name occurredAt timeSpent
        project { id test } device user attribution geo { country }
        purchase { transactionId version amount currency productId store } link { path title } } }
        pageInfo { endCursor hasNextPage }`,
      ),
    }),
  "rest-metrics": () =>
    wrk(`${service.url}/api/v1/sdk/metrics_for_project`, {
      connections: 1,
      threads: 1,
      seconds,
      headers: metricsHeaders,
    }),
  // The query bench/sdk.ts sends.
  "graphql-metrics": () =>
    wrk(`${service.url}/graphql`, {
      connections: 1,
      threads: 1,
      seconds,
      headers: metricsHeaders,
      lua: postJson(JSON.stringify({
        query: `{ projectMetrics { id name path title active sdkGenerated tags
              trackingCampaign totalViews totalOpens totalInstalls totalReinstalls totalTimeSpent
              totalReactivations totalAppOpens totalUserReferred totalRevenue } }`,
      })),
    }),
  "link-host": () =>
    wrk(`${service.url}/${redirecting.path}`, {
      connections: 32,
      seconds,
      headers: { "User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)" },
      expect: { status: 302 },
    }),
};
const result = await scenarios[scenario]!();
// deno-lint-ignore no-console
console.log(scenario, JSON.stringify(result));
await service.close();
await db.close();
