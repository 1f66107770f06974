// Issue 5's figures: GraphQL link(path) against REST link lookup, and a 1000-event eventFeed page
// with each event's link against the REST page, in the same run; SQL queries per GraphQL page.
import { systemClock } from "../services/clock.ts";
import { recordEvents } from "../services/events.ts";
import { createFeedToken } from "../services/feed_tokens.ts";
import { createLink, type LinkRow } from "../services/links.ts";
import { createProject } from "../services/projects.ts";
import { countingSql } from "../tests/helpers/database.ts";
import type { Row } from "./sdk.ts";
import { type BenchDatabase, compare, fmt, postJson, serveService, wrk } from "./lib.ts";

const post = (body: unknown) => postJson(JSON.stringify(body));

export async function graphqlBenchmarks(db: BenchDatabase, seconds: number): Promise<Row[]> {
  const { sql } = db;
  const rows: Row[] = [];
  const { project, projectKey } = await createProject(sql, { name: "gql", enterprise: true });
  const envId = project.environments.production.project_id;
  const sdk = { "PROJECT-KEY": projectKey, "ENVIRONMENT": "production" };
  const links: LinkRow[] = [];
  for (let i = 0; i < 200; i++) {
    links.push(await createLink(sql, envId, { title: `Link ${i}`, tags: ["bench"] }));
  }
  const token = await createFeedToken(sql, systemClock, String(envId), "bench");
  const auth = { Authorization: `Bearer ${token.value}` };
  await recordEvents(
    sql,
    {
      environment: { id: envId, kind: "production", hashid: project.id },
      clock: systemClock,
      linkBaseUrl: "https://lnk.example.test",
    },
    Array.from({ length: 1000 }, (_, i) => ({
      type: "open" as const,
      occurred_at: new Date(),
      link_path: links[i % 200]!.path,
      device: { os: "iOS", model: "iPhone15,2", locale: "de_DE", app_version: "4.12.0" },
      user: { id: `user-${i}`, plan: "pro" },
      geo: { country: "DE" },
    })),
  );

  const counted = countingSql(sql);
  const service = serveService(counted.sql);
  try {
    const path = links[0]!.path;
    const lookup = await compare(
      () =>
        wrk(`${service.url}/graphql`, {
          connections: 32,
          seconds,
          headers: sdk,
          lua: post({ query: `{ link(path: "${path}") { ${LINK_FIELDS} } }` }),
        }),
      () =>
        wrk(`${service.url}/api/v1/sdk/link/${path}`, { connections: 32, seconds, headers: sdk }),
    );
    rows.push({
      name: "GraphQL link(path) vs REST lookup (-c32)",
      figure: `${fmt(lookup.service.rps, 0)} req/s vs REST ${fmt(lookup.baseline.rps, 0)} = ${
        fmt(lookup.ratio, 2)
      }×; p50 ${fmt(lookup.service.p50ms, 2)} ms (errors ${lookup.service.errors})`,
      target: "≥ 0.6× REST",
      pass: lookup.ratio >= 0.6 && lookup.service.errors === 0,
    });

    const feedQuery = {
      query: `query($id: ID!) { eventFeed(projectId: $id, first: 1000) {
        edges { node { id type occurredAt device user geo { country } link { path title } } }
        pageInfo { endCursor hasNextPage } } }`,
      variables: { id: String(envId) },
    };
    counted.queries.length = 0;
    const probe = await fetch(`${service.url}/graphql`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify(feedQuery),
    });
    const probed = await probe.json();
    if (!probed.data) throw new Error(JSON.stringify(probed));
    const events = probed.data?.eventFeed?.edges?.length ?? 0;
    const queries = counted.queries.length;
    const linkQueries = counted.queries.filter((q) => /from links/i.test(q)).length;

    const page = await compare(
      () =>
        wrk(`${service.url}/graphql`, {
          connections: 1,
          threads: 1,
          seconds,
          headers: auth,
          lua: post(feedQuery),
        }),
      () =>
        wrk(`${service.url}/api/v1/projects/${envId}/event_stream?limit=1000`, {
          connections: 1,
          threads: 1,
          seconds,
          headers: auth,
        }),
    );
    rows.push({
      name: "GraphQL eventFeed 1000 events with link { path title } vs REST page (-c1)",
      figure: `p50 ${fmt(page.service.p50ms)} ms vs REST ${fmt(page.baseline.p50ms)} ms = ${
        fmt(page.service.p50ms / page.baseline.p50ms, 2)
      }× the time; ${events} events, ${queries} SQL statements a page, ${linkQueries} for links`,
      target: "≤ 2× REST time; 1 link query",
      pass: page.service.p50ms <= 2 * page.baseline.p50ms && linkQueries === 1 && events === 1000,
    });
  } finally {
    await service.close();
  }
  return rows;
}

const LINK_FIELDS = `id title subtitle path accessPath updatedAt generatedFromPlatform data
  sdkGenerated tags active trackingCampaign trackingSource trackingMedium showPreview image
  iosCustomRedirect { url openAppIfInstalled } androidCustomRedirect { url openAppIfInstalled }
  desktopCustomRedirect { url }`;
