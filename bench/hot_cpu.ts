// deno run -A bench/hot_cpu.ts
//   [--base DIR | --socket] [--rounds N] [--requests N] [--in-flight N] [--only a,b]
//   (scenarios: lookup, redirect, head, graphql, graphql_full, feed, graphql_feed)
// The hot paths' JavaScript CPU per request, in process: app.fetch with N requests in flight
// against a bare handler running the same query, process.cpuUsage() around thousands of
// requests (the views written behind the responses included: each round waits for them). The
// machine's load moves throughput a lot and CPU time per request little, so this is what a change
// to the link lookup or the link host is judged on. Each round also reports the CPU the
// PostgreSQL backends of the bench's database used per request (/proc schedstat), which shares
// the machine's cores with the service under wrk. With --base, the app of another tree (an
// older commit, extracted with `git archive`) is measured in the same process, in alternating
// rounds: base, current, base, current, … With --socket, base is this tree with its pool over
// TCP and current the same over PostgreSQL's Unix socket (bench/lib.ts pgSocketUrl).
import process from "node:process";
import { parseArgs } from "node:util";
import { resolveConfig } from "../config.ts";
import { systemClock } from "../infra/clock.ts";
import { hashSecret } from "../infra/secrets.ts";
import { connect, type Sql } from "../db/connect.ts";
import { CLI_AUDIT } from "../services/access/audit.ts";
import { createFeedToken } from "../services/feed/tokens.ts";
import {
  ADMIN_TOKEN,
  benchDatabase,
  CURSOR_SECRET,
  pgSocketUrl,
  seedFeedPage,
  seedSdkLink,
} from "./lib.ts";
import { benchLogWriter } from "./logging.ts";

const { values } = parseArgs({
  args: Deno.args[0] === "--" ? Deno.args.slice(1) : Deno.args,
  options: {
    base: { type: "string" },
    socket: { type: "boolean", default: false },
    rounds: { type: "string", default: "4" },
    requests: { type: "string", default: "4000" },
    "in-flight": { type: "string", default: "32" },
    only: { type: "string", default: "lookup,redirect,head,graphql" },
  },
});
const rounds = Number(values.rounds);
const defaultRequests = Number(values.requests);
const defaultInFlight = Number(values["in-flight"]);
const only = values.only!.split(",");

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148";

const db = await benchDatabase();
const { sql } = db;
const { projectKey, link } = await seedSdkLink(sql);
const sdkHeaders = { "PROJECT-KEY": projectKey, "ENVIRONMENT": "production" };
// The feed scenarios' 1,000-event page (bench/graphql.ts's rows), seeded only if asked for.
const feed = only.some((n) => n.includes("feed")) ? await seedFeedPage(sql) : null;
// Requests take turns among 64 tokens, as bench/feed_cpu.ts's do: with the bench's rate limit of
// 100,000,000 each admission counts its token's whole window, which with one token would grow
// to thousands of rows a minute and be most of PostgreSQL's time per page.
const feedTokens: string[] = [];
for (let i = 0; feed && i < 64; i++) {
  const token = await createFeedToken(sql, systemClock, String(feed.envId), `t${i}`, CLI_AUDIT);
  feedTokens.push(`Bearer ${token.value}`);
}
let feedTurn = 0;
const feedAuth = () => ({ Authorization: feedTokens[feedTurn++ % feedTokens.length]! });

type Fetch = (req: Request) => Response | Promise<Response>;
interface Built {
  fetch: Fetch;
  flush(): Promise<void>;
}

/** The app of the tree at `dir` (this one by default), configured as bench/lib.ts serves it. */
async function buildApp(dir: string, sql: Sql): Promise<Built> {
  const m = (p: string) => import(`${dir}/${p}`);
  // A base tree from before services/ was sorted into folders has these two files flat there.
  const either = (p: string, flat: string) => m(p).catch(() => m(flat));
  const [{ createApp }, { ViewRecorder }, { createLogger }] = await Promise.all([
    m("app.ts"),
    either("services/link_host/view_recorder.ts", "services/view_recorder.ts"),
    either("infra/log.ts", "services/log.ts"),
  ]);
  const config = resolveConfig({
    DATABASE_URL: "postgres://bench",
    ADMIN_TOKEN,
    LINK_BASE_URL: "https://lnk.example.test",
    FEED_RATE_LIMIT: "100000000",
  });
  const logger = createLogger("info", benchLogWriter());
  const views = new ViewRecorder(sql, {
    clock: systemClock,
    linkBaseUrl: config.linkBaseUrl,
    logger,
  });
  const app = createApp({
    sql,
    config,
    clock: systemClock,
    logger,
    adminTokenHash: hashSecret(ADMIN_TOKEN),
    cursorSecret: CURSOR_SECRET,
    views,
  });
  return { fetch: (req: Request) => app.fetch(req), flush: () => views.flush() };
}

