// The live tail's SSE stream (GET …/event_stream/live) as an async iterable of events, each
// with the cursor just after it. Framing is parsed by eventsource-parser; this only adds the
// feed's headers, error bodies and message type.
import { EventSourceParserStream } from "eventsource-parser/stream";
import { FeedError, recoveryFor } from "./errors.ts";
import { normaliseBaseUrl } from "./cursor_store.ts";

export interface LiveMessage {
  /** The cursor just after this event: resume from it (as `after` or `Last-Event-ID`). */
  cursor: string;
  /** The event's envelope, as JSON text. */
  data: string;
}

export interface LiveOpenOptions {
  baseUrl: string;
  projectId: string | number;
  token: string;
  after?: string | null;
  eventTypes?: readonly string[];
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

export function livePath(
  projectId: string | number,
  options: { after?: string | null; eventTypes?: readonly string[] } = {},
): string {
  const q = new URLSearchParams();
  if (options.after) q.append("after", options.after);
  for (const t of options.eventTypes ?? []) q.append("event_types[]", t);
  const qs = q.toString();
  return `/api/v1/projects/${encodeURIComponent(String(projectId))}/event_stream/live` +
    (qs ? `?${qs}` : "");
}

/**
 * Opens the stream; throws FeedError (with the server's status and code) when it is refused.
 * The iterable ends when the server ends the stream (1 h, revocation, shutdown).
 */
export async function openLiveStream(
  options: LiveOpenOptions,
): Promise<AsyncIterable<LiveMessage>> {
  const doFetch = options.fetch ?? fetch;
  const res = await doFetch(
    normaliseBaseUrl(options.baseUrl) + livePath(options.projectId, options),
    {
      headers: { Authorization: `Bearer ${options.token}`, Accept: "text/event-stream" },
      signal: options.signal,
    },
  );
  if (res.status !== 200 || !res.body) {
    const text = await res.text();
    let code: string | undefined;
    let message = text.slice(0, 200);
    try {
      const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
      code = body.error?.code;
      message = body.error?.message ?? message;
    } catch { /* not the contract's body: keep the text */ }
    throw new FeedError(
      "http",
      `the live stream answered ${res.status}${code ? ` ${code}` : ""}`,
      recoveryFor(res.status, code),
      { status: res.status, code, serverMessage: message },
    );
  }
  const messages = res.body.pipeThrough(
    new TextDecoderStream() as TransformStream<Uint8Array, string>,
  ).pipeThrough(
    new EventSourceParserStream(),
  );
  return (async function* () {
    for await (const m of messages) {
      if (m.event !== "feed_event" || !m.id) continue;
      yield { cursor: m.id, data: m.data };
    }
  })();
}
