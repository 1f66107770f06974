// Issue 5's figures: GraphQL link(path) against REST link lookup, and a 1000-event eventFeed page
// with each event's link against the REST page, in the same run; SQL queries per GraphQL page.
import { countingSql } from "../tests/helpers/database.ts";
import { judge, notFinite, type Row } from "./rows.ts";
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

/** GraphQL errors come with status 200: every answer timed must hold `field`'s data. */
const answers = (field: string) => ({
  status: 200,
  bodyPrefix: `{"data":{"${field}":{`,
  bodyExcludes: ['"errors":'],
});

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
          expect: answers("link"),
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
      outcome: judge(lookup.ratio >= 0.8, [
        ...lookup.problems,
        ...notFinite({ ratio: lookup.ratio }),
      ]),
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
    if (!probed.data || probed.errors) throw new Error(JSON.stringify(probed).slice(0, 300));
    const events = probed.data?.eventFeed?.edges?.length ?? 0;
    const queries = counted.queries.length;
    const linkQueries = counted.queries.filter((q) => /from links/i.test(q)).length;

    // The REST page compared against is as full.
    const restProbe = await fetch(
      `${service.url}/api/v1/projects/${envId}/event_stream?limit=1000`,
      { headers: auth },
    );
    const restEvents = restProbe.status === 200 ? (await restProbe.json()).events?.length ?? 0 : 0;
    if (restProbe.status !== 200) await restProbe.body?.cancel();
    const pageProblems = [
      ...(events === 1000 ? [] : [`the GraphQL page held ${events} events, not 1000`]),
      ...(restEvents === 1000 ? [] : [`the REST page held ${restEvents} events, not 1000`]),
    ];

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
        expect: answers("eventFeed"),
      });
    const page = await compare(graphqlPage(feedQuery), restPage);
    rows.push({
      name: "GraphQL eventFeed 1000 events with link { path title } vs REST page (-c1)",
      figure: `p50 ${fmt(page.service.p50ms)} ms vs REST ${fmt(page.baseline.p50ms)} ms = ${
        fmt(page.service.p50ms / page.baseline.p50ms, 2)
      }× the time; ${events} events, ${queries} SQL statements a page, ${linkQueries} for links`,
      target: "≤ 2× REST time; 1 link query",
      outcome: judge(
        page.service.p50ms <= 2 * page.baseline.p50ms && linkQueries === 1,
        [...pageProblems, ...page.problems],
      ),
    });

    // The same page as a Relay client asks for it: every FeedEvent field, each edge's cursor.
    const relay = await compare(graphqlPage(relayQuery(envId)), restPage);
    rows.push({
      name: "GraphQL eventFeed, Relay-style (every field, edge cursors, pageInfo) vs REST (-c1)",
      figure: `p50 ${fmt(relay.service.p50ms)} ms vs REST ${fmt(relay.baseline.p50ms)} ms = ${
        fmt(relay.service.p50ms / relay.baseline.p50ms, 2)
      }× the time (errors ${relay.service.errors})`,
      target: "≤ 2× REST time",
      outcome: judge(
        relay.service.p50ms <= 2 * relay.baseline.p50ms,
        [...pageProblems, ...relay.problems],
      ),
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
