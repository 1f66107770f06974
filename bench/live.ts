// The live tail (issue 11): ingestion-to-receipt latency over SSE at idle with one stream, and
// with 100 open streams on one instance while ingestion runs; the process's CPU time and RSS
// over the loaded phase. The service (woken by NOTIFY), the ingesting client and the 100
// readers share this process, as on one instance with its clients: the CPU figure is an upper
// bound for the server's share.
import { CLI_AUDIT } from "../services/access/audit.ts";
import process from "node:process";
import { createApp } from "../app.ts";
import { resolveConfig } from "../config.ts";
import { systemClock } from "../services/clock.ts";
import { createFeedToken } from "../services/feed_tokens.ts";
import { startFeedWakeup } from "../services/feed_wakeup.ts";
import { LiveTails } from "../services/live_tail.ts";
import { createLogger } from "../services/log.ts";
import { createProject } from "../services/projects.ts";
import { hashSecret } from "../services/secrets.ts";
import { ViewRecorder } from "../services/view_recorder.ts";
import { ADMIN_TOKEN, type BenchDatabase, CURSOR_SECRET, fmt, serve } from "./lib.ts";
import type { Row } from "./sdk.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** user+system CPU time of this process, in ms (process.cpuUsage: getrusage). */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
}

/** Opens one SSE stream and calls `onEvent` with each event's send time (carried in user.id). */
async function openStream(
  url: string,
  token: string,
  signal: AbortSignal,
  onEvent: (sentAt: number) => void,
): Promise<void> {
  const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` }, signal });
  if (res.status !== 200) throw new Error(`stream answered ${res.status}: ${await res.text()}`);
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of res.body!) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const m = /"user":\{"id":"t([0-9.]+)"/.exec(block);
          if (m) onEvent(Number(m[1]));
        }
      }
    } catch { /* aborted at the end */ }
  })();
}

export async function liveBenchmarks(db: BenchDatabase, seconds: number): Promise<Row[]> {
  const { sql } = db;
  const logger = createLogger("warn", () => {});
  const config = resolveConfig({
    DATABASE_URL: "postgres://bench",
    ADMIN_TOKEN,
    LINK_BASE_URL: "https://lnk.example.test",
    FEED_RATE_LIMIT: "120",
  });
  const deps = {
    sql,
    config,
    clock: systemClock,
    logger,
    adminTokenHash: hashSecret(ADMIN_TOKEN),
    cursorSecret: CURSOR_SECRET,
    views: new ViewRecorder(sql, { clock: systemClock, linkBaseUrl: config.linkBaseUrl, logger }),
  };
  const wakeup = await startFeedWakeup(sql, logger);
  const liveTails = new LiveTails(deps, { wakeup });
  const service = serve(createApp({ ...deps, liveTails }).fetch);
  const rows: Row[] = [];
  const controller = new AbortController();
  try {
    const { project, projectKey } = await createProject(
      sql,
      { name: "live", enterprise: true },
      CLI_AUDIT,
    );
    const envId = project.environments.production.project_id;
    // 2 open streams per token: 50 tokens for 100 streams.
    const tokens: string[] = [];
    for (let i = 0; i < 50; i++) {
      tokens.push(
        (await createFeedToken(sql, systemClock, String(envId), `live-${i}`, CLI_AUDIT)).value,
      );
    }
    const streamUrl = `${service.url}/api/v1/projects/${envId}/event_stream/live`;
    const send = async (n: number) => {
      const events = Array.from({ length: n }, () => ({
        type: "open",
        occurred_at: new Date().toISOString(),
        user: { id: `t${performance.now()}` },
      }));
      const res = await fetch(`${service.url}/api/v1/sdk/events`, {
        method: "POST",
        headers: {
          "PROJECT-KEY": projectKey,
          ENVIRONMENT: "production",
          "Content-Type": "application/json",
        },
        body: JSON.stringify({ events }),
      });
      await res.body?.cancel();
      if (res.status !== 202) throw new Error(`ingestion answered ${res.status}`);
    };

    // Idle: one stream, one event at a time.
    let received = 0;
    let last = 0;
    await openStream(streamUrl, tokens[0]!, controller.signal, (sentAt) => {
      received++;
      last = performance.now() - sentAt;
    });
    const idle: number[] = [];
    for (let i = 0; i < 40; i++) {
      await sleep(50);
      const before = received;
      await send(1);
      const t0 = performance.now();
      while (received === before && performance.now() - t0 < 5_000) await sleep(1);
      idle.push(last);
    }
    idle.sort((a, b) => a - b);
    rows.push({
      name: "live tail latency at idle (ingestion to SSE receipt, 1 stream, 40 events)",
      figure: `p50 ${fmt(percentile(idle, 0.5))} ms, p99 ${fmt(percentile(idle, 0.99))} ms`,
      target: "p50 < 250 ms",
      pass: percentile(idle, 0.5) < 250,
    });

    // Loaded: 100 streams (the idle one + 99), ingestion of 10-event batches every 20 ms.
    const loaded: number[] = [];
    let measuring = false;
    const record = (sentAt: number) => {
      if (measuring) loaded.push(performance.now() - sentAt);
    };
    await openStream(streamUrl, tokens[0]!, controller.signal, record);
    for (let i = 2; i < 100; i++) {
      await openStream(streamUrl, tokens[Math.floor(i / 2)]!, controller.signal, record);
    }
    await sleep(500);
    const rssBefore = Deno.memoryUsage().rss;
    const cpuBefore = cpuMs();
    const started = performance.now();
    measuring = true;
    let sent = 0;
    while (performance.now() - started < seconds * 1000) {
      await send(10);
      sent += 10;
      await sleep(20);
    }
    await sleep(1_500);
    measuring = false;
    const elapsed = performance.now() - started;
    const cpuAfter = cpuMs();
    const rssAfter = Deno.memoryUsage().rss;
    loaded.sort((a, b) => a - b);
    const p99 = percentile(loaded, 0.99);
    rows.push({
      name: "live tail latency, 100 streams while ingesting (10-event batches every 20 ms)",
      figure: `p50 ${fmt(percentile(loaded, 0.5))} ms, p99 ${fmt(p99)} ms; ${loaded.length}/${
        sent * 99
      } receipts (${sent} events × 99 measured streams)`,
      target: "p99 < 1 s",
      pass: p99 < 1000 && loaded.length >= sent * 99,
    });
    rows.push({
      name: "live tail process cost, 100 streams while ingesting (server + clients in-process)",
      figure: `CPU ${fmt(cpuAfter - cpuBefore, 0)} ms over ${fmt(elapsed, 0)} ms (${
        fmt((cpuAfter - cpuBefore) / elapsed * 100, 0)
      }% of a core), RSS ${fmt(rssBefore / 2 ** 20, 0)} → ${fmt(rssAfter / 2 ** 20, 0)} MiB`,
      target: "reported",
      pass: true,
    });
  } finally {
    controller.abort();
    await liveTails.close();
    await wakeup.close();
    await service.close();
  }
  return rows;
}