/** The bare handlers of bench/sdk.ts: the same single query, no middleware. */
const bare: Fetch = async (req) => {
  const url = new URL(req.url);
  if (url.pathname.startsWith("/feed/")) {
    // serveBareFeedPage's page (bench/lib.ts): the bodies as text, the page by concatenation.
    const page = await sql<{ body: string }[]>`
      select body from feed_events where environment_id = ${Number(url.pathname.slice(6))}
      order by xid, seq limit 1000`;
    return new Response(`{"events":[${page.map((r) => r.body).join(",")}]}`, {
      headers: { "content-type": "application/json" },
    });
  }
  if (url.pathname.startsWith("/link/")) {
    const [row] = await sql`select * from links where path = ${url.pathname.slice(6)}`;
    return Response.json({ link: row });
  }
  const [row] = await sql`select ios_custom_redirect from links where path = ${
    url.pathname.slice(3)
  }`;
  return Response.redirect(row!.ios_custom_redirect.url, 302);
};

const origin = "http://127.0.0.1:8000";
const graphqlBody = JSON.stringify({ query: `{ link(path: "${link.path}") { id path title } }` });
/** bench/graphql.ts's wrk row: every field REST's Link has. */
const graphqlFullBody = JSON.stringify({
  query: `{ link(path: "${link.path}") { id title subtitle path accessPath updatedAt
    generatedFromPlatform data sdkGenerated tags active trackingCampaign trackingSource
    trackingMedium showPreview image iosCustomRedirect { url openAppIfInstalled }
    androidCustomRedirect { url openAppIfInstalled } desktopCustomRedirect { url } } }`,
});
const graphqlRequest = (body: string) => () =>
  new Request(`${origin}/graphql`, {
    method: "POST",
    // As an HTTP client sends it: without a length, hono's body limit would count the
    // body through a stream of its own, which no request over HTTP pays.
    headers: {
      ...sdkHeaders,
      "Content-Type": "application/json",
      "Content-Length": String(new TextEncoder().encode(body).length),
    },
    body,
  });
/** bench/graphql.ts's eventFeed row: 1,000 events with each event's link. */
const graphqlFeedBody = JSON.stringify({
  query: `query($id: ID!) { eventFeed(projectId: $id, first: 1000) {
    edges { node { id type occurredAt device user geo { country } link { path title } } }
    pageInfo { endCursor hasNextPage } } }`,
  variables: { id: String(feed?.envId) },
});
interface Scenario {
  request: () => Request;
  status: number;
  /** Requests a round and in flight for this scenario (a page costs some 50 lookups). */
  requests?: number;
  inFlight?: number;
  /** The bare handler's request for the same query, if it has one. */
  bare?: () => Request;
}
const scenarios: Record<string, Scenario> = {
  lookup: {
    request: () => new Request(`${origin}/api/v1/sdk/link/${link.path}`, { headers: sdkHeaders }),
    bare: () => new Request(`${origin}/link/${link.path}`),
    status: 200,
  },
  redirect: {
    request: () =>
      new Request(`${origin}/${link.path}`, {
        headers: { "User-Agent": IPHONE, Host: "127.0.0.1:8000" },
      }),
    bare: () => new Request(`${origin}/r/${link.path}`),
    status: 302,
  },
  // The same redirect without its view (HEAD is never one).
  head: {
    request: () =>
      new Request(`${origin}/${link.path}`, {
        method: "HEAD",
        headers: { "User-Agent": IPHONE, Host: "127.0.0.1:8000" },
      }),
    status: 302,
  },
  graphql: { request: graphqlRequest(graphqlBody), status: 200 },
  // The same lookup selecting REST's every field (bench/graphql.ts's wrk row).
  graphql_full: { request: graphqlRequest(graphqlFullBody), status: 200 },
  // bench/feed.ts's page: 1,000 events, REST, with a feed token.
  feed: {
    request: () =>
      new Request(`${origin}/api/v1/projects/${feed?.envId}/event_stream?limit=1000`, {
        headers: feedAuth(),
      }),
    bare: () => new Request(`${origin}/feed/${feed?.envId}`),
    status: 200,
    requests: 200,
    inFlight: 4,
  },
  // The same page through GraphQL, with each event's link { path title }.
  graphql_feed: {
    request: () =>
      new Request(`${origin}/graphql`, {
        method: "POST",
        headers: {
          ...feedAuth(),
          "Content-Type": "application/json",
          "Content-Length": String(new TextEncoder().encode(graphqlFeedBody).length),
        },
        body: graphqlFeedBody,
      }),
    status: 200,
    requests: 200,
    inFlight: 4,
  },
};

