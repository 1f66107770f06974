// The deliverer keeps a destination's receiver connection between batches (keep-alive), and a
// receiver that closes it still gets every batch, in order. The receiver is a real node:http
// server on 127.0.0.1 that counts the connections it accepts.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { ManualClock } from "./helpers/clock.ts";
import { deliveryWorker, destinationWithEvents } from "./helpers/receiver.ts";
import { startTestServer } from "./helpers/server.ts";

const clock = new ManualClock(new Date());
const srv = await startTestServer({ clock, config: { DESTINATIONS_ALLOW_PRIVATE: "true" } });

interface Delivery {
  ids: string[];
  webhookId: string;
  /** The connection it came on, by order of acceptance (1-based). */
  connection: number;
  /** Its place among the requests of that connection (1-based). */
  onConnection: number;
}

/**
 * `close(n, d)`: what the receiver does with request n (1-based, all connections) after reading
 * it: "answer" (204, connection kept), "answer-close" (204, then the connection is destroyed,
 * without a Connection: close header), "drop" (destroyed, no answer) or "hang" (no answer, the
 * connection left open).
 */
async function countingReceiver(
  close: (n: number, d: Delivery) => "answer" | "answer-close" | "drop" | "hang" = () => "answer",
) {
  const deliveries: Delivery[] = [];
  const sockets = new Set<Socket>();
  const connectionOf = new WeakMap<Socket, { id: number; requests: number }>();
  let connections = 0;
  const server = http.createServer((req, res) => {
    const conn = connectionOf.get(req.socket)!;
    conn.requests++;
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      const d: Delivery = {
        ids: (JSON.parse(body).events as { id: string }[]).map((e) => e.id),
        webhookId: String(req.headers["webhook-id"]),
        connection: conn.id,
        onConnection: conn.requests,
      };
      deliveries.push(d);
      const what = close(deliveries.length, d);
      if (what === "drop") return void req.socket.destroy();
      if (what === "hang") return;
      res.writeHead(204);
      res.end(() => {
        if (what === "answer-close") req.socket.destroy();
      });
    });
  });
  server.on("connection", (socket: Socket) => {
    connectionOf.set(socket, { id: ++connections, requests: 0 });
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    deliveries,
    get connections() {
      return connections;
    },
    /** Connections still open on the receiver's side. */
    get open() {
      return sockets.size;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A destination on `url`, and 450 events captured after it: five batches (100 × 4, then 50). */
async function fiveBatches(url: string): Promise<string[]> {
  return (await destinationWithEvents(srv, clock, url, 3, "install")).ids;
}

Deno.test("a destination's consecutive batches go over one kept connection", async () => {
  const r = await countingReceiver();
  try {
    const ids = await fiveBatches(r.url);
    await deliveryWorker(srv).drain();
    assert.deepEqual(r.deliveries.map((d) => d.ids.length), [100, 100, 100, 100, 50]);
    assert.deepEqual(r.deliveries.flatMap((d) => d.ids), ids);
    assert.equal(r.connections, 1);
    assert.deepEqual(r.deliveries.map((d) => d.onConnection), [1, 2, 3, 4, 5]);
    // drain() closes the connections it kept: nothing stays open.
    for (let i = 0; i < 100 && r.open > 0; i++) await new Promise((ok) => setTimeout(ok, 10));
    assert.equal(r.open, 0);
  } finally {
    await r.close();
  }
});

Deno.test("a receiver that closes the connection after each answer gets every batch, in order", async () => {
  const r = await countingReceiver(() => "answer-close");
  try {
    const ids = await fiveBatches(r.url);
    await deliveryWorker(srv).drain();
    // Each batch exactly once: a close after the answer loses nothing.
    assert.deepEqual(r.deliveries.flatMap((d) => d.ids), ids);
    assert.equal(new Set(r.deliveries.map((d) => d.webhookId)).size, 5);
    assert.equal(r.connections, 5);
  } finally {
    await r.close();
  }
});

Deno.test("a receiver that closes a kept connection without answering gets that batch again, then the rest in order", async () => {
  // Every batch that comes on a kept connection (the second on it) is read and dropped: the
  // deliverer sends it again on a new connection, which the receiver answers.
  const r = await countingReceiver((_n, d) => d.onConnection > 1 ? "drop" : "answer");
  try {
    const ids = await fiveBatches(r.url);
    await deliveryWorker(srv).drain();
    const answered = r.deliveries.filter((d) => d.onConnection === 1);
    assert.deepEqual(answered.flatMap((d) => d.ids), ids);
    // At least once: a dropped batch came again, the same webhook-id and events, next.
    for (const [i, d] of r.deliveries.entries()) {
      if (d.onConnection === 1) continue;
      assert.equal(r.deliveries[i + 1]?.webhookId, d.webhookId);
      assert.deepEqual(r.deliveries[i + 1]?.ids, d.ids);
    }
    assert.ok(r.deliveries.length > 5);
  } finally {
    await r.close();
  }
});

Deno.test("a batch given up after no answer on a kept connection is not sent again behind the deliverer's back", async () => {
  const r = await countingReceiver((n) => n === 2 ? "hang" : "answer");
  try {
    const ids = await fiveBatches(r.url);
    const worker = deliveryWorker(srv, { timeoutMs: 300, random: () => 0.5 });
    await worker.drain(); // the first batch, then the second unanswered: a retry is due
    assert.equal(r.deliveries.length, 2);
    clock.advance(1_000);
    await worker.drain();
    // The second batch twice (the attempt given up, then its retry), never a third time.
    const sent = r.deliveries.map((d) => d.webhookId);
    assert.deepEqual(sent, [sent[0], sent[1], sent[1], sent[3], sent[4], sent[5]]);
    assert.equal(new Set(sent).size, 5);
    assert.deepEqual(
      r.deliveries.filter((_, i) => i !== 1).flatMap((d) => d.ids),
      ids,
    );
  } finally {
    await r.close();
  }
});

Deno.test("teardown", async () => {
  await srv.close();
});
