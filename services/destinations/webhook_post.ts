// One webhook POST to a destination, under the rules a receiver cannot bend: the connection goes
// to an address resolved and checked when it was opened (services/destinations/
// receiver_connections.ts); redirects are answers, never followed; at most 64 KiB of the answer
// is read; the whole exchange is bounded in time. node:http rather than fetch, because fetch
// cannot be told which address to connect to.
import http from "node:http";
import https from "node:https";
import { receiverAgent } from "./receiver_connections.ts";
import { AddressRefused } from "./url.ts";

export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface PostOptions {
  allowPrivate: boolean;
  /** The whole exchange, connection to last byte read. */
  timeoutMs: number;
  /**
   * A keep-alive Agent of receiverAgent (the deliverer's, per destination: see
   * ReceiverConnections). None: a connection of this request's own, closed after it.
   */
  agent?: http.Agent;
}

export interface PostResult {
  /** The receiver's status, or null when there was none (refused address, network, timeout). */
  status: number | null;
  /** Why this is not a success, for the admin's `last_error`; null on a 2xx. */
  error: string | null;
  /** The receiver's Retry-After, in milliseconds from now. */
  retryAfterMs: number | null;
  durationMs: number;
}

export async function postWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  options: PostOptions,
): Promise<PostResult> {
  const started = performance.now();
  const done = (r: Omit<PostResult, "durationMs">): PostResult => ({
    ...r,
    durationMs: Math.round(performance.now() - started),
  });
  const url = new URL(rawUrl);
  const secure = url.protocol === "https:";
  const agent = options.agent ?? receiverAgent(url, options.allowPrivate, false);
  const payload = new TextEncoder().encode(body);
  try {
    return await new Promise<PostResult>((resolve, reject) => {
      let settled = false;
      const finish = (r: Omit<PostResult, "durationMs">) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(done(r));
      };
      const request = (secure ? https : http).request(url, {
        method: "POST",
        headers: { ...headers, "Content-Length": String(payload.byteLength) },
        agent,
      }, (res) => {
        const status = res.statusCode ?? 0;
        const retryAfterMs = parseRetryAfter(res.headers["retry-after"], Date.now());
        const ok = status >= 200 && status < 300;
        const answered = () =>
          finish({ status, error: ok ? null : `HTTP ${status}`, retryAfterMs });
        let read = 0;
        res.on("data", (chunk: Uint8Array) => {
          read += chunk.byteLength;
          if (read < MAX_RESPONSE_BYTES) return;
          answered();
          // What is left of a long answer is not read: the connection is closed instead.
          res.destroy();
        });
        // Read to its end, the answer leaves the connection ready for the next batch.
        res.on("end", answered);
        // A connection lost before the answer ended is no answer: the batch is sent again.
        const lost = () =>
          finish({ status, error: "connection lost during the answer", retryAfterMs: null });
        res.on("error", lost);
        res.on("aborted", lost);
      });
      const timer = setTimeout(() => {
        finish({
          status: null,
          error: `no answer within ${options.timeoutMs} ms`,
          retryAfterMs: null,
        });
        // Deno's node:http client sends a request again on a new connection when a kept one
        // closes before the answer began, even when its sender closed it (Deno 2.9's
        // canRetryRequest looks only at reusedSocket, the answer and the agent). This one is
        // given up: sent again later, it would be a second batch in flight, behind the
        // deliverer's back. Not reused, it is not retried.
        (request as { reusedSocket: boolean }).reusedSocket = false;
        request.destroy();
      }, options.timeoutMs);
      request.on("error", (err: Error & { code?: string }) => {
        if (err instanceof AddressRefused) {
          finish({ status: null, error: `refused: ${err.message}`, retryAfterMs: null });
        } else if (err.code === "EPERM") {
          // A missing --allow-net (url.ts): the deployment's fault, reported as an internal error.
          settled = true;
          clearTimeout(timer);
          reject(err);
        } else {
          finish({
            status: null,
            error: `network: ${err.code ?? err.message}`,
            retryAfterMs: null,
          });
        }
      });
      request.end(payload);
    });
  } finally {
    if (!options.agent) agent.destroy();
  }
}

/** Retry-After as delay-seconds or an HTTP date, in ms from now; null when absent or unreadable. */
export function parseRetryAfter(
  value: string | string[] | undefined,
  nowMs: number,
): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\s*\d+\s*$/.test(v)) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}
