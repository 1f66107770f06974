// deno task citus -- --fault [--seconds 20]: a worker of the Citus cluster stopped and started
// while the service ingests and a reader follows the feed (docs/SCALING.md, "Running on Citus").
//
// On a fresh cluster database at CITUS_DATABASE_URL's coordinator: one service, writers posting
// batches of 20 events with client ids, and a reader following the feed at limit 10. After a
// quarter of the run the worker holding the environment's feed is stopped (pg_ctl stop -m fast,
// as the postgres user), and started again at half. Then the writers stop, the reader catches
// up, and the run checks: every acknowledged (202) event is stored and was served, the reader
// was served the whole feed once in (xid, seq) order, and every failed answer was a 503 with
// Retry-After (counted by status).
import { connect } from "../db/connect.ts";
import { createDatabase, dropDatabase } from "../db/databases.ts";
import { migrate } from "../db/migrate.ts";
import { CLI_AUDIT } from "../services/access/audit.ts";
import { systemClock } from "../infra/clock.ts";
import { createFeedToken } from "../services/feed/tokens.ts";
import { createProject } from "../services/projects/projects.ts";
import { serveService } from "./lib.ts";

// deno-lint-ignore no-console
const print = (s: string) => console.log(s);

/** The postmaster's data directory and arguments for the server listening on `port`. */
async function postmaster(port: number): Promise<{ dir: string; args: string[] }> {
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = (await Deno.readTextFile(`/proc/${e.name}/cmdline`)).split("\0");
      const p = cmd.indexOf("-p");
      const d = cmd.indexOf("-D");
      if (cmd[0]?.endsWith("/postgres") && d >= 0 && p >= 0 && cmd[p + 1] === String(port)) {
        return { dir: cmd[d + 1]!, args: cmd.slice(1).filter((_, i) => i !== d - 1 && i !== d) };
      }
    } catch { /* gone */ }
  }
  throw new Error(`no postmaster listens on ${port}`);
}

