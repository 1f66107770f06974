// The receiver example of docs/webhooks.md, served for real and fed by the real deliverer: a
// destination points at it, events are ingested over the SDK API, and the delivery worker signs
// and posts them.
import assert from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import { ManualClock } from "./helpers/clock.ts";
import { deliveryWorker } from "./helpers/receiver.ts";
import { ingest } from "./helpers/sdk.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

// Signatures carry the deliverer's time, which the example checks against its own (5 minutes):
// the app's clock starts at the real time and moves only by seconds here.
const clock = new ManualClock(new Date());
const srv = await startTestServer({ clock, config: { DESTINATIONS_ALLOW_PRIVATE: "true" } });
Deno.test.afterAll(() => srv.close());

interface Delivery {
  headers: Record<string, string>;
  body: string;
  /** What the example answered. */
  status: number;
}

async function createDestination(projectId: number, url: string) {
  const res = await call(srv.url, "POST", `/api/v1/projects/${projectId}/destinations`, {
    headers: adminHeaders,
    body: { url },
  });
  assert.equal(res.status, 201, res.text);
  return res.body.destination as { id: number; secret: string };
}

async function destinationStatus(projectId: number, id: number) {
  const res = await call(srv.url, "GET", `/api/v1/projects/${projectId}/destinations`, {
    headers: adminHeaders,
  });
  return res.body.destinations.find((d: { id: number }) => d.id === id);
}

async function feedIds(environmentId: number): Promise<string[]> {
  const rows = await srv.sql<{ id: string }[]>`
    select body::json->>'id' as id from feed_events
    where environment_id = ${environmentId} order by xid, seq
  `;
  return rows.map((r) => r.id);
}

Deno.test("docs/examples/webhook_receiver.ts, fed by the deliverer: verifies signatures, deduplicates by event id", async () => {
  // The example reads WEBHOOK_SECRET as it loads, and the secret is the destination's, made
  // once the receiver has its address: the example is loaded then, behind this listener.
  let handle: ((request: Request) => Promise<Response>) | null = null;
  const deliveries: Delivery[] = [];
  let loseNextAnswer = false;
  const controller = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: controller.signal, onListen() {} },
    async (request) => {
      const body = await request.text();
      const headers = Object.fromEntries(request.headers);
      const res = await handle!(new Request(request.url, { method: "POST", headers, body }));
      deliveries.push({ headers, body, status: res.status });
      if (!loseNextAnswer) return res;
      // The example processed the batch, but its answer never reaches the deliverer.
      loseNextAnswer = false;
      return new Response(null, { status: 503 });
    },
  );
  const url = `http://127.0.0.1:${server.addr.port}/hooks`;
  // A fixed jitter: a failed attempt is retried 500 ms later by the app's clock, never at once.
  const worker = deliveryWorker(srv, { random: () => 0.5 });
  try {
    const p = await createProject(srv.url);
    const destination = await createDestination(p.productionId, url);
    Deno.env.set("WEBHOOK_SECRET", destination.secret);
    const example = await import("../docs/examples/webhook_receiver.ts");
    handle = example.handle;

    const at = clock.now().toISOString();
    await ingest(srv.url, p.key, "production", [
      { type: "install", occurred_at: at },
      { type: "open", occurred_at: at },
    ]);
    const ids = await feedIds(p.productionId);
    assert.equal(ids.length, 2);

    // First attempt: processed, answer lost. The deliverer retries the same batch after its
    // backoff, which the example accepts without processing anything twice.
    loseNextAnswer = true;
    await worker.drain();
    assert.equal(deliveries.length, 1);
    assert.equal(deliveries[0]!.status, 204);
    assert.deepEqual(example.processed, ids);
    clock.advance(1_000);
    await worker.drain();
    assert.equal(deliveries.length, 2);
    const [first, retry] = deliveries as [Delivery, Delivery];
    assert.equal(retry.headers["webhook-id"], first.headers["webhook-id"]);
    assert.equal(retry.body, first.body);
    assert.equal(retry.status, 204);
    assert.deepEqual(example.processed, ids, "nothing processed twice");
    const status = await destinationStatus(p.productionId, destination.id);
    assert.equal(status.pending, 0);
    assert.equal(status.last_error, null);

    // A delivered batch whose body was altered on the way is refused, unprocessed.
    const altered = first.body.replace(ids[1]!, "evt_forged");
    assert.notEqual(altered, first.body);
    const forged = await fetch(url, { method: "POST", headers: first.headers, body: altered });
    await forged.body?.cancel();
    assert.equal(forged.status, 401);
    assert.equal(deliveries.length, 3);
    assert.deepEqual(example.processed, ids);

    // Another project's destination at the same address signs with its own secret: the
    // example refuses its batch, and processes none of its events.
    const other = await createProject(srv.url, { name: "Other" });
    const stranger = await createDestination(other.productionId, url);
    await ingest(srv.url, other.key, "production", [{ type: "install", occurred_at: at }]);
    const strangerIds = await feedIds(other.productionId);
    assert.equal(strangerIds.length, 1);
    await worker.drain();
    assert.equal(deliveries.length, 4);
    assert.ok(deliveries[3]!.body.includes(strangerIds[0]!));
    assert.equal(deliveries[3]!.status, 401);
    assert.deepEqual(example.processed, ids);
    const refused = await destinationStatus(other.productionId, stranger.id);
    assert.equal(refused.last_error, "HTTP 401");
    assert.equal(refused.pending, 1);
  } finally {
    await worker.stop();
    controller.abort();
    await server.finished;
  }
});

