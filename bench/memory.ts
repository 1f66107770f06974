// `deno task bench -- --only memory [--memory-minutes N]`: the service's resident memory (RSS,
// /proc/<pid>/status) as self-hosters run it, a process of its own with the start task's
// permissions, on the embedded database and on PostgreSQL: idle after its first start, idle after
// a restart on the same data, and after N minutes (default 10) of mixed load, with the peak
// during it. The load: link lookups, link-host redirects (views recorded), GraphQL, metrics,
// feed reads and dashboard pages, each from wrk at full speed, beside a steady stream of ingested
// events captured by the feed and pushed to a webhook receiver.
import { createDatabase, dropDatabase } from "../db/databases.ts";
import { fmt, postJson, serve, wrk, type WrkResult } from "./lib.ts";
import { judge, report, type Row } from "./rows.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const ADMIN_TOKEN = "bench-memory-admin-token-0123456789";
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148";
/** What an idle instance is given to settle after it answered its first readiness check. */
const SETTLE_MS = 10_000;
/** The embedded default must fit a 1 GB machine with room to spare (issue 37). */
export const EMBEDDED_IDLE_TARGET_MB = 300;

export interface ServiceProcess {
  pid: number;
  url: string;
  /** Resident memory now, in MiB. */
  rssMb(): Promise<number>;
  stop(): Promise<void>;
}

/** A free loopback port: bound, read and released (the service then binds it). */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/**
 * Resident memory of process `pid` in MiB, by `ps` (procps): reading another process's
 * /proc/<pid>/status needs --allow-all, which the bench task does not have.
 */
export async function rssOf(pid: number): Promise<number> {
  const out = await new Deno.Command("ps", { args: ["-o", "rss=", "-p", String(pid)] }).output();
  const kb = new TextDecoder().decode(out.stdout).trim();
  return out.success && /^[0-9]+$/.test(kb) ? Number(kb) / 1024 : NaN;
}

/** The variables `deno task start` sets before `deno run` (its leading `NAME=value` words). */
function startTaskEnv(): Record<string, string> {
  const config = JSON.parse(Deno.readTextFileSync(new URL("../deno.json", import.meta.url)));
  const env: Record<string, string> = {};
  for (const word of (config.tasks.start as string).split(/\s+/)) {
    const m = /^(\w+)=(\S*)$/.exec(word);
    if (!m) break;
    env[m[1]!] = m[2]!;
  }
  return env;
}

/**
 * main.ts as `deno task start` runs it (the same four permissions and the variables it sets), on
 * `env`; resolves once it answers /readyz. Its log goes nowhere: reading it would be load of the
 * bench's own.
 */
