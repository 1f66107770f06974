// The receiver example of docs/webhooks.md, served for real and fed by the real deliverer.
import assert from "node:assert/strict";
import { newWebhookSecret } from "../services/destination_secret.ts";
import { webhookHeaders } from "../services/webhook_sign.ts";

const secret = newWebhookSecret();
Deno.env.set("WEBHOOK_SECRET", secret);
const { handle, processed } = await import("../docs/examples/webhook_receiver.ts");

Deno.test("docs/examples/webhook_receiver.ts verifies signatures and deduplicates by event id", async () => {
  const controller = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: controller.signal, onListen() {} },
    handle,
  );
  const url = `http://127.0.0.1:${server.addr.port}/`;
  const post = (body: string, headers: Record<string, string>) =>
    fetch(url, { method: "POST", headers, body }).then(async (
      r,
    ) => (await r.body?.cancel(), r.status));
  try {
    const body = JSON.stringify({
      schema_version: 1,
      events: [{ id: "evt_1", type: "install" }, { id: "evt_2", type: "open" }],
    });
    const headers = webhookHeaders([secret], "msg_1", new Date(), body);
    assert.equal(await post(body, headers), 204);
    // A retry of the same batch: accepted, nothing processed twice.
    assert.equal(await post(body, webhookHeaders([secret], "msg_1", new Date(), body)), 204);
    assert.deepEqual(processed, ["evt_1", "evt_2"]);
    // A forged or altered body is refused.
    assert.equal(await post(body.replace("evt_2", "evt_3"), headers), 401);
    const other = webhookHeaders([newWebhookSecret()], "msg_2", new Date(), body);
    assert.equal(await post(body, other), 401);
    assert.deepEqual(processed, ["evt_1", "evt_2"]);
  } finally {
    controller.abort();
    await server.finished;
  }
});
