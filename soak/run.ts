// The three-instance soak: real main.ts processes over one fresh PostgreSQL database, traffic
// spread over them (concurrent ingestion, two pull readers, a live-tail reader, a push
// destination, link-host hits, a token hammering the feed rate limit, token revocations) while
// one instance is SIGKILLed and restarted every `killEverySeconds` and the database's
// connections are all terminated once. Then ingestion stops, the consumers catch up, and the
// checks of soak/checks.ts decide. `deno task soak` (soak/main.ts) and tests/soak_test.ts run it.
import postgres from "postgres";
import { Cluster, ConnectionFailed } from "./cluster.ts";
import {
  type Check,
  dedupeDeliveries,
  maxInWindow,
  sequenceCheck,
  storedOnce,
  storedOnceOk,
  unjustifiedRefusals,
  viewLossBound,
} from "./checks.ts";
import { retryAfterMs, sleep, type SoakContext } from "./context.ts";
import { withConnection } from "./database.ts";
import { createDatabase, dropDatabase } from "../db/databases.ts";
import { type IngestLog, newIngestLog, runWriters } from "./ingest.ts";
import { type LinkHitLog, newLinkHitLog, runLinkHits } from "./link_hits.ts";
import {
  type HammerLog,
  type HitSnapshots,
  newHammerLog,
  runHammer,
  snapshotRateHits,
} from "./rate_limit.ts";
import { Auditor, type ConsumerLog, LiveReader, PullReader } from "./readers.ts";
import { type DestinationReceiver, startReceiver } from "./receiver.ts";
import { newRevocationLog, type RevocationLog, runRevocations } from "./revocations.ts";

export interface SoakOptions {
  /** How long traffic runs. */
  seconds: number;
  /** An instance is SIGKILLed (in turn) and restarted this often; 0: never. */
  killEverySeconds: number;
  /** When the database's connections are terminated (s after traffic starts); null: never. */
  terminateAtSeconds?: number | null;
  /**
   * A database node stopped and started again mid-run (on Citus: one worker): `stop` runs at
   * `at` s, `start` `downSeconds` later; each a shell command (`sh -c`). Absent: no such fault.
   */
  nodeFault?: { at: number; downSeconds: number; stop: string; start: string };
  /** The longest wait, after traffic stops, for every consumer to catch up. */
  drainSeconds: number;
  /** A PostgreSQL URL on whose server the soak's own database is created and dropped. */
  databaseUrl: string;
  /** Where the instances' logs go. */
  logDir: string;
  /** FEED_RATE_LIMIT of the instances: reads per token per 60 s. */
  feedRateLimit: number;
  writers: number;
  maxBatch: number;
  writerPauseMs: number;
  linkHitPauseMs: number;
  hammerConcurrency: number;
  hammerPauseMs: number;
  revokeEverySeconds: number;
  links: number;
  /** docs/link-host.md's "a moment's worth" of views a killed instance may lose, in ms. */
  viewLossMomentMs: number;
  /** Progress lines (stderr in the CLI); the report is returned, not printed. */
  progress?: (line: string) => void;
  /** Aborting stops the soak early (Ctrl-C): instances stopped, database dropped, then throws. */
  signal?: AbortSignal;
}

export const DEFAULT_OPTIONS: Omit<SoakOptions, "databaseUrl" | "logDir"> = {
  seconds: 120,
  killEverySeconds: 30,
  drainSeconds: 90,
  feedRateLimit: 100,
  writers: 4,
  maxBatch: 20,
  writerPauseMs: 50,
  linkHitPauseMs: 25,
  hammerConcurrency: 2,
  hammerPauseMs: 50,
  revokeEverySeconds: 3,
  links: 5,
  viewLossMomentMs: 1000,
};

export interface SoakReport {
  ok: boolean;
  checks: Check[];
  /** Figures for the summary: name → value. */
  counts: [string, string | number][];
  /** 5xx answers other than the contract's 503s, and anything else worth reading first. */
  notes: string[];
  logDir: string;
}

