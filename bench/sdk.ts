// Issue 3's figures: link lookup, metrics over 10,000 links, link-host redirects and ingestion,
// each against a bare Deno.serve + postgres.js handler running the same SQL in the same run.
import { connect, type Sql } from "../db/connect.ts";
import { judge, notFinite, report, type Row } from "./rows.ts";
import {
  type BenchDatabase,
  compare,
  fmt,
  pgSocketUrl,
  postJson,
  seedMetricsLinks,
  seedSdkLink,
  serve,
  type Served,
  serveService,
  wrk,
} from "./lib.ts";

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148";

export async function sdkBenchmarks(db: BenchDatabase, seconds: number): Promise<Row[]> {
  const { sql } = db;
  const rows: Row[] = [];
  const { projectKey, envId, link } = await seedSdkLink(sql);
  const headers = { "PROJECT-KEY": projectKey, "ENVIRONMENT": "production" };

  const service = serveService(sql);
  const lookupBare = bareLookup(sql);
  const baseline = serve(async (req) => {
    const url = new URL(req.url);
    if (url.pathname.startsWith("/link/")) return await lookupBare(req);
    if (url.pathname === "/metrics") {
      const [row] = await sql`
        select coalesce(json_agg(m order by m.total_views desc, m.id), '[]')::text as body
        from (select l.id, l.title, l.path, c.* from links l join link_counters c on c.link_id = l.id
              where l.environment_id = ${envId} and l.active) m`;
      return new Response(row!.body, { headers: { "content-type": "application/json" } });
    }
    if (url.pathname.startsWith("/r/")) {
      const [row] = await sql`select ios_custom_redirect from links where path = ${
        url.pathname.slice(3)
      }`;
      return Response.redirect(row!.ios_custom_redirect.url, 302);
    }
    return new Response("not found", { status: 404 });
  });

  try {
    // Link lookup at -c32, the concurrency where the bare stack peaks (PERFORMANCE.md).
    const lookup = await compare(
      () =>
        wrk(`${service.url}/api/v1/sdk/link/${link.path}`, { connections: 32, seconds, headers }),
      () => wrk(`${baseline.url}/link/${link.path}`, { connections: 32, seconds }),
    );
    rows.push({
      name: "link lookup (-c32)",
      figure: `${fmt(lookup.service.rps, 0)} req/s vs baseline ${fmt(lookup.baseline.rps, 0)} = ${
        fmt(lookup.ratio, 2)
      }×; p50 ${fmt(lookup.service.p50ms, 2)} ms, p99 ${
        fmt(lookup.service.p99ms, 2)
      } ms (errors ${lookup.service.errors})`,
      target: "≥ 0.85× baseline",
      outcome: judge(lookup.ratio >= 0.85, [
        ...lookup.problems,
        ...notFinite({ ratio: lookup.ratio }),
      ]),
    });

    rows.push(
      ...await unixSocketRows(db, link.path, headers, seconds, { service, bare: baseline }),
    );

    // The same lookup after a sustained load: the throughput of a pool that has served
    // hundreds of thousands of queries (db/pool_queues.ts) against that of a fresh one.
    const fresh = await wrk(`${service.url}/api/v1/sdk/link/${link.path}`, {
      connections: 32,
      seconds,
      headers,
    });
    const load = await wrk(`${service.url}/api/v1/sdk/link/${link.path}`, {
      connections: 32,
      seconds: seconds * 6,
      headers,
    });
    const sustained = await wrk(`${service.url}/api/v1/sdk/link/${link.path}`, {
      connections: 32,
      seconds,
      headers,
    });
    rows.push({
      name: `link lookup after ${seconds * 7} s of load vs at its start (-c32)`,
      figure: `${fmt(sustained.rps, 0)} req/s vs ${fmt(fresh.rps, 0)} = ${
        fmt(sustained.rps / fresh.rps, 2)
      }×`,
      target: "≥ 0.85×: no decay",
      outcome: judge(sustained.rps >= 0.85 * fresh.rps, [
        ...fresh.problems.map((p) => `at its start: ${p}`),
        ...load.problems.map((p) => `during the load: ${p}`),
        ...sustained.problems,
      ]),
    });

    const redirect = await compare(
      () =>
        wrk(`${service.url}/${link.path}`, {
          connections: 32,
          seconds,
          headers: { "User-Agent": IPHONE },
          expect: { status: 302 },
        }),
      () =>
        wrk(`${baseline.url}/r/${link.path}`, {
          connections: 32,
          seconds,
          expect: { status: 302 },
        }),
    );
    rows.push({
      name: "link-host redirect, view recorded (-c32)",
      figure: `${fmt(redirect.service.rps, 0)} req/s vs baseline ${
        fmt(redirect.baseline.rps, 0)
      } = ${fmt(redirect.ratio, 2)}×; p50 ${fmt(redirect.service.p50ms, 2)} ms, p99 ${
        fmt(redirect.service.p99ms, 2)
      } ms`,
      target: "≥ 0.75× baseline",
      // Every answer must be the 302 timed.
      outcome: judge(redirect.ratio >= 0.75, [
        ...redirect.problems,
        ...notFinite({ ratio: redirect.ratio }),
      ]),
    });

    // Metrics: 10,000 active links with counters.
    await seedMetricsLinks(sql, envId);
    const nonEmpty = { status: 200, bodyPrefix: "[{" };
    const metrics = await compare(
      () =>
        wrk(`${service.url}/api/v1/sdk/metrics_for_project`, {
          connections: 1,
          threads: 1,
          seconds,
          headers,
          expect: nonEmpty,
        }),
      () =>
        wrk(`${baseline.url}/metrics`, { connections: 1, threads: 1, seconds, expect: nonEmpty }),
    );
    // The 200s timed are this answer (and its ETag is the one the 304s below are asked with):
    // the 10,000 links, not an empty or short list.
    const probe = await fetch(`${service.url}/api/v1/sdk/metrics_for_project`, { headers });
    const etag = probe.headers.get("etag") ?? "";
    const answered = probe.status === 200 ? await probe.json() : await probe.text();
    const metricsLinks = Array.isArray(answered) ? answered.length : 0;
    rows.push({
      name: "metrics, 10,000 links (-c1)",
      figure: `p50 ${fmt(metrics.service.p50ms)} ms, p99 ${fmt(metrics.service.p99ms)} ms, ${
        fmt(metrics.service.rps)
      } req/s vs baseline p50 ${fmt(metrics.baseline.p50ms)} ms (${
        fmt(metrics.ratio, 2)
      }× its req/s)`,
      target: "p50 ≤ 1.0× baseline p50",
      outcome: judge(metrics.service.p50ms <= metrics.baseline.p50ms, [
        ...metrics.problems,
        ...(metricsLinks === 10_000 ? [] : [`the answer holds ${metricsLinks} links, not 10,000`]),
      ]),
    });

    // A client that already has the answer: 304 from the tag alone.
    const notModified = await wrk(`${service.url}/api/v1/sdk/metrics_for_project`, {
      connections: 1,
      threads: 1,
      seconds,
      headers: { ...headers, "If-None-Match": etag },
      expect: { status: 304 },
    });
    rows.push({
      name: "metrics, 10,000 links, If-None-Match (-c1)",
      figure: `p50 ${fmt(notModified.p50ms, 2)} ms (304) vs ${fmt(metrics.service.p50ms)} ms (200)`,
      target: "304 without building the body",
      // Every answer must be the 304 timed.
      outcome: judge(notModified.p50ms < metrics.service.p50ms, [
        ...(probe.status === 200 && etag ? [] : [
          `the first request answered ${probe.status} with ETag ${JSON.stringify(etag)}`,
        ]),
        ...notModified.problems,
        ...metrics.problems.filter((p) => !p.startsWith("baseline: ")).map((p) => `the 200s: ${p}`),
      ]),
    });

    const graphqlMetrics = await compare(
      () =>
        wrk(`${service.url}/graphql`, {
          connections: 1,
          threads: 1,
          seconds,
          headers,
          lua: postJson(JSON.stringify({
            query: `{ projectMetrics { id name path title active sdkGenerated tags
              trackingCampaign totalViews totalOpens totalInstalls totalReinstalls totalTimeSpent
              totalReactivations totalAppOpens totalUserReferred totalRevenue } }`,
          })),
          // GraphQL errors come with status 200: every answer must hold the links.
          expect: {
            status: 200,
            bodyPrefix: '{"data":{"projectMetrics":[{',
            bodyExcludes: ['"errors":'],
          },
        }),
      () =>
        wrk(`${service.url}/api/v1/sdk/metrics_for_project`, {
          connections: 1,
          threads: 1,
          seconds,
          headers,
          expect: nonEmpty,
        }),
    );
    rows.push({
      name: "GraphQL projectMetrics, 10,000 links, vs REST metrics (-c1)",
      figure: `p50 ${fmt(graphqlMetrics.service.p50ms)} ms vs REST ${
        fmt(graphqlMetrics.baseline.p50ms)
      } ms = ${fmt(graphqlMetrics.service.p50ms / graphqlMetrics.baseline.p50ms, 2)}× the time`,
      target: "≤ 1.5× REST time",
      outcome: judge(
        graphqlMetrics.service.p50ms <= 1.5 * graphqlMetrics.baseline.p50ms,
        graphqlMetrics.problems,
      ),
    });

    // Ingestion: 1,000-event batches without client ids, so every batch is stored.
    const events = Array.from({ length: 1000 }, (_, i) => ({
      type: i % 10 === 0 ? "install" : "open",
      occurred_at: new Date().toISOString(),
      link_path: link.path,
      device: { os: "iOS", model: "iPhone15,2" },
      geo: { country: "DE", city: "Berlin" },
    }));
    const lua = postJson(JSON.stringify({ events }));
    const ingest = await wrk(`${service.url}/api/v1/sdk/events`, {
      connections: 4,
      seconds,
      headers,
      lua,
      expect: { status: 202 },
    });
    const eventsPerSecond = ingest.rps * 1000;
    rows.push({
      name: "ingestion, 1,000-event batches (-c4)",
      figure: `${fmt(eventsPerSecond, 0)} events/s; batch p50 ${
        fmt(ingest.p50ms)
      } ms (errors ${ingest.errors})`,
      target: "≥ 10,000 events/s",
      outcome: judge(eventsPerSecond >= 10_000, ingest.problems),
    });
  } finally {
    await service.close();
    await baseline.close();
  }
  return rows;
}

