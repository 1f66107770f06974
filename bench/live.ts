// The live tail (issue 11): ingestion-to-receipt latency over SSE at idle with one stream, and
// with 100 open streams on one instance while ingestion runs; the process's CPU time and RSS
// over the loaded phase. The service (woken by NOTIFY), the ingesting client and the 100
// readers share this process, as on one instance with its clients: the CPU figure is an upper
// bound for the server's share.
import { CLI_AUDIT } from "../services/access/audit.ts";
import process from "node:process";
import { createApp } from "../app.ts";
import { resolveConfig } from "../config.ts";
import { systemClock } from "../infra/clock.ts";
import { createFeedToken } from "../services/feed/tokens.ts";
import { startFeedWakeup } from "../services/feed/wakeup.ts";
import { LiveTails } from "../services/feed/live_tail.ts";
import { createLogger } from "../infra/log.ts";
import { createProject } from "../services/projects/projects.ts";
import { hashSecret } from "../infra/secrets.ts";
import { ViewRecorder } from "../services/link_host/view_recorder.ts";
import { ADMIN_TOKEN, type BenchDatabase, CURSOR_SECRET, fmt, serve } from "./lib.ts";
import { percentile, ReceiptLatencies, waitForReceipt } from "./receipts.ts";
import { judge, notFinite, report, type Row } from "./rows.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RECEIPT_WAIT_MS = 5_000;
/** How long after the last send of the loaded phase its receipts are still counted. */
const LOADED_GRACE_MS = 1_500;

/** user+system CPU time of this process, in ms (process.cpuUsage: getrusage). */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * Opens one SSE stream and calls `onEvent` with each event's marker (its user.id,
 * `t<send time>-<n>`) and send time.
 */
async function openStream(
  url: string,
  token: string,
  signal: AbortSignal,
  onEvent: (marker: string, sentAt: number) => void,
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
          const m = /"user":\{"id":"(t([0-9.]+)-[0-9]+)"/.exec(block);
          if (m) onEvent(m[1]!, Number(m[2]));
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
    let sends = 0;
    /** Ingests `n` events and answers their markers. */
    const send = async (n: number) => {
      const events = Array.from({ length: n }, () => ({
        type: "open",
        occurred_at: new Date().toISOString(),
        user: { id: `t${performance.now()}-${sends++}` },
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
      return events.map((e) => e.user.id);
    };

    // Idle: one stream, one event at a time, each timed to its own receipt.
    const receipts = new Map<string, number>();
    await openStream(streamUrl, tokens[0]!, controller.signal, (marker) => {
      if (!receipts.has(marker)) receipts.set(marker, performance.now());
    });
    const latencies = new ReceiptLatencies();
    for (let i = 0; i < 40; i++) {
      await sleep(50);
      const [marker] = await send(1);
      const sentAt = Number(/^t([0-9.]+)-/.exec(marker!)![1]);
      latencies.record(sentAt, await waitForReceipt(() => receipts.get(marker!), RECEIPT_WAIT_MS));
    }
    const idle = latencies.summary(RECEIPT_WAIT_MS);
    rows.push({
      name: "live tail latency at idle (ingestion to SSE receipt, 1 stream, 40 events)",
      figure: `p50 ${fmt(idle.p50)} ms, p99 ${fmt(idle.p99)} ms (${idle.samples} received)`,
      target: "p50 < 250 ms",
      outcome: judge(idle.p50 < 250, idle.problems),
    });

    // Loaded: 100 streams (the idle one + 99), ingestion of 10-event batches every 20 ms. Each
    // measured stream's first receipt of each event sent in the phase counts, once.
    const loaded: number[] = [];
    // The phase's events are those numbered from here on (a stream can receive one before its
    // ingestion request has answered).
    let firstInPhase = Infinity;
    let measuring = false;
    const recorder = () => {
      const seen = new Set<string>();
      return (marker: string, sentAt: number) => {
        const n = Number(marker.slice(marker.lastIndexOf("-") + 1));
        if (!measuring || n < firstInPhase || seen.has(marker)) return;
        seen.add(marker);
        loaded.push(performance.now() - sentAt);
      };
    };
    await openStream(streamUrl, tokens[0]!, controller.signal, recorder());
    for (let i = 2; i < 100; i++) {
      await openStream(streamUrl, tokens[Math.floor(i / 2)]!, controller.signal, recorder());
    }
    await sleep(500);
    const rssBefore = Deno.memoryUsage().rss;
    const cpuBefore = cpuMs();
    const started = performance.now();
    firstInPhase = sends;
    measuring = true;
    let sent = 0;
    while (performance.now() - started < seconds * 1000) {
      await send(10);
      sent += 10;
      await sleep(20);
    }
    await sleep(LOADED_GRACE_MS);
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
      outcome: judge(p99 < 1000, [
        ...(loaded.length >= sent * 99 ? [] : [
          `${sent * 99 - loaded.length} of ${sent * 99} receipts missing ${LOADED_GRACE_MS} ms ` +
          `after the last send`,
        ]),
        ...(sent > 0 ? [] : ["no event sent"]),
      ]),
    });
    rows.push({
      name: "live tail process cost, 100 streams while ingesting (server + clients in-process)",
      figure: `CPU ${fmt(cpuAfter - cpuBefore, 0)} ms over ${fmt(elapsed, 0)} ms (${
        fmt((cpuAfter - cpuBefore) / elapsed * 100, 0)
      }% of a core), RSS ${fmt(rssBefore / 2 ** 20, 0)} → ${fmt(rssAfter / 2 ** 20, 0)} MiB`,
      target: "none",
      outcome: report(notFinite({ cpu: cpuAfter - cpuBefore, rss: rssAfter })),
    });
  } finally {
    controller.abort();
    await liveTails.close();
    await wakeup.close();
    await service.close();
  }
  return rows;
}
