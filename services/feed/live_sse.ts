// A live stream (services/feed/live_tail.ts) written as Server-Sent Events: the one loop behind the
// REST route (rest/live.ts) and the dashboard's live page (dashboard/live_routes.tsx). The
// transport opens the stream (its checks answer before anything is sent) and hands this loop
// its SSE writer; the writer is described by shape, so services import no HTTP framework.
import type { LiveStream } from "./live_tail.ts";

/** A comment line this often keeps proxies from closing an idle stream. */
export const KEEPALIVE_MS = 15_000;
/** How long a stream that ended is given to flush before its response is cut. */
const END_GRACE_MS = 1_000;

/** What the loop needs of an SSE response (hono's SSEStreamingApi has this shape). */
export interface SseWriter {
  write(text: string): Promise<unknown>;
  writeSSE(message: { id: string; event: string; data: string }): Promise<void>;
  onAbort(listener: () => void): void;
  abort(): void;
  readonly aborted: boolean;
}

/**
 * Sends each event of `stream` as a `feed_event` with its cursor as the id (what a reconnecting
 * EventSource sends back as Last-Event-ID), until the stream ends or the client leaves; either
 * way the stream is closed when this returns.
 */
export async function writeLiveEvents(stream: LiveStream, sse: SseWriter): Promise<void> {
  // The client left (Deno cancels the body). Not request.signal: Deno aborts it as soon as the
  // response is returned.
  sse.onAbort(() => stream.close());
  // A stream that ends while its client is not reading would wait on a full buffer: the
  // response is cut once it has ended.
  stream.signal.addEventListener("abort", () => {
    setTimeout(() => sse.abort(), END_GRACE_MS);
  }, { once: true });
  const keepalive = setInterval(() => void sse.write(": keep-alive\n\n"), KEEPALIVE_MS);
  try {
    await sse.write(": live\n\n");
    for await (const page of stream.pages) {
      for (const event of page) {
        await sse.writeSSE({ id: event.cursor, event: "feed_event", data: event.body });
      }
      if (sse.aborted) break;
    }
  } finally {
    clearInterval(keepalive);
    stream.close();
  }
}