Deno.test("docs/webhooks.md shows docs/examples/webhook_receiver.ts as it is", async () => {
  const file = await Deno.readTextFile("docs/examples/webhook_receiver.ts");
  const page = await Deno.readTextFile("docs/webhooks.md");
  const shown = page.match(/```ts\n(import \{ Webhook \}[\s\S]*?)```/)?.[1];
  assert.equal(shown, file.slice(file.indexOf("import { Webhook }")));
});

/** The lines of a stream, one per read; a line that does not come within 10 s fails the test. */
function lines(stream: ReadableStream<Uint8Array<ArrayBuffer>>) {
  let buffer = "";
  const reader = stream.pipeThrough(new TextDecoderStream()).pipeThrough(
    new TransformStream<string, string>({
      transform(chunk, out) {
        const parts = (buffer + chunk).split("\n");
        buffer = parts.pop()!;
        for (const line of parts) out.enqueue(line);
      },
    }),
  ).getReader();
  return {
    async next(): Promise<string> {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("no line within 10 s")), 10_000);
      });
      try {
        const { value, done } = await Promise.race([reader.read(), timeout]);
        if (done) throw new Error("the stream ended");
        return value;
      } finally {
        clearTimeout(timer);
      }
    },
    cancel: () => reader.cancel(),
  };
}

Deno.test("docs/examples/webhook_receiver.ts run as a program prints each request, event, repeat and refusal", async () => {
  const secret = "whsec_" + btoa("a secret of the receiver's own, 32 bytes");
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-env", "docs/examples/webhook_receiver.ts"],
    env: { WEBHOOK_SECRET: secret, PORT: "0", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = lines(child.stdout);
  const err = lines(child.stderr);
  try {
    // Deno.serve says where it listens, on stderr.
    const port = (await err.next()).match(/Listening on http:\/\/[^:]+:(\d+)\//)?.[1];
    assert.ok(port);
    const post = async (id: string, events: object[], sign = true) => {
      const body = JSON.stringify({ events });
      const at = new Date();
      const headers: Record<string, string> = {
        "webhook-id": id,
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": sign ? new Webhook(secret).sign(id, at, body) : "v1,forged",
      };
      const res = await fetch(`http://127.0.0.1:${port}/hooks`, { method: "POST", headers, body });
      await res.body?.cancel();
      return res.status;
    };
    const install = { id: "evt_1", type: "install", occurred_at: "2026-06-15T12:00:00.000Z" };
    assert.equal(await post("msg_1", [install]), 204);
    assert.equal(await out.next(), "received msg_1: 1 events");
    assert.deepEqual(JSON.parse(await out.next()), install);
    assert.equal(await post("msg_1", [install]), 204);
    assert.equal(await out.next(), "received msg_1: 1 events");
    assert.equal(await out.next(), "already processed evt_1");
    assert.equal(await post("msg_2", [install], false), 401);
    assert.equal(await out.next(), "refused msg_2: bad signature");
  } finally {
    child.kill();
    await child.status;
    await out.cancel();
    await err.cancel();
  }
});
