// A real webhook receiver on 127.0.0.1: records every request, answers as the test decides.
import type { Clock } from "../../infra/clock.ts";
import type { DeliveryOptions } from "../../services/destinations/delivery.ts";
import { DeliveryWorker } from "../../services/destinations/delivery.ts";
import assert from "node:assert/strict";
import { silentLogger } from "./clock.ts";
import { capture } from "./feed.ts";
import { adminHeaders, call, createProject, CURSOR_SECRET, type TestServer } from "./server.ts";

export interface Received {
  headers: Record<string, string>;
  body: string;
  /** Date.now() when the request arrived. */
  at: number;
  /** What the receiver answered (0: it dropped the connection or hung). */
  answered: number;
}

export type Answer = (req: Received, n: number) => Response | "drop" | "hang" | Promise<Response>;

export interface Receiver {
  url: string;
  received: Received[];
  answer: Answer;
  close(): Promise<void>;
}

/** The error a "drop" answer ends its response with, so that Deno resets the connection. */
class DroppedConnection extends Error {
  constructor() {
    super("dropped on purpose by the test receiver");
  }
}

export function startReceiver(
  answer: Answer = () => new Response(null, { status: 204 }),
): Receiver {
  const controller = new AbortController();
  const received: Received[] = [];
  const hanging = new Set<(r: Response) => void>();
  const receiver: Receiver = {
    url: "",
    received,
    answer,
    async close() {
      for (const release of hanging) release(new Response(null, { status: 503 }));
      controller.abort();
      await server.finished;
    },
  };
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: controller.signal,
    onListen() {},
    // A "drop" answer errors its body on purpose, and Deno reports that error here (by default
    // with a stack trace that reads like a failure). Any other error is shown as before.
    onError(error) {
      // deno-lint-ignore no-console
      if (!(error instanceof DroppedConnection)) console.error(error);
      return new Response(null, { status: 500 });
    },
  }, async (request) => {
    const headers: Record<string, string> = {};
    request.headers.forEach((v, k) => (headers[k] = v));
    const record: Received = { headers, body: await request.text(), at: Date.now(), answered: 0 };
    received.push(record);
    const a = await receiver.answer(record, received.length);
    if (a === "drop") {
      // Dropping the connection: an aborted response body makes Deno reset it.
      return new Response(
        new ReadableStream({ start: (c) => c.error(new DroppedConnection()) }),
        { status: 200 },
      );
    }
    if (a === "hang") {
      return await new Promise<Response>((resolve) => hanging.add(resolve));
    }
    record.answered = a.status;
    return a;
  });
  receiver.url = `http://127.0.0.1:${server.addr.port}`;
  return receiver;
}

/** A deliverer over a test server's database and clock, with the test's timings. */
export function deliveryWorker(
  srv: { sql: TestServer["sql"]; clock: Clock },
  options: DeliveryOptions & { allowPrivate?: boolean; records?: TestServer["sql"] } = {},
): DeliveryWorker {
  return new DeliveryWorker({
    sql: srv.sql,
    records: options.records,
    clock: srv.clock,
    logger: silentLogger,
    config: { destinationsAllowPrivate: options.allowPrivate ?? true },
    cursorSecret: CURSOR_SECRET,
  }, { pollMs: 50, timeoutMs: 2_000, ...options });
}

/** The events of a received delivery body. */
export function eventsOf(r: Received): { id: string; type: string }[] {
  return JSON.parse(r.body).events;
}

/**
 * A new project with a destination on `url`, then `captures` captures of 150 events each (type
 * `type`) after it, received at the clock's now: the events' ids in the feed's order.
 */
export async function destinationWithEvents(
  srv: { url: string; sql: TestServer["sql"] },
  clock: Clock,
  url: string,
  captures: number,
  type = "open",
): Promise<{ projectId: number; destinationId: number; ids: string[] }> {
  const p = await createProject(srv.url);
  const res = await call(srv.url, "POST", `/api/v1/projects/${p.productionId}/destinations`, {
    headers: adminHeaders,
    body: { url },
  });
  assert.equal(res.status, 201, res.text);
  const ids: string[] = [];
  for (let i = 0; i < captures; i++) {
    ids.push(...await capture(srv.sql, p.productionId, p.hashid, Array(150).fill(type), clock));
  }
  return { projectId: p.productionId, destinationId: res.body.destination.id, ids };
}
