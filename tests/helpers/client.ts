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
 * planned drop, answer 200 and then break the connection mid-body, which a client sees as a
 * network error.
 */
export function startFaultProxy(upstream: string): FaultProxy {
  const controller = new AbortController();
  const proxy: FaultProxy = {
    url: "",
    upstream,
    plan: () => ({ kind: "pass" }),
    requests: 0,
    faults: { pass: 0, unavailable: 0, drop: 0, status: 0 },
    async close() {
      controller.abort();
      await server.finished;
    },
  };
  const broken = (prefix: Uint8Array = new Uint8Array()) =>
    new Response(
      new ReadableStream({
        start(c) {
          if (prefix.length > 0) c.enqueue(prefix);
        },
        pull(c) {
          c.error(new Error("test proxy: connection dropped on purpose"));
        },
      }),
      { headers: { "Content-Type": "application/json" } },
    );
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: controller.signal, onListen() {} },
    async (req) => {
      const url = new URL(req.url);
      const fault = proxy.plan(++proxy.requests, url);
      proxy.faults[fault.kind]++;
      if (fault.kind === "unavailable") {
        return Response.json(
          { error: { status: 503, code: "unavailable", message: "injected" } },
          { status: 503, headers: { "Retry-After": String(fault.retryAfter ?? 1) } },
        );
      }
      if (fault.kind === "status") {
        return Response.json(
          { error: { status: fault.status, code: fault.code, message: "injected" } },
          { status: fault.status },
        );
      }
      if (proxy.upstream === null) return broken();
      let res: Response;
      try {
        res = await fetch(proxy.upstream + url.pathname + url.search, {
          method: req.method,
          headers: req.headers,
        });
      } catch {
        return broken();
      }
      const body = new Uint8Array(await res.arrayBuffer());
      if (fault.kind === "drop") return broken(body.slice(0, Math.floor(body.length / 2)));
      return new Response(body, { status: res.status, headers: res.headers });
    },
  );
  proxy.url = `http://127.0.0.1:${server.addr.port}`;
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
    async stop(): Promise<{ peak: number; samples: number }> {
      running = false;
      await loop;
      return { peak, samples };
    },
  };
}
