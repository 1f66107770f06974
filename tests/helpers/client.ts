// Helpers of the feed client, CLI and export tests: a fault-injecting proxy, a sink that checks
// exactly-once delivery, a service process whose memory can be sampled.
import assert from "node:assert/strict";
import { ingest } from "./sdk.ts";

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** What the proxy does with one request. */
export type Fault =
  | { kind: "pass" }
  /** 503 with the contract's error body and Retry-After (seconds). */
  | { kind: "unavailable"; retryAfter?: number }
  /** Sends 200 and part of the upstream body, then breaks the connection. */
  | { kind: "drop" }
  /** Any status with the contract's error body. */
  | { kind: "status"; status: number; code: string };

export interface FaultProxy {
  /** The stable address clients use, whatever the upstream. */
  url: string;
  /** The upstream requests go to; null makes every request fail like a dead server. */
  upstream: string | null;
  /** Decides each request's fate, by 1-based request number. */
  plan: (n: number, url: URL) => Fault;
  /** Requests seen so far. */
  requests: number;
  faults: Record<Fault["kind"], number>;
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of the real server. A request that cannot reach the upstream, and a
 * planned drop, answer 200 with a Content-Length and then close the connection before the body
 * is complete, which a client sees as a network error.
 *
 * It speaks HTTP/1.1 over a plain TCP listener (one request per connection, `Connection: close`)
 * rather than through Deno.serve: Deno.serve prints every body stream that errors, and the
 * deliberate drops filled the test output with stack traces of expected failures.
 */
export function startFaultProxy(upstream: string): FaultProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Promise<void>>();
  const proxy: FaultProxy = {
    url: `http://127.0.0.1:${listener.addr.port}`,
    upstream,
    plan: () => ({ kind: "pass" }),
    requests: 0,
    faults: { pass: 0, unavailable: 0, drop: 0, status: 0 },
    async close() {
      listener.close();
      await accepting;
      await Promise.allSettled(open);
    },
  };
  const encoder = new TextEncoder();

  async function writeAll(conn: Deno.Conn, bytes: Uint8Array) {
    for (let n = 0; n < bytes.length;) n += await conn.write(bytes.subarray(n));
  }

  /** Writes the head and `body`; a `declared` length above the body's breaks the answer. */
  async function answer(
    conn: Deno.Conn,
    status: number,
    headers: Headers,
    body: Uint8Array,
    declared = body.length,
  ) {
    let head = `HTTP/1.1 ${status} X\r\n`;
    for (const [name, value] of headers) {
      if (!/^(content-length|content-encoding|transfer-encoding|connection)$/i.test(name)) {
        head += `${name}: ${value}\r\n`;
      }
    }
    head += `content-length: ${declared}\r\nconnection: close\r\n\r\n`;
    await writeAll(conn, encoder.encode(head));
    await writeAll(conn, body);
  }

  /** Reads one request's head (the tests' requests are GETs without a body). */
  async function readHead(
    conn: Deno.Conn,
  ): Promise<{ method: string; target: string; headers: Headers }> {
    let text = "";
    const buf = new Uint8Array(8192);
    const decoder = new TextDecoder();
    while (!text.includes("\r\n\r\n")) {
      const n = await conn.read(buf);
      if (n === null) throw new Error("connection closed before the request head");
      text += decoder.decode(buf.subarray(0, n), { stream: true });
    }
    const [requestLine, ...lines] = text.slice(0, text.indexOf("\r\n\r\n")).split("\r\n");
    const [method, target] = requestLine!.split(" ") as [string, string];
    const headers = new Headers();
    for (const line of lines) {
      const colon = line.indexOf(":");
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
    return { method, target, headers };
  }

  async function handle(conn: Deno.Conn) {
    try {
      const req = await readHead(conn);
      const url = new URL(req.target, proxy.url);
      const fault = proxy.plan(++proxy.requests, url);
      proxy.faults[fault.kind]++;
      const json = new Headers({ "Content-Type": "application/json" });
      if (fault.kind === "unavailable" || fault.kind === "status") {
        const status = fault.kind === "unavailable" ? 503 : fault.status;
        const code = fault.kind === "unavailable" ? "unavailable" : fault.code;
        if (fault.kind === "unavailable") json.set("Retry-After", String(fault.retryAfter ?? 1));
        const body = encoder.encode(
          JSON.stringify({ error: { status, code, message: "injected" } }),
        );
        return await answer(conn, status, json, body);
      }
      if (proxy.upstream === null) return await answer(conn, 200, json, new Uint8Array(), 100);
      let res: Response;
      try {
        req.headers.delete("host");
        req.headers.delete("accept-encoding");
        res = await fetch(proxy.upstream + url.pathname + url.search, {
          method: req.method,
          headers: req.headers,
        });
      } catch {
        return await answer(conn, 200, json, new Uint8Array(), 100);
      }
      const body = new Uint8Array(await res.arrayBuffer());
      if (fault.kind === "drop") {
        return await answer(conn, 200, res.headers, body.slice(0, body.length >> 1), body.length);
      }
      await answer(conn, res.status, res.headers, body);
    } catch {
      // The client went away first: nothing to answer.
    } finally {
      try {
        conn.close();
      } catch {
        // already closed
      }
    }
  }

  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        const done = handle(conn).finally(() => open.delete(done));
        open.add(done);
      }
    } catch {
      // closed
    }
  })();
  return proxy;
}

/** Sends `total` events (an hour old) in batches of up to 1000; returns their client ids. */
export async function ingestMany(
  base: string,
  key: string,
  total: number,
  options: { prefix?: string; type?: string } = {},
): Promise<string[]> {
  const ids: string[] = [];
  const epoch = Date.now() - 3_600_000;
  for (let start = 0; start < total; start += 1000) {
    const batch = Array.from({ length: Math.min(1000, total - start) }, (_, i) => {
      const id = `${options.prefix ?? "e"}-${start + i}`;
      ids.push(id);
      return {
        id,
        type: options.type ?? "install",
        name: options.type === "custom" ? id : undefined,
        occurred_at: new Date(epoch + start + i).toISOString(),
        device: { model: "Pixel 8", os: "android" },
      };
    });
    await ingest(base, key, "production", batch);
  }
  return ids;
}

/**
 * The resident set size of a process, in bytes. Read with `ps` (procps): reading
 * /proc/<pid>/status directly needs --allow-all, which the test task does not grant.
 */
export async function residentBytes(pid: number): Promise<number> {
  const out = await new Deno.Command("ps", { args: ["-o", "rss=", "-p", String(pid)] }).output();
  const kb = new TextDecoder().decode(out.stdout).trim();
  assert.ok(out.success && /^[0-9]+$/.test(kb), `no RSS for process ${pid}`);
  return Number(kb) * 1024;
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak. */
export function sampleMemory(pid: number, everyMs = 50) {
  let peak = 0;
  let samples = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        peak = Math.max(peak, await residentBytes(pid));
        samples++;
      } catch { /* the process is gone */ }
      await sleep(everyMs);
    }
  })();
  return {
    /** Resolves once `n` samples have been taken: on a loaded machine they come late. */
    async reached(n: number): Promise<void> {
      while (running && samples < n) await sleep(everyMs);
    },
    get samples(): number {
      return samples;
    },
    async stop(): Promise<{ peak: number; samples: number }> {
      running = false;
      await loop;
      return { peak, samples };
    },
  };
}