/**
 * The lookup with the pool over PostgreSQL's Unix socket against the same over TCP, in
 * alternating rounds, for the service and for the bare handler (both sides of the lookup ratio
 * use the driver, so the socket shows in absolute figures, not in that ratio). Skipped when the
 * server has no socket in its usual directory (PGSOCKET_DIR overrides it).
 */
async function unixSocketRows(
  db: BenchDatabase,
  path: string,
  headers: Record<string, string>,
  seconds: number,
  tcp: { service: Served; bare: Served },
): Promise<Row[]> {
  const url = await pgSocketUrl(db.url);
  if (url === null) return [];
  const sql = connect(url, 10);
  const service = serveService(sql);
  const bare = serve(bareLookup(sql));
  const lookup = (s: Served, route: string, h?: Record<string, string>) => () =>
    wrk(`${s.url}${route}${path}`, { connections: 32, seconds, headers: h });
  try {
    const svc = await compare(
      lookup(service, "/api/v1/sdk/link/", headers),
      lookup(tcp.service, "/api/v1/sdk/link/", headers),
    );
    const base = await compare(lookup(bare, "/link/"), lookup(tcp.bare, "/link/"));
    return [{
      name: "link lookup, database over the Unix socket vs TCP (-c32)",
      figure: `service ${fmt(svc.service.rps, 0)} vs ${fmt(svc.baseline.rps, 0)} req/s = ${
        fmt(svc.ratio, 2)
      }×; bare ${fmt(base.service.rps, 0)} vs ${fmt(base.baseline.rps, 0)} req/s = ${
        fmt(base.ratio, 2)
      }×; service/bare over the socket ${fmt(svc.service.rps / base.service.rps, 2)}×`,
      target: "reported (docs/SCALING.md)",
      outcome: report([
        ...svc.problems,
        ...base.problems,
        ...notFinite({ service: svc.ratio, bare: base.ratio }),
      ]),
    }];
  } finally {
    await service.close();
    await bare.close();
    await sql.end({ timeout: 5 });
  }
}

/** The bare stack's link lookup: one statement, the row as JSON. */
function bareLookup(sql: Sql): (req: Request) => Promise<Response> {
  return async (req) => {
    const [row] = await sql`select * from links where path = ${new URL(req.url).pathname.slice(6)}`;
    return Response.json({ link: row });
  };
}
