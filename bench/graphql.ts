// Issue 5's figures: GraphQL link(path) against REST link lookup, and a 1000-event eventFeed page
// with each event's link against the REST page, in the same run; SQL queries per GraphQL page.
import { CLI_AUDIT } from "../services/access/audit.ts";
import { systemClock } from "../infra/clock.ts";
import { recordEvents } from "../services/events/record.ts";
import { createManagedLink } from "../services/links/manage.ts";
import { createProject } from "../services/projects/projects.ts";
import type { Sql } from "../db/connect.ts";
import postgres from "postgres";
import { judge, notFinite, type Row } from "./rows.ts";
import {
  ADMIN_TOKEN,
  type BenchDatabase,
  compare,
  fmt,
  median,
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

  // Statements are counted on a server of their own, whose pool reports each statement it sends
  // (BEGIN and COMMIT included; fragments are part of their statement, not statements).
  const counted = { queries: [] as string[] };
  // One connection, made before counting: a new connection's first statement is the driver's
  // own type lookup.
  const countingPool = postgres(db.url, {
    max: 1,
    onnotice: () => {},
    debug: (_connection, query) => counted.queries.push(query),
  });
  const countedService = serveService(countingPool);
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
    await countingPool`select 1`;
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

    rows.push(await linksScreen(sql, service.url, seconds));
  } finally {
    await service.close();
    await countedService.close();
    await countingPool.end({ timeout: 5 });
  }
  return rows;
}

const DAY = 24 * 60 * 60 * 1000;
const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

/** 50 managed links with 30 days of views and installs (2,000 events). */
async function seedLinksScreen(sql: Sql): Promise<number> {
  const { project } = await createProject(sql, { name: "screen", enterprise: true }, CLI_AUDIT);
  const envId = project.environments.production.project_id;
  const paths: string[] = [];
  for (let i = 0; i < 50; i++) {
    paths.push(
      (await createManagedLink(sql, envId, { title: `Screen ${i}` }, "api", CLI_AUDIT)).path,
    );
  }
  const now = Date.now();
  await recordEvents(
    sql,
    {
      environment: { id: envId, kind: "production", hashid: project.id },
      clock: systemClock,
      linkBaseUrl: "https://lnk.example.test",
    },
    Array.from({ length: 2000 }, (_, i) => ({
      type: i % 4 === 0 ? "install" as const : "view" as const,
      occurred_at: new Date(now - (i % 30) * DAY - (i % 24) * 3_600_000),
      link_path: paths[i % 50]!,
      geo: { country: i % 3 ? "DE" : "FR" },
    })),
  );
  return envId;
}

/** Times `run` over and over for `seconds`; throws if an answer was not the one expected. */
async function timed(run: () => Promise<void>, seconds: number): Promise<number[]> {
  const times: number[] = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  return times;
}

/** At most `limit` of `tasks` at a time (a browser's connections per host over HTTP/1.1). */
async function pool(tasks: (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < tasks.length) await tasks[next++]!();
    }),
  );
}

/**
 * A frontend's links screen: 50 links, each with its lifetime counters and a 30-day daily
 * series. GraphQL asks once; over REST the client lists the links, then asks the analytics
 * route for each one (six at a time, as a browser does over HTTP/1.1).
 */
async function linksScreen(sql: Sql, base: string, seconds: number): Promise<Row> {
  const envId = await seedLinksScreen(sql);
  const problems: string[] = [];
  const query = JSON.stringify({
    query: `query($id: ID!) { environment(projectId: $id) { links(first: 50) {
      edges { node { path title state
        metrics { totalViews totalInstalls }
        analytics(interval: DAY) { series { start views installs } } } }
      pageInfo { endCursor hasNextPage } } } }`,
    variables: { id: String(envId) },
  });
  const graphql = async () => {
    const res = await fetch(`${base}/graphql`, {
      method: "POST",
      headers: { ...admin, "Content-Type": "application/json" },
      body: query,
    });
    const body = await res.json();
    const edges = body.data?.environment?.links?.edges;
    if (body.errors || edges?.length !== 50 || edges[0].node.analytics.series.length !== 31) {
      throw new Error(`unexpected GraphQL answer: ${JSON.stringify(body).slice(0, 300)}`);
    }
  };
  const rest = async () => {
    const list = await fetch(`${base}/api/v1/projects/${envId}/links?limit=50`, {
      headers: admin,
    });
    const { links } = await list.json();
    if (links?.length !== 50) throw new Error(`unexpected REST list: ${list.status}`);
    await pool(
      links.map((link: { path: string }) => async () => {
        const res = await fetch(
          `${base}/api/v1/projects/${envId}/analytics?interval=day&link=${link.path}`,
          { headers: admin },
        );
        const body = await res.json();
        if (body.series?.length !== 31) throw new Error(`unexpected REST analytics: ${res.status}`);
      }),
      6,
    );
  };
  const g: number[] = [];
  const r: number[] = [];
  try {
    await graphql();
    await rest();
    // Alternating rounds, so that a change in the machine's load reaches both sides alike.
    for (let round = 0; round < 3; round++) {
      r.push(...await timed(rest, seconds / 3));
      g.push(...await timed(graphql, seconds / 3));
    }
  } catch (err) {
    problems.push(err instanceof Error ? err.message : String(err));
  }
  const ratio = median(g) / median(r);
  return {
    name:
      "GraphQL links screen (50 links, metrics, 30-day daily series) vs REST list + analytics " +
      "per link (6 at a time)",
    figure: `p50 ${fmt(median(g))} ms vs REST ${fmt(median(r))} ms = ${fmt(ratio, 2)}× the time ` +
      `(${g.length} and ${r.length} screens)`,
    target: "≤ 0.5× REST time",
    outcome: judge(ratio <= 0.5, [...problems, ...notFinite({ ratio })]),
  };
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