async function pgCtl(args: string[]): Promise<void> {
  const bin = "/usr/lib/postgresql/15/bin/pg_ctl";
  const asPostgres = Deno.uid() === 0;
  const out = await new Deno.Command(asPostgres ? "runuser" : bin, {
    args: asPostgres ? ["-u", "postgres", "--", bin, ...args] : args,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
}

export async function citusFault(base: string, seconds: number): Promise<boolean> {
  const name = `fault_${Date.now().toString(36)}`;
  const url = await createDatabase(base, name);
  await migrate(url);
  const sql = connect(url, 10);
  const service = serveService(sql, { FEED_RATE_LIMIT: "100000000" });
  let ok = true;
  try {
    const { project, projectKey } = await createProject(
      sql,
      { name: "fault", enterprise: true },
      CLI_AUDIT,
    );
    const envId = project.environments.production.project_id;
    const token = await createFeedToken(sql, systemClock, String(envId), "fault", CLI_AUDIT);
    const [shard] = await sql<{ nodeport: number }[]>`
      select nodeport from citus_shards
      where table_name = 'feed_events'::regclass
        and shardid = get_shard_id_for_distribution_column('feed_events', ${envId}::int)
    `;
    const worker = await postmaster(shard!.nodeport);
    print(`fault: environment ${envId}'s feed is on the worker at :${shard!.nodeport}`);

    const statuses = new Map<string, number>();
    const count = (what: string) => statuses.set(what, (statuses.get(what) ?? 0) + 1);
    const acked: string[] = [];
    let writing = true;
    let batch = 0;
    const writer = async (w: number) => {
      while (writing) {
        const ids = Array.from({ length: 20 }, (_, i) => `w${w}-${batch}-${i}`);
        batch++;
        const res = await fetch(`${service.url}/api/v1/sdk/events`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "PROJECT-KEY": projectKey,
            "ENVIRONMENT": "production",
          },
          body: JSON.stringify({
            events: ids.map((id) => ({ id, type: "open", occurred_at: new Date().toISOString() })),
          }),
        });
        await res.body?.cancel();
        count(`ingest ${res.status}${res.headers.get("retry-after") ? " Retry-After" : ""}`);
        if (res.status === 202) acked.push(...ids);
        else await new Promise((r) => setTimeout(r, 50));
      }
    };
    const read: string[] = [];
    let after: string | undefined;
    const readPage = async (): Promise<number> => {
      const qs = new URLSearchParams({ limit: "10" });
      if (after) qs.set("after", after);
      const res = await fetch(`${service.url}/api/v1/projects/${envId}/event_stream?${qs}`, {
        headers: { Authorization: `Bearer ${token.value}` },
      });
      count(`read ${res.status}${res.headers.get("retry-after") ? " Retry-After" : ""}`);
      if (res.status !== 200) {
        await res.body?.cancel();
        await new Promise((r) => setTimeout(r, 50));
        return -1;
      }
      const page = await res.json() as { events: { id: string }[]; next_after: string };
      read.push(...page.events.map((e) => e.id));
      after = page.next_after;
      return page.events.length;
    };
    const reader = async () => {
      while (writing) await readPage();
    };

    const started = performance.now();
    const running = [writer(1), writer(2), writer(3), reader()];
    await new Promise((r) => setTimeout(r, seconds * 250));
    await pgCtl(["-D", worker.dir, "-m", "fast", "stop"]);
    const stoppedAt = (performance.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, seconds * 250));
    await pgCtl([
      "-D",
      worker.dir,
      "-o",
      worker.args.join(" "),
      "-l",
      `${worker.dir}.log`,
      "-w",
      "start",
    ]);
    const startedAt = (performance.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, seconds * 500));
    writing = false;
    await Promise.all(running);
    // Catch up: pages until two in a row are empty.
    for (let empty = 0; empty < 2;) empty = (await readPage()) === 0 ? empty + 1 : 0;

    const stored = await sql<{ client_id: string; event_id: string }[]>`
      select client_id, event_id from analytics_events where environment_id = ${envId}
    `;
    const feed = await sql<{ id: string }[]>`
      select body::json->>'id' as id from feed_events where environment_id = ${envId}
      order by xid, seq
    `;
    const storedIds = new Map(stored.map((r) => [r.client_id, r.event_id]));
    const lost = acked.filter((id) => !storedIds.has(id));
    const readSet = new Set(read);
    const unserved = acked.filter((id) => !readSet.has(storedIds.get(id) ?? ""));
    const inOrder = JSON.stringify(read) === JSON.stringify(feed.map((r) => r.id));
    const failures = [...statuses].filter(([k]) =>
      !/ (200|202)$/.test(k) && !/503 Retry-After$/.test(k)
    );
    print(
      `fault: worker stopped at ${stoppedAt.toFixed(1)} s, started again at ${
        startedAt.toFixed(1)
      } s`,
    );
    print(`fault: answers ${[...statuses].map(([k, n]) => `${k}: ${n}`).join(", ")}`);
    print(
      `fault: ${acked.length} events acknowledged, ${lost.length} of them not stored, ` +
        `${unserved.length} not served; ${read.length} served of ${feed.length} in the feed, ` +
        `${read.length - readSet.size} twice, ${inOrder ? "in" : "NOT in"} (xid, seq) order`,
    );
    ok = lost.length === 0 && unserved.length === 0 && inOrder && read.length === readSet.size &&
      failures.length === 0;
    if (failures.length > 0) {
      print(`fault: answers other than 200/202/503+Retry-After: ${failures}`);
    }
    print(`fault: ${ok ? "passed" : "FAILED"}`);
  } finally {
    await service.close();
    await sql.end({ timeout: 5 });
    await dropDatabase(base, name).catch(() => {});
  }
  return ok;
}

if (import.meta.main) {
  const base = Deno.env.get("CITUS_DATABASE_URL") ?? Deno.env.get("DATABASE_URL");
  if (!base) throw new Error("CITUS_DATABASE_URL: the coordinator");
  Deno.exit((await citusFault(base, Number(Deno.args[0] ?? 20))) ? 0 : 1);
}
