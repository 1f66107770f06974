// Push delivery: how fast a destination receives while ingestion runs (as a ratio to the
// ingestion rate with capture), and ingestion-to-receipt latency at idle. The service, its
// deliverer (woken by NOTIFY) and the receiver share this process, as on one instance.
import { connect } from "../db/connect.ts";
import { systemClock } from "../infra/clock.ts";
import { DeliveryWorker } from "../services/destinations/delivery.ts";
import { startFeedWakeup } from "../services/feed/wakeup.ts";
import { createLogger } from "../infra/log.ts";
import {
  ADMIN_TOKEN,
  type BenchDatabase,
  CURSOR_SECRET,
  fmt,
  postJson,
  serve,
  serveService,
  wrk,
} from "./lib.ts";
import { DistinctReceipts, ReceiptLatencies, waitForReceipt } from "./receipts.ts";
import { judge, notFinite, type Row } from "./rows.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CATCH_UP_MS = 120_000;
const RECEIPT_WAIT_MS = 5_000;

export async function deliveryBenchmarks(db: BenchDatabase, seconds: number): Promise<Row[]> {
  // Delivery is at least once: a batch sent again (after a timeout) is counted once, by id.
  const received = new DistinctReceipts();
  /** The idle events' receipt times, by the marker each carries in user.id. */
  const marked = new Map<string, number>();
  let badBatches = 0;
  const receiver = serve(async (req) => {
    const now = performance.now();
    try {
      const batch = await req.json() as { events: { id: string; user?: { id?: string } }[] };
      for (const event of batch.events) {
        if (!received.add(event.id, now)) continue;
        const marker = event.user?.id;
        if (marker?.startsWith("idle-") && !marked.has(marker)) marked.set(marker, now);
      }
    } catch {
      badBatches++;
    }
    return new Response(null, { status: 204 });
  });
  const service = serveService(db.sql, { DESTINATIONS_ALLOW_PRIVATE: "true" });
  const logger = createLogger("warn", () => {});
  const wakeup = await startFeedWakeup(db.sql, logger);
  // As main.ts: the batch records on a pool that does not wait for the disk (EXP_SYNC=1: on
  // the main pool, to compare).
  const records = Deno.env.get("EXP_SYNC") === "1"
    ? undefined
    : connect(db.url, 4, { synchronous_commit: "off" });
  const worker = new DeliveryWorker({
    sql: db.sql,
    records,
    clock: systemClock,
    logger,
    config: { destinationsAllowPrivate: true },
    cursorSecret: CURSOR_SECRET,
  }, { wakeup });
  worker.start();
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" };
  const rows: Row[] = [];
  try {
    const project = await (await fetch(`${service.url}/api/v1/admin/projects`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ name: "Bench", enterprise: true }),
    })).json();
    const projectId = project.project.environments.production.project_id;
    const key = project.project.project_key;
    const created = await fetch(`${service.url}/api/v1/projects/${projectId}/destinations`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ url: receiver.url }),
    });
    await created.body?.cancel();

    // Throughput: 100-event batches at -c4 for `seconds`; delivery measured until caught up.
    const events = Array.from({ length: 100 }, (_, i) => ({
      type: i % 10 === 0 ? "install" : "open",
      occurred_at: new Date().toISOString(),
    }));
    const started = performance.now();
    const ingest = await wrk(`${service.url}/api/v1/sdk/events`, {
      connections: 4,
      seconds,
      headers: { "PROJECT-KEY": key, ENVIRONMENT: "production" },
      lua: postJson(JSON.stringify({ events })),
      expect: { status: 202 },
    });
    const ingestSeconds = (performance.now() - started) / 1000;
    // Ingestion's own window, by the server's clock: from the first event received to the last.
    const [{ n, window_s: ingestWindow }] = await db.sql<[{ n: number; window_s: number }]>`
      select count(*)::int as n,
        extract(epoch from max(received_at) - min(received_at))::float8 as window_s
      from feed_events where environment_id = ${projectId}`;
    const deliveredDuringIngest = received.count;
    const deadline = performance.now() + CATCH_UP_MS;
    while (received.count < n && performance.now() < deadline) await sleep(20);
    const delivered = received.count;
    // Rates over each side's own window (first to last event), so that the constant delay
    // between an event's ingestion and its receipt (measured at idle below) does not count as
    // slowness: a deliverer that keeps up receives over a window as long as ingestion's, shifted
    // by that delay; one that falls behind receives over a longer one.
    const ingestRate = n / ingestWindow;
    const deliveryRate = delivered / ((received.lastNewAt - received.firstNewAt) / 1000);
    // End to end: from the start of ingestion to the last receipt, the final delay included.
    const deliverySeconds = (received.lastNewAt - started) / 1000;
    const endToEnd = (delivered / deliverySeconds) / (n / ingestSeconds);
    rows.push({
      name: "delivery while ingesting (100-event batches, -c4)",
      figure:
        `ingested ${fmt(ingestRate, 0)} events/s, delivered ${fmt(deliveryRate, 0)} events/s (${
          fmt(deliveryRate / ingestRate, 2)
        }×, each over its own first-to-last window; ${
          fmt(endToEnd, 2)
        }× from the start of ingestion to the last receipt; ${deliveredDuringIngest}/${n} ` +
        `during ingestion, all ${delivered >= n ? "delivered" : "NOT delivered"} ${
          fmt(Math.max(0, deliverySeconds - ingestSeconds), 2)
        } s after it ended; ${received.duplicates} sent again; wrk errors ${ingest.errors})`,
      target: "≥ 1.0× the ingestion rate",
      outcome: judge(deliveryRate / ingestRate >= 1.0, [
        ...ingest.problems.map((p) => `ingestion: ${p}`),
        ...(n > 0 ? [] : ["no event was ingested"]),
        ...(delivered >= n ? [] : [
          `${n - delivered} of ${n} events not delivered ${CATCH_UP_MS / 1000} s after ingestion`,
        ]),
        ...(badBatches > 0 ? [`${badBatches} deliveries were not a JSON batch`] : []),
        ...notFinite({ "delivery rate": deliveryRate, "ingestion rate": ingestRate }),
      ]),
    });

    // Idle latency: one event at a time, the time from sending it to its own receipt.
    const latencies = new ReceiptLatencies();
    const ingestionProblems: string[] = [];
    for (let i = 0; i < 60; i++) {
      await sleep(100);
      const marker = `idle-${i}`;
      const t0 = performance.now();
      const res = await fetch(`${service.url}/api/v1/sdk/events`, {
        method: "POST",
        headers: {
          "PROJECT-KEY": key,
          ENVIRONMENT: "production",
          "Content-Type": "application/json",
        },
        body: JSON.stringify({
          events: [{ type: "open", occurred_at: new Date().toISOString(), user: { id: marker } }],
        }),
      });
      await res.body?.cancel();
      if (res.status !== 202) {
        ingestionProblems.push(`event ${i}: ingestion answered ${res.status}`);
        continue;
      }
      latencies.record(t0, await waitForReceipt(() => marked.get(marker), RECEIPT_WAIT_MS));
    }
    const idle = latencies.summary(RECEIPT_WAIT_MS);
    rows.push({
      name: "delivery latency at idle (ingestion to receipt, 60 events)",
      figure: `p50 ${fmt(idle.p50)} ms, p99 ${fmt(idle.p99)} ms (${idle.samples} received)`,
      target: "p50 < 250 ms, p99 < 1 s",
      outcome: judge(idle.p50 < 250 && idle.p99 < 1000, [...ingestionProblems, ...idle.problems]),
    });
  } finally {
    await worker.stop();
    await records?.end({ timeout: 5 });
    await wakeup.close();
    await service.close();
    await receiver.close();
  }
  return rows;
}
