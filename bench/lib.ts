// Shared pieces of `deno task bench`: a fresh database on the real PostgreSQL, the service and a
// bare baseline served in this process, wrk as the load generator, and same-run ratios.
import { CLI_AUDIT } from "../services/access/audit.ts";
import { resolveConfig } from "../config.ts";
import { connect, type Sql } from "../db/connect.ts";
import { createDatabase, dropDatabase } from "../db/databases.ts";
import { migrate } from "../db/migrate.ts";
import { createApp } from "../app.ts";
import { systemClock } from "../infra/clock.ts";
import { recordEvents } from "../services/events/record.ts";
import { createFeedToken } from "../services/feed/tokens.ts";
import { createLink, type LinkRow } from "../services/links/links.ts";
import { createProject, updateProject } from "../services/projects/projects.ts";
import { MAX_SDK_WRITES } from "../services/projects/sdk_limits.ts";
import { createLogger } from "../infra/log.ts";
import { hashSecret } from "../infra/secrets.ts";
import { ViewRecorder } from "../services/link_host/view_recorder.ts";
import { benchLogWriter } from "./logging.ts";
import { checkScript, parseWrkReport, type WrkExpect, type WrkResult } from "./wrk_check.ts";

export const ADMIN_TOKEN = "bench-admin-token-0123456789abcdefgh";
export const CURSOR_SECRET = "bench-cursor-secret-0123456789abcdefghijkl";

export interface BenchDatabase {
  url: string;
  sql: Sql;
  close(): Promise<void>;
}

/**
 * A fresh, migrated database on BENCH_DATABASE_URL / DATABASE_URL's server (default local),
 * dropped when closed unless BENCH_KEEP_DATABASE=1.
 */
export async function benchDatabase(): Promise<BenchDatabase> {
  const base = Deno.env.get("BENCH_DATABASE_URL") ?? Deno.env.get("DATABASE_URL") ??
    "postgres://postgres@127.0.0.1:5432/postgres";
  // BENCH_REUSE_DATABASE=<name> runs on a database an earlier run kept (BENCH_KEEP_DATABASE=1),
  // and keeps it again: only `--only analytics` knows to find its seed there (bench_seeded)
  // instead of spending half an hour writing 10M events again.
  const reuse = Deno.env.get("BENCH_REUSE_DATABASE");
  const name = reuse ?? `bench_${Date.now().toString(36)}`;
  const u = new URL(base);
  u.pathname = `/${name}`;
  // On a Citus coordinator, a cluster of its own (db/databases.ts).
  const url = reuse ? u.toString() : await createDatabase(base, name);
  await migrate(url);
  const sql = connect(url, 10);
  return {
    url,
    sql,
    async close() {
      await sql.end({ timeout: 5 });
      // BENCH_KEEP_DATABASE=1 leaves it for inspection (EXPLAIN after a missed row); drop it after.
      if (reuse || Deno.env.get("BENCH_KEEP_DATABASE") === "1") {
        Deno.stderr.writeSync(new TextEncoder().encode(`bench: kept database ${url}\n`));
      } else {
        await dropDatabase(base, name);
      }
    },
  };
}

/**
 * `url` with the database reached over the server's Unix socket (postgres.js's `host` query
 * parameter), or null when the socket is not in PGSOCKET_DIR (default /var/run/postgresql).
 */
export async function pgSocketUrl(url: string): Promise<string | null> {
  const dir = Deno.env.get("PGSOCKET_DIR") ?? "/var/run/postgresql";
  const u = new URL(url);
  try {
    await Deno.stat(`${dir}/.s.PGSQL.${u.port || "5432"}`);
  } catch {
    return null;
  }
  u.searchParams.set("host", dir);
  return u.toString();
}

export interface Served {
  url: string;
  close(): Promise<void>;
}

export function serve(handler: Deno.ServeHandler): Served {
  const controller = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: controller.signal, onListen() {} },
    handler,
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    async close() {
      controller.abort();
      await server.finished;
    },
  };
}