/**
 * Nanoseconds on CPU so far of the PostgreSQL backends serving this bench's database (their
 * /proc schedstat): the server's share of each request, the views' batches included.
 */
async function pgCpuNs(): Promise<number> {
  const rows = await sql<{ pid: number }[]>`
    select pid from pg_stat_activity where datname = current_database()
  `;
  let ns = 0;
  for (const { pid } of rows) {
    try {
      ns += Number((await Deno.readTextFile(`/proc/${pid}/schedstat`)).split(" ")[0]);
    } catch (err) {
      // A backend that ended meanwhile; anything else (Deno 2.9 reads another process's /proc
      // only with --allow-all) would print 0 µs for the server: said, not hidden.
      if (!(err instanceof Deno.errors.NotFound)) {
        throw new Error(`reading /proc/${pid}/schedstat: ${err} (run with -A)`);
      }
    }
  }
  return ns;
}

const pgFigures: Record<string, number[]> = {};

/**
 * CPU µs per request: `total` requests through `fetch`, `inFlight` at a time. The backends' CPU
 * per request goes to `pgFigures[pgKey]`.
 */
async function cpuPerRequest(
  fetch: Fetch,
  make: () => Request,
  status: number,
  flush: () => Promise<void>,
  pgKey?: string,
  requests = defaultRequests,
  inFlight = defaultInFlight,
): Promise<number> {
  const pgStart = pgKey ? await pgCpuNs() : 0;
  let next = 0;
  const worker = async () => {
    while (next < requests) {
      next++;
      const res = await fetch(make());
      await res.arrayBuffer();
      if (res.status !== status) throw new Error(`status ${res.status}, expected ${status}`);
    }
  };
  const start = process.cpuUsage();
  await Promise.all(Array.from({ length: inFlight }, worker));
  await flush();
  const used = process.cpuUsage(start);
  if (pgKey) (pgFigures[pgKey] ??= []).push((await pgCpuNs() - pgStart) / 1000 / requests);
  return (used.user + used.system) / requests;
}

const here = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const socketUrl = values.socket ? await pgSocketUrl(db.url) : null;
if (values.socket && socketUrl === null) throw new Error("no PostgreSQL socket (PGSOCKET_DIR)");
const socketSql = socketUrl ? connect(socketUrl, 10) : null;
const current = await buildApp(here, socketSql ?? sql);
const base = values.base
  ? await buildApp(values.base.replace(/\/$/, ""), sql)
  : socketSql
  ? await buildApp(here, sql)
  : null;
const noFlush = () => Promise.resolve();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
// deno-lint-ignore no-console
const print = (s: string) => console.log(s);

try {
  for (const name of only) {
    const s = scenarios[name]!;
    const n = [s.requests, s.inFlight] as const;
    // Warm-up: JIT, caches, the pool's connections.
    for (const app of [current, base]) {
      if (app) await cpuPerRequest(app.fetch, s.request, s.status, app.flush, undefined, ...n);
    }
    const figures: Record<string, number[]> = { bare: [], base: [], current: [] };
    for (const k of Object.keys(pgFigures)) delete pgFigures[k];
    for (let r = 0; r < rounds; r++) {
      if (s.bare) {
        figures.bare!.push(await cpuPerRequest(bare, s.bare, s.status, noFlush, "bare", ...n));
      }
      if (base) {
        figures.base!.push(
          await cpuPerRequest(base.fetch, s.request, s.status, base.flush, "base", ...n),
        );
      }
      figures.current!.push(
        await cpuPerRequest(current.fetch, s.request, s.status, current.flush, "current", ...n),
      );
    }
    const line = Object.entries(figures).filter(([, xs]) => xs.length > 0).map(([k, xs]) =>
      `${k} ${median(xs).toFixed(1)} µs [${xs.map((x) => x.toFixed(1)).join(", ")}]`
    ).join("; ");
    // Rounds alternate, so each base round has its current one beside it: the ratio of each
    // pair cancels most of the load's drift between rounds.
    const pairs = base ? figures.current!.map((c, i) => c / figures.base![i]!) : [];
    const paired = pairs.length > 0
      ? `; current/base per pair: median ${median(pairs).toFixed(2)}, lower in ${
        pairs.filter((r) => r < 1).length
      } of ${pairs.length}`
      : "";
    print(`${name}: ${line}${paired}`);
    print(
      `  PostgreSQL backends, µs of CPU per request (medians): ${
        Object.entries(pgFigures).map(([k, xs]) =>
          `${k} ${median(xs).toFixed(1)} [${xs.map((x) => x.toFixed(1)).join(", ")}]`
        ).join("; ")
      }`,
    );
  }
} finally {
  await socketSql?.end({ timeout: 5 });
  await db.close();
}
