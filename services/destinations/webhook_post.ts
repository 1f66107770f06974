// One webhook POST to a destination, under the rules a receiver cannot bend: the host is
// resolved and checked (services/destinations/url.ts) and the connection goes to that checked
// address; redirects are answers, never followed; at most 64 KiB of the answer is read; the
// whole exchange is bounded in time. node:http rather than fetch, because fetch cannot be told
// which address to connect to.
//
// The connection is opened here (net.connect, tls.connect), not by an http(s) Agent: when
// NODE_EXTRA_CA_CERTS is set, Deno's https Agent rebuilds the CA list in JavaScript, which needs
// the sys permission "ca" that `deno task start` does not grant (and `--allow-sys=` cannot name).
// tls.connect without `ca` verifies with Deno's own trust store, which holds NODE_EXTRA_CA_CERTS
// and DENO_CERT already, and needs only --allow-net (docs/operations.md, "Permissions").
import http from "node:http";
import https from "node:https";
import net, { type LookupFunction } from "node:net";
import tls from "node:tls";
import { AddressRefused, resolveDestinationHost } from "./url.ts";

export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface PostOptions {
  allowPrivate: boolean;
  /** The whole exchange, connection to last byte read. */
  timeoutMs: number;
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
  let address;
  try {
    address = await resolveDestinationHost(url.hostname, options.allowPrivate);
  } catch (err) {
    if (err instanceof AddressRefused) {
      return done({ status: null, error: `refused: ${err.message}`, retryAfterMs: null });
    }
    throw err;
  }
  const lookup: LookupFunction = (_host, opts, callback) => {
    if ((opts as { all?: boolean }).all) {
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(
        null,
        [address],
      );
    } else callback(null, address.address, address.family);
  };
  const secure = url.protocol === "https:";
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = Number(url.port) || (secure ? 443 : 80);
  const connect = (): net.Socket =>
    secure
      // The certificate is checked against the URL's host; SNI carries it unless it is an IP.
      ? tls.connect({ host, port, lookup, servername: net.isIP(host) ? undefined : host })
      : net.connect({ host, port, lookup });
  const payload = new TextEncoder().encode(body);
  return await new Promise<PostResult>((resolve) => {
    let settled = false;
    const finish = (r: Omit<PostResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(r));
    };
    // No agent: each delivery opens its own connection, through `connect`.
    const request = (secure ? https : http).request(url, {
      method: "POST",
      headers: { ...headers, "Content-Length": String(payload.byteLength) },
      createConnection: connect,
    }, (res) => {
      const status = res.statusCode ?? 0;
      const retryAfterMs = parseRetryAfter(res.headers["retry-after"], Date.now());
      let read = 0;
      const end = () => {
        const ok = status >= 200 && status < 300;
        finish({ status, error: ok ? null : `HTTP ${status}`, retryAfterMs });
        // What is left of a long answer is not read: the connection is closed instead.
        res.destroy();
      };
      res.on("data", (chunk: Uint8Array) => {
        read += chunk.byteLength;
        if (read >= MAX_RESPONSE_BYTES) end();
      });
      res.on("end", end);
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
      request.destroy();
    }, options.timeoutMs);
    request.on("error", (err: Error & { code?: string }) => {
      finish({ status: null, error: `network: ${err.code ?? err.message}`, retryAfterMs: null });
    });
    request.end(payload);
  });
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