/** The real app, configured as in production (logging included, into a drained pipe). */
export function serveService(sql: Sql, env: Record<string, string> = {}): Served {
  const config = resolveConfig({
    DATABASE_URL: "postgres://bench",
    ADMIN_TOKEN,
    LINK_BASE_URL: "https://lnk.example.test",
    FEED_RATE_LIMIT: "100000000",
    ...env,
  });
  const logger = createLogger("info", benchLogWriter());
  const app = createApp({
    sql,
    config,
    clock: systemClock,
    logger,
    adminTokenHash: hashSecret(ADMIN_TOKEN),
    cursorSecret: CURSOR_SECRET,
    views: new ViewRecorder(sql, { clock: systemClock, linkBaseUrl: config.linkBaseUrl, logger }),
  });
  return serve(app.fetch);
}

export type { WrkExpect, WrkResult } from "./wrk_check.ts";

export interface WrkOptions {
  connections: number;
  seconds: number;
  threads?: number;
  headers?: Record<string, string>;
  /** A wrk Lua script (method, body, request()), written to a temp file. */
  lua?: string;
  /** What every answer must be: status 200 and any body unless given. */
  expect?: WrkExpect;
}

/**
 * One wrk run. Every answer is counted by status and, where `expect` asks, its body checked
 * (bench/wrk_check.ts): the result's `problems` say why the run is not a valid measurement.
 */
