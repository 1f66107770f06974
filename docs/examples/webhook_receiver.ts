// The receiver of docs/webhooks.md: verifies the Standard Webhooks signature, deduplicates by
// event id and prints each event it takes. Run (on PORT, by default 8787):
//   WEBHOOK_SECRET=whsec_... deno run --allow-net --allow-env docs/examples/webhook_receiver.ts
import { Webhook } from "standardwebhooks"; // outside this repository: "npm:standardwebhooks@1.1.1"

const webhook = new Webhook(Deno.env.get("WEBHOOK_SECRET")!); // whsec_…
// Remember ids already processed; use a table with a unique key in production.
const seen = new Set<string>();

export async function handle(request: Request): Promise<Response> {
  const body = await request.text();
  const headers = Object.fromEntries(request.headers);
  try {
    webhook.verify(body, headers); // signature and timestamp (5 min tolerance)
  } catch {
    log(`refused ${headers["webhook-id"] ?? "a request"}: bad signature`);
    return new Response("bad signature", { status: 401 });
  }
  const { events } = JSON.parse(body) as { events: { id: string; type: string }[] };
  log(`received ${headers["webhook-id"]}: ${events.length} events`); // "Send a test" sends none
  for (const event of events) {
    if (seen.has(event.id)) { // delivery is at least once
      log(`already processed ${event.id}`);
      continue;
    }
    seen.add(event.id);
    await process(event);
  }
  return new Response(null, { status: 204 });
}

// Replace with your own handling; `processed` lets the test see what was handled.
export const processed: string[] = [];
function process(event: { id: string; type: string }) {
  processed.push(event.id);
  log(JSON.stringify(event));
  return Promise.resolve();
}

// Run as a program it prints what it receives, one line each; imported, it prints nothing.
function log(line: string) {
  // deno-lint-ignore no-console
  if (import.meta.main) console.log(line);
}

if (import.meta.main) Deno.serve({ port: Number(Deno.env.get("PORT") ?? 8787) }, handle);
