// What a scrape of GET /metrics reads besides the counters (services/monitoring/metrics.ts): the
// destinations' backlog and the pool from the database, the process's memory and CPU.
import process from "node:process";
import type { Sql } from "../../db/connect.ts";
import type { Clock } from "../../infra/clock.ts";
import { describeError, type Logger } from "../../infra/log.ts";
import { destinationBacklogs } from "../destinations/backlog.ts";
import { Counter, Gauge } from "./exposition.ts";
import { attemptsFailed, batchesDelivered, eventsDelivered, registry } from "./metrics.ts";

// Read at each scrape.
const backlog = registry.register(
  new Gauge(
    "linkfeed_destination_backlog_events",
    "Events of a destination's feed not yet delivered, counted up to 100000 (from the database: the same on every instance).",
    ["destination"],
  ),
);
const lag = registry.register(
  new Gauge(
    "linkfeed_destination_lag_seconds",
    "Age of the next event a destination is to receive; 0 when none waits (from the database).",
    ["destination"],
  ),
);
const dropped = registry.register(
  new Counter(
    "linkfeed_destination_dropped_events_total",
    "Events that left the feed's seven days before their destination received them (from the database).",
    ["destination"],
  ),
);
const paused = registry.register(
  new Gauge(
    "linkfeed_destination_paused",
    "1 while a destination is paused by its admin, else 0 (from the database).",
    ["destination"],
  ),
);
const heldBack = registry.register(
  new Gauge(
    "linkfeed_feed_held_back_seconds",
    "How long the oldest writing transaction of the database has been open: the feed serves no event behind it until it ends (PostgreSQL only).",
  ),
);
const viewsWaiting = registry.register(
  new Gauge(
    "linkfeed_views_waiting",
    "Link-host views answered but not yet written to the database, in this instance.",
  ),
);
const liveStreams = registry.register(
  new Gauge("linkfeed_live_streams_open", "Live-tail streams open on this instance."),
);
const poolMax = registry.register(
  new Gauge(
    "linkfeed_db_pool_max_connections",
    "Connections the request pool may open (the embedded database serves one).",
  ),
);
const connections = registry.register(
  new Gauge(
    "linkfeed_db_connections",
    "This instance's connections to PostgreSQL, by state as pg_stat_activity reports it (PostgreSQL only).",
    ["state"],
  ),
);
const databaseUp = registry.register(
  new Gauge(
    "linkfeed_database_up",
    "1 when this scrape's database queries answered, else 0 (the figures read from it are then missing).",
  ),
);
const rss = registry.register(
  new Gauge("process_resident_memory_bytes", "Resident memory size in bytes."),
);
const heapUsed = registry.register(
  new Gauge("deno_memory_heap_used_bytes", "JavaScript heap in use, in bytes."),
);
const heapTotal = registry.register(
  new Gauge("deno_memory_heap_total_bytes", "JavaScript heap reserved, in bytes."),
);
const external = registry.register(
  new Gauge(
    "deno_memory_external_bytes",
    "Memory outside the JavaScript heap held by its objects (buffers, the embedded database's WebAssembly memory), in bytes.",
  ),
);
const cpu = registry.register(
  new Counter("process_cpu_seconds_total", "User and system CPU time spent, in seconds."),
);
const startTime = registry.register(
  new Gauge(
    "process_start_time_seconds",
    "Start time of the process since the Unix epoch, in seconds.",
  ),
);
startTime.set([], Math.round(Date.now() / 1000 - performance.now() / 1000));

/** What a scrape reads besides the counters: the database, and this instance's queues. */
export interface MetricsSources {
  sql: Sql;
  clock: Clock;
  logger: Logger;
  /** The database this instance runs on: the embedded one has no pg_stat_activity of use. */
  database: { embedded: boolean; poolMax: number; applicationName: string | null };
  views: { readonly waiting: number };
  liveTails?: { readonly size: number };
}

/** Every metric in Prometheus's text format, with the scrape-time figures read now. */
export async function renderMetrics(sources: MetricsSources): Promise<string> {
  const memory = Deno.memoryUsage();
  rss.set([], memory.rss);
  heapUsed.set([], memory.heapUsed);
  heapTotal.set([], memory.heapTotal);
  external.set([], memory.external);
  const used = process.cpuUsage();
  cpu.setTotal([], (used.user + used.system) / 1e6);
  viewsWaiting.set([], sources.views.waiting);
  liveStreams.set([], sources.liveTails?.size ?? 0);
  poolMax.set([], sources.database.poolMax);
  try {
    await readDatabase(sources);
    databaseUp.set([], 1);
  } catch (err) {
    databaseUp.set([], 0);
    sources.logger.warn("metrics: the database did not answer", describeError(err));
  }
  return registry.render();
}

async function readDatabase(sources: MetricsSources): Promise<void> {
  const { sql, database } = sources;
  const found = await destinationBacklogs(sql, sources.clock.now());
  const existing = new Set(found.map((d) => String(d.id)));
  // A deleted destination's series go: in-process ones too, so they stay as many as there are.
  for (const family of [batchesDelivered, eventsDelivered, attemptsFailed, dropped]) {
    family.removeWhere(([id]) => !existing.has(id!));
  }
  for (const g of [backlog, lag, paused]) g.clear();
  for (const d of found) {
    const labels = [String(d.id)];
    backlog.set(labels, d.backlog);
    lag.set(labels, d.lagSeconds);
    paused.set(labels, d.paused ? 1 : 0);
    dropped.setTotal(labels, d.dropped);
  }
  connections.clear();
  if (database.embedded) return;
  const [held] = await sql<{ seconds: number }[]>`
    select coalesce(extract(epoch from now() - min(xact_start)), 0)::float8 as seconds
    from pg_stat_activity
    where backend_xid is not null and datname = current_database()
  `;
  heldBack.set([], held!.seconds);
  if (database.applicationName === null) return;
  const states = await sql<{ state: string; n: number }[]>`
    select coalesce(state, 'unknown') as state, count(*)::int as n from pg_stat_activity
    where application_name = ${database.applicationName}
    group by 1
  `;
  for (const s of states) connections.set([s.state.replaceAll(" ", "_")], s.n);
}