const ADMIN_TOKEN = "soak-admin-token-0123456789abcdef";
const CURSOR_SECRET = "soak-cursor-secret-0123456789abcdefghijklmnop";
const LINK_BASE_URL = "https://soak.example.test";
const RATE_WINDOW_MS = 60_000;
// How long after the database's connections were terminated a killed instance may still hold
// views whose write failed: the view recorder retries a second later, on a connection that
// a loaded machine can take seconds to open.
const VIEW_RETRY_GRACE_MS = 5_000;

/**
 * When the database could not take the views' writes, for the view-loss bound: the connections
 * terminated (for VIEW_RETRY_GRACE_MS), and a database node stopped (until it was started again,
 * plus VIEW_RETRY_GRACE_MS; a node never started again counts to the end).
 */
function viewOutages(log: ChaosLog): { at: number | null; ms: number }[] {
  const outages = [{ at: log.terminatedAt, ms: VIEW_RETRY_GRACE_MS }];
  if (log.nodeStoppedEpoch !== null) {
    outages.push({
      at: log.nodeStoppedEpoch,
      ms: log.nodeStartedEpoch === null
        ? Infinity
        : log.nodeStartedEpoch - log.nodeStoppedEpoch + VIEW_RETRY_GRACE_MS,
    });
  }
  return outages;
}

/** The moment between two kills nearest the middle of the run (away from any kill). */
export function defaultTerminateAt(seconds: number, killEvery: number): number {
  if (killEvery <= 0) return seconds / 2;
  const kills = [];
  for (let t = killEvery; t < seconds; t += killEvery) kills.push(t);
  const before = kills.filter((t) => t <= seconds / 2).at(-1);
  if (before === undefined) return Math.min(seconds / 2, killEvery / 2);
  return before + killEvery / 2 < seconds ? before + killEvery / 2 : seconds / 2;
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const progress = options.progress ?? (() => {});
  const runTag = `soak_${Date.now().toString(36)}_${crypto.randomUUID().slice(0, 6)}`;
  // On a Citus coordinator the database is made a cluster of its own (db/databases.ts); on a
  // single PostgreSQL this is one CREATE DATABASE.
  const dbUrl = new URL(await createDatabase(options.databaseUrl, runTag));
  const admin = postgres(options.databaseUrl, { max: 1, onnotice: () => {} });
  const logDir = `${options.logDir}/${runTag}`;
  const receiver = startReceiver();
  const cluster = new Cluster({
    logDir,
    count: 3,
    env: {
      DATABASE_URL: dbUrl.toString(),
      ADMIN_TOKEN,
      CURSOR_SECRET,
      LINK_BASE_URL,
      FEED_RATE_LIMIT: String(options.feedRateLimit),
      DESTINATIONS_ALLOW_PRIVATE: "true",
      LOG_LEVEL: "info",
    },
  });
  try {
    progress(`soak ${runTag}: starting 3 instances (logs in ${logDir})`);
    await cluster.start();
    const ctx = await setUp(cluster, runTag, receiver.url, options);
    receiver.setSecret(ctx.destinationSecret);
    progress(`instances on ${cluster.live().map((i) => i.url).join(", ")}`);
    return await soak(ctx, cluster, receiver, dbUrl.toString(), admin, runTag, logDir, options);
  } finally {
    await cluster.stop().catch(() => {});
    await receiver.close().catch(() => {});
    await admin.end({ timeout: 5 });
    await dropDatabase(options.databaseUrl, runTag).catch(() => {});
  }
}

interface SetUp extends SoakContext {
  destinationSecret: string;
  tokens: { readerA: string; readerB: string; live: string; hammer: string; hammerId: number };
}

/** An admin or SDK call that must succeed (every instance is up during set-up). */
async function must<T>(
  cluster: Cluster,
  path: string,
  init: RequestInit,
  status: number,
): Promise<T> {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      const a = await cluster.request("set-up", path, init);
      if (a.status === status) return JSON.parse(a.text) as T;
      if (a.status !== 503) throw new Error(`set-up ${path}: ${a.status} ${a.text}`);
      await sleep(retryAfterMs(a.headers));
    } catch (err) {
      if (!(err instanceof ConnectionFailed)) throw err;
      await sleep(500);
    }
  }
  throw new Error(`set-up ${path}: no success`);
}

