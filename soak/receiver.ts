// The push destination's receiver: a real HTTP server on 127.0.0.1 that verifies each delivery's
// Standard Webhooks signature (as docs/webhooks.md tells receivers to) and records it.
import { Webhook } from "standardwebhooks";

export interface Delivery {
  webhookId: string;
  /** The feed envelope ids of the batch, in body order. */
  eventIds: string[];
  at: number;
}

export interface DestinationReceiver {
  url: string;
  deliveries: Delivery[];
  /** Requests whose signature or timestamp did not verify (answered 401). */
  badSignatures: number;
  /** Requests that were not a delivery body (answered 400). */
  malformed: number;
  /** Set once the destination exists: requests before it are refused. */
  setSecret(secret: string): void;
  close(): Promise<void>;
}

export function startReceiver(): DestinationReceiver {
  const controller = new AbortController();
  let webhook: Webhook | null = null;
  const receiver: DestinationReceiver = {
    url: "",
    deliveries: [],
    badSignatures: 0,
    malformed: 0,
    setSecret(secret) {
      webhook = new Webhook(secret);
    },
    async close() {
      controller.abort();
      await server.finished;
    },
  };
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: controller.signal,
    onListen() {},
  }, async (request) => {
    const body = await request.text();
    const headers = Object.fromEntries(request.headers);
    try {
      if (!webhook) throw new Error("no secret yet");
      webhook.verify(body, headers); // signature, and the timestamp within 5 minutes
    } catch {
      receiver.badSignatures++;
      return new Response("bad signature", { status: 401 });
    }
    let ids: string[];
    try {
      const parsed = JSON.parse(body) as { events: { id: string }[] };
      ids = parsed.events.map((e) => e.id);
    } catch {
      receiver.malformed++;
      return new Response("malformed", { status: 400 });
    }
    receiver.deliveries.push({ webhookId: headers["webhook-id"]!, eventIds: ids, at: Date.now() });
    return new Response(null, { status: 204 });
  });
  receiver.url = `http://127.0.0.1:${server.addr.port}`;
  return receiver;
}
