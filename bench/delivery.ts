// Push delivery: how fast a destination receives while ingestion runs (as a ratio to the
// ingestion rate with capture), and ingestion-to-receipt latency at idle. The service, its
// deliverer (woken by NOTIFY) and the receiver share this process, as on one instance.
import { systemClock } from "../services/clock.ts";
import { DeliveryWorker } from "../services/delivery.ts";
import { startFeedWakeup } from "../services/feed_wakeup.ts";
import { createLogger } from "../services/log.ts";
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
import type { Row } from "./sdk.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function deliveryBenchmarks(db: BenchDatabase, seconds: number): Promise<Row[]> {
  let delivered = 0;
  let lastReceipt = 0;
  const receiver = serve(async (req) => {
    const body = await req.text();
    delivered += body.split('"schema_version":1,"id":').length - 1;
    lastReceipt = performance.now();
    return new Response(null, { status: 204 });
  });
  const service = serveService(db.sql, { DESTINATIONS_ALLOW_PRIVATE: "true" });
  const logger = createLogger("warn", () => {});
  const wakeup = await startFeedWakeup(db.sql, logger);
  const worker = new DeliveryWorker({
    sql: db.sql,
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
    });
    const ingestSeconds = (performance.now() - started) / 1000;
    const [{ n }] = await db.sql<[{ n: number }]>`
      select count(*)::int as n from feed_events where environment_id = ${projectId}`;
    const deliveredDuringIngest = delivered;
    const deadline = performance.now() + 120_000;
    while (delivered < n && performance.now() < deadline) await sleep(20);
    const deliverySeconds = (lastReceipt - started) / 1000;
    const ingestRate = n / ingestSeconds;
    const deliveryRate = delivered / deliverySeconds;
    rows.push({
      name: "delivery while ingesting (100-event batches, -c4)",
      figure:
        `ingested ${fmt(ingestRate, 0)} events/s, delivered ${fmt(deliveryRate, 0)} events/s (${
          fmt(deliveryRate / ingestRate, 2)
        }×; ${deliveredDuringIngest}/${n} ` +
        `during ingestion, all ${delivered >= n ? "delivered" : "NOT delivered"} ${
          fmt(Math.max(0, deliverySeconds - ingestSeconds), 2)
        } s after it ended; wrk errors ${ingest.errors})`,
      target: "≥ 1.0× the ingestion rate",
      pass: delivered >= n && deliveryRate / ingestRate >= 1.0,
    });

    // Idle latency: one event at a time, the time from sending it to its receipt.
    const latencies: number[] = [];
    for (let i = 0; i < 60; i++) {
      await sleep(100);
      const before = delivered;
      const t0 = performance.now();
      const res = await fetch(`${service.url}/api/v1/sdk/events`, {
        method: "POST",
        headers: {
          "PROJECT-KEY": key,
          ENVIRONMENT: "production",
          "Content-Type": "application/json",
        },
        body: JSON.stringify({ events: [{ type: "open", occurred_at: new Date().toISOString() }] }),
      });
      await res.body?.cancel();
      while (delivered === before && performance.now() - t0 < 5_000) await sleep(1);
      latencies.push(lastReceipt - t0);
    }
    latencies.sort((a, b) => a - b);
    const p50 = latencies[Math.floor(latencies.length * 0.5)]!;
    const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]!;
    rows.push({
      name: "delivery latency at idle (ingestion to receipt, 60 events)",
      figure: `p50 ${fmt(p50)} ms, p99 ${fmt(p99)} ms`,
      target: "p50 < 250 ms, p99 < 1 s",
      pass: p50 < 250 && p99 < 1000,
    });
  } finally {
    await worker.stop();
    await wakeup.close();
    await service.close();
    await receiver.close();
  }
  return rows;
}