export async function wrk(url: string, o: WrkOptions): Promise<WrkResult> {
  const expect = o.expect ?? { status: 200 };
  if (
    o.lua && /\b(setup|init|response|done)\s*=|function\s+(setup|init|response|done)\b/.test(o.lua)
  ) {
    throw new Error("a bench wrk script must not define setup, init, response or done");
  }
  const args = [
    `-t${o.threads ?? Math.min(2, o.connections)}`,
    `-c${o.connections}`,
    `-d${o.seconds}s`,
  ];
  for (const [k, v] of Object.entries(o.headers ?? {})) args.push("-H", `${k}: ${v}`);
  const script = await Deno.makeTempFile({ suffix: ".lua" });
  try {
    await Deno.writeTextFile(script, (o.lua ?? "") + checkScript(expect));
    args.push("-s", script, url);
    const out = await new Deno.Command("wrk", { args, stdout: "piped", stderr: "piped" }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    if (!out.success) throw new Error(`wrk failed: ${stderr}`);
    const result = parseWrkReport(new TextDecoder().decode(out.stdout), expect);
    // A clean run writes nothing there (a Lua error makes wrk exit 1: thrown above).
    if (stderr.trim()) result.problems.push(`wrk: ${stderr.trim().split("\n")[0]}`);
    return result;
  } finally {
    await Deno.remove(script);
  }
}

/** A wrk Lua script that POSTs `body` as JSON on every request. */
export function postJson(body: string): string {
  return `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\n` +
    `wrk.headers["Content-Type"] = "application/json"\n`;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export interface Comparison {
  service: WrkResult;
  baseline: WrkResult;
  ratio: number;
  /** Every round's problems, the baseline's marked as such: the comparison is invalid if any. */
  problems: string[];
}

/**
 * Runs baseline and service alternately `rounds` times with identical load and reports the
 * median of each: the machine is shared and noisy, so only a same-run ratio means anything.
 */
export async function compare(
  service: () => Promise<WrkResult>,
  baseline: () => Promise<WrkResult>,
  rounds = 3,
): Promise<Comparison> {
  const s: WrkResult[] = [];
  const b: WrkResult[] = [];
  for (let i = 0; i < rounds; i++) {
    b.push(await baseline());
    s.push(await service());
  }
  const pick = (rs: WrkResult[]): WrkResult => {
    const statuses: Record<string, number> = {};
    for (const r of rs) {
      for (const [k, n] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + n;
    }
    return {
      rps: median(rs.map((r) => r.rps)),
      p50ms: median(rs.map((r) => r.p50ms)),
      p99ms: median(rs.map((r) => r.p99ms)),
      requests: rs.reduce((n, r) => n + r.requests, 0),
      errors: rs.reduce((n, r) => n + r.errors, 0),
      statuses,
      problems: rs.flatMap((r) => r.problems),
    };
  };
  const service_ = pick(s);
  const baseline_ = pick(b);
  return {
    service: service_,
    baseline: baseline_,
    ratio: service_.rps / baseline_.rps,
    problems: [...service_.problems, ...baseline_.problems.map((p) => `baseline: ${p}`)],
  };
}

export function fmt(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : "n/a";
}

/**
 * An Enterprise project with 200 links, a feed token and 1000 captured `open` events spread over
 * the links (device, user and geo filled in): what the GraphQL benchmarks and profiles read.
 */
export async function seedFeedPage(sql: Sql) {
  const { project, projectKey } = await createProject(
    sql,
    { name: "feed", enterprise: true },
    CLI_AUDIT,
  );
  const envId = project.environments.production.project_id;
  const links: LinkRow[] = [];
  for (let i = 0; i < 200; i++) {
    links.push(await createLink(sql, envId, { title: `Link ${i}`, tags: ["bench"] }));
  }
  const token = await createFeedToken(sql, systemClock, String(envId), "bench", CLI_AUDIT);
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
  return {
    envId,
    links,
    sdk: { "PROJECT-KEY": projectKey, "ENVIRONMENT": "production" },
    auth: { Authorization: `Bearer ${token.value}` },
  };
}

/**
 * 9,999 more active links with random counters in the environment (10,000 with its own bench
 * link): what the metrics benchmarks and profiles read.
 */
export async function seedMetricsLinks(sql: Sql, environmentId: number): Promise<void> {
  await sql`
    with l as (
      insert into links (environment_id, project_id, path, title, tags, tracking_campaign)
      select ${environmentId}, (select project_id from environments where id = ${environmentId}),
        'm' || g || substr(md5(g::text), 1, 8), 'Link ' || g, '["a","b"]',
        'spring'
      from generate_series(1, 9999) g
      returning id
    )
    insert into link_counters (link_id, environment_id, total_views, total_opens, total_installs,
      total_revenue)
    select id, ${environmentId}, (random() * 100000)::int, (random() * 1000)::int, (random() * 100)::int,
      (random() * 1000000)::int
    from l
  `;
  await sql`analyze`;
}

/**
 * The SDK benchmarks' project and link (bench/sdk.ts, bench/hot_cpu.ts): a link of about a
 * kilobyte once serialised, with every platform's redirect and the tracking fields.
 */
export async function seedSdkLink(sql: Sql) {
  const { project, projectKey } = await createProject(
    sql,
    { name: "bench", enterprise: true },
    CLI_AUDIT,
  );
  // The SDK write limits stay on, counted as on every write, but as high as a project may set
  // them: a load test sends far more than an app does.
  await updateProject(sql, project.id, {
    sdk_limits: { per_key: MAX_SDK_WRITES, per_address: MAX_SDK_WRITES },
  }, CLI_AUDIT);
  const envId = project.environments.production.project_id;
  const link = await createLink(sql, envId, {
    title: "Bench link",
    subtitle: "A link of about a kilobyte once serialised",
    data: { campaign: "spring", items: Array.from({ length: 12 }, (_, i) => `item-${i}`) },
    tags: ["bench", "lookup"],
    ios_custom_redirect: { url: "https://apps.apple.com/app/id1", open_app_if_installed: true },
    android_custom_redirect: { url: "https://play.google.com/store/apps/details?id=x" },
    desktop_custom_redirect: { url: "https://example.com/desktop" },
    tracking_campaign: "spring",
    tracking_source: "newsletter",
    tracking_medium: "email",
  });
  return { project, projectKey, envId, link };
}

/**
 * The feed's bare baseline: a 1000-event page after `?xid=&seq=`, the stored bodies passed
 * through as text (bench/feed.ts, bench/feed_size.ts).
 */
export function serveBareFeedPage(sql: Sql, envId: number): Served {
  return serve(async (req) => {
    const params = new URL(req.url).searchParams;
    const [xid, seq] = [params.get("xid") ?? "0", params.get("seq") ?? "0"];
    const page = await sql<{ body: string }[]>`
      select body from feed_events
      where environment_id = ${envId} and (xid, seq) > (${xid}::bigint, ${seq}::bigint)
      order by xid, seq limit 1000`;
    return new Response(`{"events":[${page.map((r) => r.body).join(",")}]}`, {
      headers: { "content-type": "application/json" },
    });
  });
}