export async function startServiceProcess(
  env: Record<string, string>,
): Promise<ServiceProcess> {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", MAIN],
    env: {
      ...startTaskEnv(),
      PORT: String(port),
      ADMIN_TOKEN,
      FEED_RATE_LIMIT: "100000000",
      DESTINATIONS_ALLOW_PRIVATE: "true",
      LOG_LEVEL: "warn",
      ...env,
    },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const errDone = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) stderr += decoder.decode(chunk, { stream: true });
  })();
  const url = `http://127.0.0.1:${port}`;
  const exited = child.status.then((s) => s);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const ended = await Promise.race([exited, new Promise((r) => setTimeout(r, 250, null))]);
    if (ended) throw new Error(`the service exited (${JSON.stringify(ended)}): ${stderr}`);
    const ready = await fetch(`${url}/readyz`).then((r) => (r.body?.cancel(), r.ok), () => false);
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the service did not become ready: ${stderr}`);
    }
  }
  return {
    pid: child.pid,
    url,
    rssMb: () => rssOf(child.pid),
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone already */ }
      await exited;
      await errDone;
    },
  };
}

export interface Seeded {
  linkPath: string;
  sdk: Record<string, string>;
  feed: { url: string; headers: Record<string, string> };
  environmentId: number;
}

async function call(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : {};
}

/**
 * An Enterprise project with `links` links, a feed token and a destination posting to
 * `receiver`: through the HTTP API, as a self-hoster would make them.
 */
export async function seedService(
  url: string,
  receiver: string,
  links = 200,
): Promise<Seeded> {
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const created = await call("POST", `${url}/api/v1/admin/projects`, admin, {
    name: "memory",
    enterprise: true,
  }) as { project: { project_key: string; environments: { production: { project_id: number } } } };
  const environmentId = created.project.environments.production.project_id;
  const sdk = { "PROJECT-KEY": created.project.project_key, "ENVIRONMENT": "production" };
  let linkPath = "";
  for (let i = 0; i < links; i++) {
    const made = await call("POST", `${url}/api/v1/sdk/generate_link`, sdk, {
      title: `Link ${i}`,
      ios_custom_redirect: { url: "https://apps.apple.com/app/id1" },
      tags: JSON.stringify(["memory"]),
    }) as { link: string };
    linkPath ||= new URL(made.link).pathname.slice(1);
  }
  const { token } = await call(
    "POST",
    `${url}/api/v1/projects/${environmentId}/event_stream_tokens`,
    admin,
    { name: "memory" },
  ) as { token: { value: string } };
  await call("POST", `${url}/api/v1/projects/${environmentId}/destinations`, admin, {
    url: receiver,
  });
  return {
    linkPath,
    sdk,
    environmentId,
    feed: {
      url: `${url}/api/v1/projects/${environmentId}/event_stream?limit=100`,
      headers: { Authorization: `Bearer ${token.value}` },
    },
  };
}

/** Ten events of mixed types on the seeded link, as an app's SDK sends them. */
function eventBatch(linkPath: string): string {
  const now = new Date().toISOString();
  const types = ["open", "install", "app_open", "session", "custom"];
  return JSON.stringify({
    events: Array.from({ length: 10 }, (_, i) => ({
      type: types[i % types.length],
      ...(types[i % types.length] === "session" ? { time_spent: 30 } : {}),
      ...(types[i % types.length] === "custom" ? { name: "level_up" } : {}),
      occurred_at: now,
      link_path: linkPath,
      device: { os: "iOS", model: "iPhone15,2" },
      user: { id: `u-${i}` },
    })),
  });
}

export interface LoadResult {
  runs: Record<string, WrkResult>;
  ingested: number;
  ingestErrors: string[];
  peakMb: number;
}

/**
 * `seconds` of mixed load on the service: wrk on each read path at once, and `batchesPerSecond`
 * ingestion batches of ten events, paced. RSS is sampled every 5 s for the peak.
 */
export async function mixedLoad(
  service: ServiceProcess,
  seeded: Seeded,
  seconds: number,
  batchesPerSecond = 20,
): Promise<LoadResult> {
  const { url } = service;
  const runs: Record<string, Promise<WrkResult>> = {
    "link lookup": wrk(`${url}/api/v1/sdk/link/${seeded.linkPath}`, {
      connections: 4,
      threads: 1,
      seconds,
      headers: seeded.sdk,
    }),
    "link-host redirect": wrk(`${url}/${seeded.linkPath}`, {
      connections: 4,
      threads: 1,
      seconds,
      headers: { "User-Agent": IPHONE },
      expect: { status: 302 },
    }),
    "GraphQL": wrk(`${url}/graphql`, {
      connections: 1,
      threads: 1,
      seconds,
      headers: seeded.sdk,
      lua: postJson(JSON.stringify({
        query: `{ link(path: ${JSON.stringify(seeded.linkPath)}) { path title } }`,
      })),
      expect: { status: 200, bodyExcludes: ['"errors":'] },
    }),
    "metrics": wrk(`${url}/api/v1/sdk/metrics_for_project`, {
      connections: 1,
      threads: 1,
      seconds,
      headers: seeded.sdk,
    }),
    "feed page": wrk(seeded.feed.url, {
      connections: 1,
      threads: 1,
      seconds,
      headers: seeded.feed.headers,
    }),
    "dashboard sign-in page": wrk(`${url}/dashboard/sign-in`, {
      connections: 1,
      threads: 1,
      seconds,
    }),
  };
  let peakMb = await service.rssMb();
  const sampler = setInterval(async () => {
    const now = await service.rssMb();
    // NaN once the process is gone: the runs report that.
    if (Number.isFinite(now)) peakMb = Math.max(peakMb, now);
  }, 5_000);
  let ingested = 0;
  const ingestErrors: string[] = [];
  const ingest = (async () => {
    const end = Date.now() + seconds * 1000;
    const gap = 1000 / batchesPerSecond;
    // Paced by the clock, and ended by it: a database slower than the pace gets fewer batches,
    // not a longer run.
    for (let next = Date.now(); Date.now() < end; next += gap) {
      const wait = next - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const res = await fetch(`${url}/api/v1/sdk/events`, {
        method: "POST",
        headers: { ...seeded.sdk, "Content-Type": "application/json" },
        body: eventBatch(seeded.linkPath),
      }).catch((err) => err as Error);
      if (res instanceof Error) ingestErrors.push(res.message);
      else {
        const text = await res.text();
        if (res.status === 202) ingested += 10;
        else if (ingestErrors.length < 5) ingestErrors.push(`${res.status} ${text.slice(0, 200)}`);
      }
    }
  })();
  try {
    const names = Object.keys(runs);
    const results = await Promise.all(Object.values(runs));
    await ingest;
    return {
      runs: Object.fromEntries(names.map((n, i) => [n, results[i]!])),
      ingested,
      ingestErrors,
      peakMb: Math.max(peakMb, await service.rssMb()),
    };
  } finally {
    clearInterval(sampler);
  }
}

const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));

interface Setup {
  name: string;
  env: Record<string, string>;
  close(): Promise<void>;
}

async function embeddedSetup(): Promise<Setup> {
  const dataDir = await Deno.makeTempDir({ prefix: "bench-memory-" });
  return {
    name: "embedded",
    env: { DATA_DIR: dataDir },
    close: () => Deno.remove(dataDir, { recursive: true }),
  };
}

async function postgresSetup(): Promise<Setup> {
  const base = Deno.env.get("BENCH_DATABASE_URL") ?? Deno.env.get("DATABASE_URL") ??
    "postgres://postgres@127.0.0.1:5432/postgres";
  const name = `bench_memory_${Date.now().toString(36)}`;
  const url = await createDatabase(base, name);
  return {
    name: "PostgreSQL",
    env: { DATABASE_URL: url },
    close: () => dropDatabase(base, name),
  };
}

/** The memory rows of one database: idle at first start, idle restarted, after the load. */
async function memoryRows(setup: Setup, minutes: number): Promise<Row[]> {
  const rows: Row[] = [];
  const embedded = setup.name === "embedded";
  const idleTarget = embedded ? `< ${EMBEDDED_IDLE_TARGET_MB} MB` : "none";
  const idleRow = (name: string, mb: number): Row => ({
    name: `RSS idle, ${setup.name}, ${name}`,
    figure: `${fmt(mb, 0)} MB`,
    target: idleTarget,
    outcome: embedded
      ? judge(mb < EMBEDDED_IDLE_TARGET_MB, Number.isFinite(mb) ? [] : ["no RSS read"])
      : report(Number.isFinite(mb) ? [] : ["no RSS read"]),
  });
  let service = await startServiceProcess(setup.env);
  try {
    await settle();
    rows.push(idleRow("first start", await service.rssMb()));
  } finally {
    await service.stop();
  }
  service = await startServiceProcess(setup.env);
  const receiver = serve(() => new Response(null, { status: 204 }));
  try {
    await settle();
    rows.push(idleRow("restarted", await service.rssMb()));
    const seeded = await seedService(service.url, receiver.url);
    const load = await mixedLoad(service, seeded, Math.max(5, Math.round(minutes * 60)));
    await settle();
    const after = await service.rssMb();
    const problems = [
      ...Object.entries(load.runs).flatMap(([n, r]) => r.problems.map((p) => `${n}: ${p}`)),
      ...load.ingestErrors.map((e) => `ingestion: ${e}`),
    ];
    const rates = Object.entries(load.runs).map(([n, r]) => `${n} ${fmt(r.rps, 0)}/s`).join(", ");
    rows.push({
      name: `RSS after ${minutes} min of mixed load, ${setup.name}`,
      figure: `${fmt(after, 0)} MB idle after it, peak ${fmt(load.peakMb, 0)} MB (${rates}; ` +
        `${load.ingested} events ingested)`,
      target: "reported",
      outcome: report(problems),
    });
  } finally {
    await service.stop();
    await receiver.close();
  }
  return rows;
}

export async function memoryBenchmarks(minutes: number): Promise<Row[]> {
  const rows: Row[] = [];
  for (const make of [embeddedSetup, postgresSetup]) {
    const setup = await make();
    try {
      rows.push(...await memoryRows(setup, minutes));
    } finally {
      await setup.close();
    }
  }
  return rows;
}
