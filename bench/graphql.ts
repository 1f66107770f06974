// Issue 5's figures: GraphQL link(path) against REST link lookup, and a 1000-event eventFeed page
// with each event's link against the REST page, in the same run; SQL queries per GraphQL page.
import { countingSql } from "../tests/helpers/database.ts";
import type { Row } from "./sdk.ts";
import {
  type BenchDatabase,
  compare,
  fmt,
  postJson,
  seedFeedPage,
  serveService,
  wrk,
} from "./lib.ts";

const post = (body: unknown) => postJson(JSON.stringify(body));

export async function graphqlBenchmarks(db: BenchDatabase, seconds: number): Promise<Row[]> {
  const { sql } = db;
  const rows: Row[] = [];
  const { envId, sdk, auth, links } = await seedFeedPage(sql);

  // Statements are counted on a server of their own: the counting proxy costs time per query.
  const counted = countingSql(sql);
  const countedService = serveService(counted.sql);
  const service = serveService(sql);
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
      target: "≥ 0.8× REST",
      pass: lookup.ratio >= 0.8 && lookup.service.errors === 0,
    });

    const feedQuery = {
      query: `query($id: ID!) { eventFeed(projectId: $id, first: 1000) {
        edges { node { id type occurredAt device user geo { country } link { path title } } }
        pageInfo { endCursor hasNextPage } } }`,
      variables: { id: String(envId) },
    };
    counted.queries.length = 0;
    const probe = await fetch(`${countedService.url}/graphql`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify(feedQuery),
    });
    const probed = await probe.json();
    if (!probed.data) throw new Error(JSON.stringify(probed));
    const events = probed.data?.eventFeed?.edges?.length ?? 0;
    const queries = counted.queries.length;
    const linkQueries = counted.queries.filter((q) => /from links/i.test(q)).length;

    const restPage = () =>
      wrk(`${service.url}/api/v1/projects/${envId}/event_stream?limit=1000`, {
        connections: 1,
        threads: 1,
        seconds,
        headers: auth,
      });
    const graphqlPage = (query: unknown) => () =>
      wrk(`${service.url}/graphql`, {
        connections: 1,
        threads: 1,
        seconds,
        headers: auth,
        lua: post(query),
      });
    const page = await compare(graphqlPage(feedQuery), restPage);
    rows.push({
      name: "GraphQL eventFeed 1000 events with link { path title } vs REST page (-c1)",
      figure: `p50 ${fmt(page.service.p50ms)} ms vs REST ${fmt(page.baseline.p50ms)} ms = ${
        fmt(page.service.p50ms / page.baseline.p50ms, 2)
      }× the time; ${events} events, ${queries} SQL statements a page, ${linkQueries} for links`,
      target: "≤ 2× REST time; 1 link query",
      pass: page.service.p50ms <= 2 * page.baseline.p50ms && linkQueries === 1 && events === 1000,
    });

    // The same page as a Relay client asks for it: every FeedEvent field, each edge's cursor.
    const relay = await compare(graphqlPage(relayQuery(envId)), restPage);
    rows.push({
      name: "GraphQL eventFeed, Relay-style (every field, edge cursors, pageInfo) vs REST (-c1)",
      figure: `p50 ${fmt(relay.service.p50ms)} ms vs REST ${fmt(relay.baseline.p50ms)} ms = ${
        fmt(relay.service.p50ms / relay.baseline.p50ms, 2)
      }× the time (errors ${relay.service.errors})`,
      target: "≤ 2× REST time",
      pass: relay.service.p50ms <= 2 * relay.baseline.p50ms && relay.service.errors === 0,
    });
  } finally {
    await service.close();
    await countedService.close();
  }
  return rows;
}

function relayQuery(envId: number) {
  return {
    query: `query($id: ID!) { eventFeed(projectId: $id, first: 1000) {
      schemaVersion
      edges { cursor node { schemaVersion id type name occurredAt timeSpent project { id test }
        device user attribution geo { country }
        purchase { transactionId version amount currency productId store }
        link { path title } } }
      pageInfo { endCursor hasNextPage } } }`,
    variables: { id: String(envId) },
  };
}

const LINK_FIELDS = `id title subtitle path accessPath updatedAt generatedFromPlatform data
  sdkGenerated tags active trackingCampaign trackingSource trackingMedium showPreview image
  iosCustomRedirect { url openAppIfInstalled } androidCustomRedirect { url openAppIfInstalled }
  desktopCustomRedirect { url }`;
