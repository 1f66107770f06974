// Connections to webhook receivers: how one is opened (to an address resolved and checked for
// that very connection) and the deliverer's keep-alive connections, one per destination.
//
// The connection is opened here (net.connect, tls.connect through the Agent's createConnection),
// not by the https Agent's own: when NODE_EXTRA_CA_CERTS is set, Deno's https Agent rebuilds the
// CA list in JavaScript, which needs the sys permission "ca" that `deno task start` does not
// grant (and `--allow-sys=` cannot name). tls.connect without `ca` verifies with Deno's own trust
// store, which holds NODE_EXTRA_CA_CERTS and DENO_CERT already, and needs only --allow-net
// (docs/operations.md, "Permissions").
import http from "node:http";
import https from "node:https";
import net, { type LookupFunction } from "node:net";
import tls from "node:tls";
import { type ResolvedAddress, resolveDestinationHost } from "./url.ts";

type Connect = (
  options: unknown,
  callback: (err: Error | null, socket?: net.Socket) => void,
) => void;

/**
 * An Agent whose every new connection first resolves the URL's host and checks each address
 * (services/destinations/url.ts: AddressRefused when the rule refuses one), then connects to the
 * address checked. A connection kept alive was checked when it was opened; a new one is checked
 * again (DNS can change). keepAlive: at most one connection, kept between requests.
 */
export function receiverAgent(url: URL, allowPrivate: boolean, keepAlive: boolean): http.Agent {
  const secure = url.protocol === "https:";
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = Number(url.port) || (secure ? 443 : 80);
  const open = (address: ResolvedAddress): net.Socket => {
    const lookup: LookupFunction = (_host, opts, callback) => {
      if ((opts as { all?: boolean }).all) {
        (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [address]);
      } else callback(null, address.address, address.family);
    };
    return secure
      // The certificate is checked against the URL's host; SNI carries it unless it is an IP.
      ? tls.connect({ host, port, lookup, servername: net.isIP(host) ? undefined : host })
      : net.connect({ host, port, lookup });
  };
  const options = { keepAlive, maxSockets: 1, maxFreeSockets: 1 };
  const agent = secure ? new https.Agent(options) : new http.Agent(options);
  const connect: Connect = (_options, callback) => {
    resolveDestinationHost(host, allowPrivate).then(
      (address) => callback(null, open(address)),
      (err) => callback(err),
    );
  };
  (agent as unknown as { createConnection: Connect }).createConnection = connect;
  return agent;
}

interface Entry {
  agent: http.Agent;
  /** Requests using the agent now: it is not closed under them. */
  busy: number;
  idle?: ReturnType<typeof setTimeout>;
}

/**
 * The deliverer's keep-alive connections: an Agent per destination (its key), so a destination's
 * consecutive batches go over one connection instead of paying for a new one (TCP, TLS) each.
 * Bounded: at most `max` agents (the least recently used idle one is closed to make room), and a
 * connection idle for `idleMs` is closed, before a receiver's own idle close (Node's default is
 * 5 s) is likely to race the next batch. When the receiver closes a kept connection before its
 * answer, Deno's node:http client sends the request again on a new connection (checked like any
 * new one); the receiver may then see the batch twice, with the same webhook-id, which at least
 * once allows. A success is still only a 2xx answer. A request given up (no answer in time) is
 * not sent again that way (postWebhook), so a destination has one batch in flight still.
 */
export class ReceiverConnections {
  #entries = new Map<string, Entry>(); // in order of last use, least recent first
  #max: number;
  #idleMs: number;

  constructor(options: { max?: number; idleMs?: number } = {}) {
    this.#max = options.max ?? 64;
    this.#idleMs = options.idleMs ?? 4_000;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Runs `post` with the agent of `key` (made for `url` when there is none or it changed). */
  async use<T>(
    key: string,
    url: URL,
    allowPrivate: boolean,
    post: (agent: http.Agent) => Promise<T>,
  ): Promise<T> {
    const entryKey = `${key} ${allowPrivate} ${url.origin}`;
    let entry = this.#entries.get(entryKey);
    if (entry) {
      this.#entries.delete(entryKey);
      clearTimeout(entry.idle);
    } else {
      entry = { agent: receiverAgent(url, allowPrivate, true), busy: 0 };
      this.#evict(this.#max - 1);
    }
    this.#entries.set(entryKey, entry);
    entry.busy++;
    try {
      return await post(entry.agent);
    } finally {
      entry.busy--;
      if (entry.busy === 0 && this.#entries.get(entryKey) === entry) {
        entry.idle = setTimeout(() => this.#close(entryKey, entry!), this.#idleMs);
        Deno.unrefTimer(entry.idle);
      }
    }
  }

  /** Closes every connection not in use now (the deliverer's drain and stop). */
  closeIdle(): void {
    for (const [key, entry] of [...this.#entries]) {
      if (entry.busy === 0) this.#close(key, entry);
    }
  }

  /** Closes the least recently used idle agents until at most `keep` remain. */
  #evict(keep: number): void {
    for (const [key, entry] of this.#entries) {
      if (this.#entries.size <= keep) return;
      if (entry.busy === 0) this.#close(key, entry);
    }
  }

  #close(key: string, entry: Entry): void {
    clearTimeout(entry.idle);
    if (this.#entries.get(key) === entry) this.#entries.delete(key);
    entry.agent.destroy();
  }
}