/**
 * A project with links (each redirecting desktop visitors), the destination, and the tokens, all
 * through the APIs. Nothing is ingested before all of them exist: every consumer then has the
 * whole feed to receive.
 */
async function setUp(
  cluster: Cluster,
  runTag: string,
  receiverUrl: string,
  options: SoakOptions,
): Promise<SetUp> {
  const headers = { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" };
  const { project } = await must<
    { project: { project_key: string; environments: { production: { project_id: number } } } }
  >(cluster, "/api/v1/admin/projects", {
    method: "POST",
    headers,
    body: JSON.stringify({ name: runTag, enterprise: true }),
  }, 201);
  const envId = project.environments.production.project_id;
  const sdk = {
    "PROJECT-KEY": project.project_key,
    ENVIRONMENT: "production",
    "Content-Type": "application/json",
  };
  const links: string[] = [];
  for (let i = 0; i < options.links; i++) {
    const { link } = await must<{ link: string }>(cluster, "/api/v1/sdk/generate_link", {
      method: "POST",
      headers: sdk,
      body: JSON.stringify({
        title: `Soak ${i}`,
        desktop_custom_redirect: { url: `https://example.com/soak/${i}` },
      }),
    }, 200);
    links.push(new URL(link).pathname.slice(1));
  }
  const { destination } = await must<{ destination: { secret: string } }>(
    cluster,
    `/api/v1/projects/${envId}/destinations`,
    { method: "POST", headers, body: JSON.stringify({ url: receiverUrl }) },
    201,
  );
  const token = async (name: string) =>
    (await must<{ token: { id: number; value: string } }>(
      cluster,
      `/api/v1/projects/${envId}/event_stream_tokens`,
      { method: "POST", headers, body: JSON.stringify({ name }) },
      201,
    )).token;
  const hammer = await token("hammer");
  return {
    cluster,
    envId,
    projectKey: project.project_key,
    adminToken: ADMIN_TOKEN,
    links,
    runTag,
    destinationSecret: destination.secret,
    tokens: {
      readerA: (await token("reader-a")).value,
      readerB: (await token("reader-b")).value,
      live: (await token("live")).value,
      hammer: hammer.value,
      hammerId: hammer.id,
    },
  };
}

interface ChaosLog {
  terminatedAt: number | null;
  terminatedConnections: number;
  /** The node fault's stop and start, done, in s after traffic started. */
  nodeStoppedAt: number | null;
  nodeStartedAt: number | null;
  /** The same, as Date.now() values (the view-loss bound compares them with kills). */
  nodeStoppedEpoch: number | null;
  nodeStartedEpoch: number | null;
  errors: string[];
}

async function shell(command: string): Promise<void> {
  const out = await new Deno.Command("sh", {
    args: ["-c", command],
    stdout: "null",
    stderr: "piped",
  })
    .output();
  if (!out.success) {
    throw new Error(`${command}: ${new TextDecoder().decode(out.stderr).trim() || out.code}`);
  }
}

/**
 * The chaos schedule: every `killEverySeconds` the next instance in turn is SIGKILLed and
 * started again at once; at `terminateAt` every connection to the soak's database is
 * terminated (only this database's: other work shares the server).
 */
async function chaos(
  cluster: Cluster,
  admin: postgres.Sql,
  dbName: string,
  startedAt: number,
  options: SoakOptions,
  stop: AbortSignal,
  progress: (line: string) => void,
): Promise<ChaosLog> {
  const log: ChaosLog = {
    terminatedAt: null,
    terminatedConnections: 0,
    nodeStoppedAt: null,
    nodeStartedAt: null,
    nodeStoppedEpoch: null,
    nodeStartedEpoch: null,
    errors: [],
  };
  const steps: { at: number; run: () => Promise<void> }[] = [];
  if (options.killEverySeconds > 0) {
    let k = 0;
    for (let t = options.killEverySeconds; t < options.seconds; t += options.killEverySeconds) {
      const victim = k++ % cluster.instances.length;
      steps.push({
        at: t,
        run: async () => {
          const killed = await cluster.kill(victim);
          progress(`t=${Math.round(t)}s SIGKILL instance ${victim} (pid ${killed.pid})`);
          await cluster.restart(victim);
          progress(`  instance ${victim} back after ${Date.now() - killed.at} ms`);
        },
      });
    }
  }
  const terminateAt = options.terminateAtSeconds === undefined
    ? defaultTerminateAt(options.seconds, options.killEverySeconds)
    : options.terminateAtSeconds;
  if (terminateAt !== null) {
    steps.push({
      at: terminateAt,
      run: async () => {
        const [row] = await admin<{ n: number }[]>`
          select count(*)::int as n from (
            select pg_terminate_backend(pid) from pg_stat_activity
            where datname = ${dbName} and pid <> pg_backend_pid()
          ) t
        `;
        log.terminatedAt = Date.now();
        log.terminatedConnections = row!.n;
        progress(`t=${Math.round(terminateAt)}s terminated ${row!.n} database connections`);
      },
    });
  }
  // The node fault runs on a schedule of its own: a slow restart in the kill schedule above
  // must not delay (and so shorten) the node's outage.
  const fault = options.nodeFault;
  const faulted = fault
    ? (async () => {
      try {
        await sleep(startedAt + fault.at * 1000 - Date.now(), stop);
        if (stop.aborted) return;
        await shell(fault.stop);
        log.nodeStoppedEpoch = Date.now();
        log.nodeStoppedAt = (log.nodeStoppedEpoch - startedAt) / 1000;
        progress(`t=${Math.round(log.nodeStoppedAt)}s database node stopped`);
        // Started again even when the soak was stopped meanwhile: the node is not left down.
        await sleep(startedAt + (fault.at + fault.downSeconds) * 1000 - Date.now());
        await shell(fault.start);
        log.nodeStartedEpoch = Date.now();
        log.nodeStartedAt = (log.nodeStartedEpoch - startedAt) / 1000;
        progress(`t=${Math.round(log.nodeStartedAt)}s database node started`);
      } catch (err) {
        log.errors.push(err instanceof Error ? err.message : String(err));
      }
    })()
    : Promise.resolve();
  steps.sort((a, b) => a.at - b.at);
  for (const step of steps) {
    await sleep(startedAt + step.at * 1000 - Date.now(), stop);
    if (stop.aborted) break;
    try {
      await step.run();
    } catch (err) {
      log.errors.push(err instanceof Error ? err.message : String(err));
    }
  }
  await faulted;
  return log;
}

async function soak(
  ctx: SetUp,
  cluster: Cluster,
  receiver: DestinationReceiver,
  dbUrl: string,
  admin: postgres.Sql,
  dbName: string,
  logDir: string,
  options: SoakOptions,
): Promise<SoakReport> {
  const progress = options.progress ?? (() => {});
  const traffic = new AbortController();
  const consumers = new AbortController();
  const startedAt = Date.now();
  const drainDeadline = startedAt + (options.seconds + options.drainSeconds) * 1000;

  const ingest = newIngestLog();
  const linkHits = newLinkHitLog();
  const hammer = newHammerLog();
  const revocations = newRevocationLog();
  const readerA = new PullReader(ctx, "pull reader A (limit 1000)", ctx.tokens.readerA, {
    limit: 1000,
    pollMs: 1000,
  });
  const readerB = new PullReader(ctx, "pull reader B (limit 500)", ctx.tokens.readerB, {
    limit: 500,
    pollMs: 1000,
  });
  const live = new LiveReader(ctx, ctx.tokens.live);

  const running = [
    runWriters(
      ctx,
      {
        writers: options.writers,
        maxBatch: options.maxBatch,
        pauseMs: options.writerPauseMs,
      },
      traffic.signal,
      () => drainDeadline - options.drainSeconds * 500,
      ingest,
    ),
    runLinkHits(ctx, options.linkHitPauseMs, traffic.signal, linkHits),
    runHammer(
      ctx,
      ctx.tokens.hammer,
      {
        concurrency: options.hammerConcurrency,
        pauseMs: options.hammerPauseMs,
      },
      traffic.signal,
      hammer,
    ),
    runRevocations(ctx, options.revokeEverySeconds * 1000, traffic.signal, revocations),
  ];
  const snapshots = snapshotRateHits(dbUrl, ctx.tokens.hammerId, 15_000, traffic.signal);
  const reading = [readerA, readerB, live].map((r) => r.run(consumers.signal));
  const chaosDone = chaos(
    cluster,
    admin,
    dbName,
    startedAt,
    options,
    traffic.signal,
    progress,
  );
  const ticker = setInterval(() => {
    progress(
      `t=${Math.round((Date.now() - startedAt) / 1000)}s acked ${ingest.acked.size} events, ` +
        `${sum(linkHits.redirects)} redirects, hammer ${hammer.admitted.length} admitted / ` +
        `${hammer.refused.length} refused, ${revocations.revoked} revoked; received: ` +
        `A ${readerA.log.ids.length}, B ${readerB.log.ids.length}, live ${live.log.ids.length}, ` +
        `destination ${receiver.deliveries.reduce((n, d) => n + d.eventIds.length, 0)}`,
    );
  }, 10_000);

  const interrupted = () => {
    if (options.signal?.aborted) throw new Error("soak interrupted");
  };
  try {
    await sleep(options.seconds * 1000, options.signal);
    interrupted();
    traffic.abort();
    progress("traffic stopped; waiting for the writers' last batches");
    const chaosLog = await chaosDone;
    await Promise.all(running);
    const hits = await snapshots;
    progress("reading the whole feed; waiting for the consumers to catch up");

    // Views are written behind their redirects: give the last ones a moment, then read the
    // whole feed from the start and wait for every consumer to reach its end.
    await sleep(2000);
    const auditor = new Auditor(ctx);
    let settled = false;
    while (Date.now() < drainDeadline) {
      interrupted();
      const nothingNew = await auditor.poll(drainDeadline);
      const dest = dedupeDeliveries(receiver.deliveries).ids.length;
      const want = auditor.log.ids.length;
      const caughtUp = [readerA.log.ids.length, readerB.log.ids.length, live.log.ids.length, dest]
        .every((n) => n >= want);
      if (nothingNew && caughtUp) {
        settled = true;
        break;
      }
      await sleep(1000);
    }
    consumers.abort();
    await Promise.all(reading);
    clearInterval(ticker);
    progress(`drained in ${Math.round((Date.now() - startedAt) / 1000 - options.seconds)} s`);

    return await judge({
      ctx,
      cluster,
      receiver,
      dbUrl,
      options,
      logDir,
      settled,
      chaosLog,
      ingest,
      linkHits,
      hammer,
      hits,
      revocations,
      readers: [readerA.log, readerB.log, live.log],
      auditor,
      seconds: (Date.now() - startedAt) / 1000,
    });
  } finally {
    clearInterval(ticker);
    traffic.abort();
    consumers.abort();
  }
}

/** "3× 401, 1× 503" */
function list(m: Map<unknown, number>): string {
  return [...m].map(([k, n]) => `${n}× ${k}`).join(", ");
}

function sum(m: Map<unknown, number>): number {
  let n = 0;
  for (const v of m.values()) n += v;
  return n;
}

interface Recorded {
  ctx: SetUp;
  cluster: Cluster;
  receiver: DestinationReceiver;
  dbUrl: string;
  options: SoakOptions;
  logDir: string;
  settled: boolean;
  chaosLog: ChaosLog;
  ingest: IngestLog;
  linkHits: LinkHitLog;
  hammer: HammerLog;
  hits: HitSnapshots;
  revocations: RevocationLog;
  readers: ConsumerLog[];
  auditor: Auditor;
  seconds: number;
}

interface MetricsItem {
  path: string;
  total_views: number;
  total_opens: number;
  total_installs: number;
}

async function judge(r: Recorded): Promise<SoakReport> {
  const { ctx, cluster, receiver, options, ingest, linkHits, hammer, hits, revocations } = r;
  const checks: Check[] = [];
  const notes: string[] = [];
  const feed = r.auditor.log.ids;

  // Every acknowledged event stored once: in the feed read from the start, and in the database.
  const inFeed = storedOnce(
    ingest.acked,
    ingest.unclear,
    r.auditor.events.flatMap((e) => e.soakId ? [e.soakId] : []),
  );
  checks.push({
    name: "acknowledged events: once in the feed",
    ok: storedOnceOk(inFeed) && ingest.refused.length === 0,
    detail: `${ingest.acked.size} acknowledged: missing ${inFeed.missing}, more than once ` +
      `${inFeed.duplicated}, unknown ${inFeed.unknown}; ${ingest.unclear.size} never ` +
      `acknowledged (${inFeed.unclearStored} stored); ${ingest.refused.length} batches refused`,
  });
  r.options.progress?.("checking: the database");
  const rows = await withConnection(r.dbUrl, (sql) =>
    sql<{ client_id: string; n: number }[]>`
      select client_id, count(*)::int as n from analytics_events
      where environment_id = ${ctx.envId} and client_id is not null group by client_id
    `);
  const inDb = storedOnce(
    ingest.acked,
    ingest.unclear,
    rows.flatMap((row) => Array<string>(row.n).fill(row.client_id)),
  );
  checks.push({
    name: "acknowledged events: once in analytics_events",
    ok: storedOnceOk(inDb),
    detail: `missing ${inDb.missing}, more than once ${inDb.duplicated}, unknown ${inDb.unknown}`,
  });

  // Every consumer received the whole feed, once, in its order.
  for (const reader of r.readers) checks.push(sequenceCheck(reader.name, reader.ids, feed));
  const dest = dedupeDeliveries(receiver.deliveries);
  const destCheck = sequenceCheck("destination (deduplicated by event id)", dest.ids, feed);
  if (dest.inconsistentBatches > 0 || receiver.badSignatures > 0 || receiver.malformed > 0) {
    destCheck.ok = false;
    destCheck.detail += `; ${dest.inconsistentBatches} webhook-ids resent with other events, ` +
      `${receiver.badSignatures} bad signatures, ${receiver.malformed} malformed bodies`;
  }
  checks.push(destCheck);
  checks.push({
    name: "drain: consumers caught up",
    ok: r.settled,
    detail: r.settled ? `feed of ${feed.length} events` : "drain timed out",
  });

  // The rate limit, from the server's own record of admitted reads.
  const hitTimes = [...hits.hits.values()];
  const limit = options.feedRateLimit;
  const maxWindow = maxInWindow(hitTimes, RATE_WINDOW_MS);
  const unjustified = unjustifiedRefusals(hammer.refused, hitTimes, limit, RATE_WINDOW_MS);
  const observed = hits.snapshots > 0 && hits.longestGapMs < RATE_WINDOW_MS - 5_000;
  const agrees = hammer.admitted.length <= hitTimes.length &&
    hitTimes.length <= hammer.admitted.length + hammer.unclear;
  checks.push({
    name: "feed rate limit held exactly",
    ok: maxWindow <= limit && unjustified === 0 && observed && agrees &&
      hammer.refused.length > 0 && hammer.refusedWithoutRetryAfter === 0,
    detail: `limit ${limit}/60 s; most admitted in any 60 s: ${maxWindow}; ` +
      `${hammer.refused.length} refused (503 rate_limited), ${unjustified} of them with fewer ` +
      `than ${limit} admitted reads in their window, ${hammer.refusedWithoutRetryAfter} without ` +
      `Retry-After; admitted: ${hammer.admitted.length} answered 200, ${hitTimes.length} ` +
      `recorded by the server (${hammer.unclear} answers lost); longest snapshot gap ` +
      `${Math.round(hits.longestGapMs / 1000)} s`,
  });

  checks.push({
    name: "revoked tokens refused (401) on every instance at once",
    ok: revocations.revoked > 0 && revocations.leaks.length === 0 &&
      revocations.firstReadNot200.size === 0,
    detail: `${revocations.revoked} revoked, ${sum(revocations.afterRevoke)} reads after revoke ` +
      `(${list(revocations.afterRevoke)}), ${revocations.leaks.length} not refused` +
      revocations.leaks.slice(0, 3).map((l) =>
        ` (${l.route} on instance ${l.instance}: ${l.status} ${l.msAfterRevoke} ms after)`
      ).join("") +
      `; new tokens' first reads not 200: ${list(revocations.firstReadNot200) || "none"}`,
  });

  checks.push({
    name: "no 5xx but the contract's 503 with Retry-After",
    ok: cluster.serverErrors.length === 0,
    detail: `${cluster.serverErrors.length} other 5xx; 503s: ${
      list(cluster.contract503) || "none"
    }`,
  });
  for (const e of cluster.serverErrors.slice(0, 10)) {
    notes.push(
      `${e.label}: ${e.status} from instance ${e.instance} (request ${e.requestId}, ` +
        `Retry-After ${e.retryAfter}): ${e.body}`,
    );
  }

  // Link views: each redirect recorded one view, but for what a SIGKILL took.
  r.options.progress?.("checking: link metrics");
  const metrics = await must<MetricsItem[]>(cluster, "/api/v1/sdk/metrics_for_project", {
    headers: { "PROJECT-KEY": ctx.projectKey, ENVIRONMENT: "production" },
  }, 200);
  const byPath = new Map(metrics.map((m) => [m.path, m]));
  let sent = 0;
  let got = 0;
  let unclear = 0;
  let phantom = 0;
  for (const path of ctx.links) {
    const s = linkHits.redirects.get(path) ?? 0;
    const u = linkHits.unclear.get(path) ?? 0;
    const g = byPath.get(path)?.total_views ?? 0;
    sent += s;
    got += g;
    unclear += u;
    if (g > s + u) phantom += g - s - u;
  }
  // A crash is a process killed outright too (and fails its own check).
  const bound = viewLossBound(
    linkHits.answered,
    [...cluster.kills, ...cluster.crashes],
    options.viewLossMomentMs,
    viewOutages(r.chaosLog),
  );
  const lost = Math.max(0, sent - got);
  checks.push({
    name: "link views lost only within the documented bound",
    ok: phantom === 0 && lost <= bound && sum(linkHits.other) === 0,
    detail: `${sent} redirects (+${unclear} unanswered), ${got} views counted: ${lost} lost; ` +
      `bound ${bound} (redirects the killed instances answered in the ` +
      `${options.viewLossMomentMs} ms before they died, or since the connections were ` +
      `terminated if that was less than ${VIEW_RETRY_GRACE_MS} ms before, or since the database ` +
      `node was stopped if it was not yet up again ${VIEW_RETRY_GRACE_MS} ms); ${phantom} views ` +
      `beyond the hits; ` +
      `${linkHits.unavailable} answered 503; other answers: ${list(linkHits.other) || "none"}`,
  });

  // The counters move in the transaction that stores the event: they agree with the feed.
  const counted = new Map<string, { view: number; open: number; install: number }>();
  for (const e of r.auditor.events) {
    if (!e.link || (e.type !== "view" && e.type !== "open" && e.type !== "install")) continue;
    const c = counted.get(e.link) ?? { view: 0, open: 0, install: 0 };
    c[e.type]++;
    counted.set(e.link, c);
  }
  const disagree = ctx.links.filter((path) => {
    const m = byPath.get(path);
    const c = counted.get(path) ?? { view: 0, open: 0, install: 0 };
    return !m || m.total_views !== c.view || m.total_opens !== c.open ||
      m.total_installs !== c.install;
  });
  checks.push({
    name: "link counters agree with the feed",
    ok: disagree.length === 0,
    detail: disagree.length === 0
      ? `views, opens and installs of ${ctx.links.length} links`
      : `differ for ${disagree.join(", ")}`,
  });

  checks.push({
    name: "no instance exited on its own",
    ok: cluster.crashes.length === 0,
    detail: cluster.crashes.length === 0
      ? "only the scheduled SIGKILLs"
      : cluster.crashes.map((c) => `instance ${c.instance} (pid ${c.pid}) ${c.status}`).join("; "),
  });
  for (const c of cluster.crashes) {
    notes.push(`instance ${c.instance} crashed (${c.logFile}):\n${c.tail}`);
  }
  checks.push({
    name: "chaos ran as scheduled",
    ok: r.chaosLog.errors.length === 0 &&
      (options.killEverySeconds <= 0 || cluster.kills.length > 0),
    detail: `${cluster.kills.length} SIGKILLs, ${cluster.restarts.length} restarts; ` +
      `${r.chaosLog.terminatedConnections} connections terminated` +
      (r.chaosLog.errors.length ? `; errors: ${r.chaosLog.errors.join("; ")}` : ""),
  });

  for (const [why, n] of cluster.connectionErrorKinds) notes.push(`${n}× no answer: ${why}`);
  r.options.progress?.("checking: instance logs");
  for (const line of await errorLogLines(cluster.logFiles)) notes.push(line);

  const views = r.auditor.events.filter((e) => e.type === "view").length;
  const restartMs = cluster.restarts.map((x) => x.tookMs);
  const counts: [string, string | number][] = [
    ["run (traffic + drain)", `${Math.round(r.seconds)} s (${options.seconds} s traffic)`],
    [
      "SIGKILLs / restarts",
      `${cluster.kills.length} / ${cluster.restarts.length}` +
      (restartMs.length ? ` (back in ${Math.min(...restartMs)}–${Math.max(...restartMs)} ms)` : ""),
    ],
    ["database connections terminated", r.chaosLog.terminatedConnections],
    ...(options.nodeFault
      ? [[
        "database node stopped / started (s into the run)",
        [r.chaosLog.nodeStoppedAt, r.chaosLog.nodeStartedAt]
          .map((t) => t === null ? "no" : t.toFixed(1)).join(" / "),
      ] as [string, string]]
      : []),
    ["ingested batches (sent again)", `${ingest.batches} (${ingest.resent})`],
    ["events acknowledged", ingest.acked.size],
    ["duplicates reported by 202s", ingest.duplicates],
    ["feed events (read from the start)", `${feed.length} (${views} views)`],
    ["link redirects (unanswered)", `${sent} (${unclear})`],
    ["views counted / lost / bound", `${got} / ${lost} / ${bound}`],
    [
      "hammer: 200 / 503 rate_limited / lost",
      `${hammer.admitted.length} / ` +
      `${hammer.refused.length} / ${hammer.unclear}`,
    ],
    ["rate limit: server-recorded reads, max per 60 s", `${hitTimes.length}, ${maxWindow}`],
    [
      "tokens revoked / reads after revoke",
      `${revocations.revoked} / ${
        sum(revocations.afterRevoke)
      } (${revocations.skippedDown} skipped: instance down)`,
    ],
    [
      "destination requests (repeated batches, duplicate events)",
      `${receiver.deliveries.length} (${dest.repeatedBatches}, ${dest.duplicateEvents})`,
    ],
    ...r.readers.map((c): [string, string] => [
      `${c.name}: events, reconnects, 503s waited`,
      `${c.ids.length}, ${c.reconnects}, ${c.waited503}`,
    ]),
    ["auditor tokens", r.auditor.tokensUsed],
    ["requests (connection errors)", `${sumRequests(cluster)} (${connectionErrors(cluster)})`],
    ["503 with Retry-After", list(cluster.contract503)],
  ];
  return { ok: checks.every((c) => c.ok), checks, counts, notes, logDir: r.logDir };
}

function sumRequests(cluster: Cluster): number {
  let n = 0;
  for (const s of cluster.stats.values()) n += sum(s.statuses);
  return n;
}

function connectionErrors(cluster: Cluster): number {
  let n = 0;
  for (const s of cluster.stats.values()) n += s.connectionErrors;
  return n;
}

/** The instances' error-level log lines, by message: what to read first when a check fails. */
async function errorLogLines(files: readonly string[]): Promise<string[]> {
  const byMsg = new Map<string, number>();
  for (const file of files) {
    const text = await Deno.readTextFile(file).catch(() => "");
    for (const line of text.split("\n")) {
      if (!line.includes('"level":"error"')) continue;
      let msg = "(unparsed)";
      try {
        const entry = JSON.parse(line) as { msg?: string; message?: string };
        msg = `${entry.msg}${entry.message ? `: ${entry.message.slice(0, 120)}` : ""}`;
      } catch { /* keep the placeholder */ }
      byMsg.set(msg, (byMsg.get(msg) ?? 0) + 1);
    }
  }
  return [...byMsg].map(([msg, n]) => `instances logged ${n}× error "${msg}"`);
}
