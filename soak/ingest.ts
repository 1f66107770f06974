// Concurrent writers: batches of events with client ids, each batch sent until an instance
// acknowledges it. A batch whose answer was lost (the instance was killed mid-request) is sent
// again, byte for byte, to another instance: by docs/ingestion.md the ids make that safe.
import { ConnectionFailed } from "./cluster.ts";
import { retryAfterMs, sleep, type SoakContext } from "./context.ts";

export interface IngestOptions {
  writers: number;
  /** Events per batch: uniform from 1 to this. */
  maxBatch: number;
  /** Pause between a writer's acknowledged batch and its next one. */
  pauseMs: number;
}

export interface IngestLog {
  /** Client ids of events in batches an instance answered 2xx. */
  acked: Set<string>;
  /**
   * Client ids of batches never acknowledged (the run ended while they were being retried):
   * stored once or not at all.
   */
  unclear: Set<string>;
  batches: number;
  /** Sums of the 202 answers' `accepted` and `duplicates`. */
  accepted: number;
  duplicates: number;
  /** Batches sent again after an unclear failure (connection error, 503, 5xx). */
  resent: number;
  /** Batches refused with a 4xx: the harness sent something invalid. */
  refused: { status: number; body: string }[];
  /** link path → acknowledged events attributed to it, by type (for the counters check). */
  byLink: Map<string, Map<string, number>>;
}

export function newIngestLog(): IngestLog {
  return {
    acked: new Set(),
    unclear: new Set(),
    batches: 0,
    accepted: 0,
    duplicates: 0,
    resent: 0,
    refused: [],
    byLink: new Map(),
  };
}

const TYPES = ["open", "install", "custom", "session"] as const;

interface SoakEvent {
  id: string;
  type: string;
  occurred_at: string;
  link_path?: string;
  name?: string;
  time_spent?: number;
  attribution: { soak_id: string };
}

/**
 * Runs `options.writers` writers until `stop` aborts; each finishes the batch in hand (until
 * `giveUpAt`, after which what is still unacknowledged stays unclear).
 */
export async function runWriters(
  ctx: SoakContext,
  options: IngestOptions,
  stop: AbortSignal,
  giveUpAt: () => number,
  log: IngestLog,
): Promise<void> {
  await Promise.all(
    Array.from({ length: options.writers }, (_, w) => writer(ctx, options, w, stop, giveUpAt, log)),
  );
}

async function writer(
  ctx: SoakContext,
  options: IngestOptions,
  w: number,
  stop: AbortSignal,
  giveUpAt: () => number,
  log: IngestLog,
): Promise<void> {
  let n = 0;
  while (!stop.aborted) {
    const size = 1 + Math.floor(Math.random() * options.maxBatch);
    const events = Array.from({ length: size }, () => soakEvent(ctx, `${ctx.runTag}-w${w}-${n++}`));
    await sendUntilAcked(ctx, events, giveUpAt, log);
    await sleep(options.pauseMs, stop);
  }
}

function soakEvent(ctx: SoakContext, id: string): SoakEvent {
  const type = TYPES[Math.floor(Math.random() * TYPES.length)]!;
  const event: SoakEvent = {
    id,
    type,
    occurred_at: new Date().toISOString(),
    // The client id rides along in the envelope, so the feed read at the end can be matched
    // with what was acknowledged (the envelope's own id is the server's evt_…).
    attribution: { soak_id: id },
  };
  if (Math.random() < 0.6) {
    event.link_path = ctx.links[Math.floor(Math.random() * ctx.links.length)];
  }
  if (type === "custom") event.name = "soak";
  if (type === "session") event.time_spent = 1 + Math.floor(Math.random() * 60);
  return event;
}

async function sendUntilAcked(
  ctx: SoakContext,
  events: SoakEvent[],
  giveUpAt: () => number,
  log: IngestLog,
): Promise<void> {
  const body = JSON.stringify({ events });
  log.batches++;
  let attempt = 0;
  for (;;) {
    if (attempt > 0) log.resent++;
    attempt++;
    let wait = Math.min(2000, 100 * 2 ** Math.min(attempt, 5));
    try {
      const answer = await ctx.cluster.request("ingest", "/api/v1/sdk/events", {
        method: "POST",
        headers: {
          "PROJECT-KEY": ctx.projectKey,
          ENVIRONMENT: "production",
          "Content-Type": "application/json",
        },
        body,
      });
      if (answer.status === 202) {
        const result = JSON.parse(answer.text) as { accepted: number; duplicates: number };
        log.accepted += result.accepted;
        log.duplicates += result.duplicates;
        for (const e of events) {
          log.acked.add(e.id);
          log.unclear.delete(e.id);
          if (e.link_path) {
            const types = log.byLink.get(e.link_path) ?? new Map<string, number>();
            types.set(e.type, (types.get(e.type) ?? 0) + 1);
            log.byLink.set(e.link_path, types);
          }
        }
        return;
      }
      if (answer.status >= 400 && answer.status < 500) {
        // All or nothing: a refused batch stored nothing.
        log.refused.push({ status: answer.status, body: answer.text.slice(0, 300) });
        return;
      }
      // 503 (the database went away) or another 5xx: stored or not, unknown: send again.
      if (answer.status === 503) wait = Math.max(wait, retryAfterMs(answer.headers));
    } catch (err) {
      if (!(err instanceof ConnectionFailed)) throw err;
    }
    for (const e of events) log.unclear.add(e.id);
    if (Date.now() >= giveUpAt()) return;
    await sleep(wait);
  }
}
