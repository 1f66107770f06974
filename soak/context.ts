// What every traffic source of a soak shares: the cluster, the project it works on, timing.
import type { Cluster } from "./cluster.ts";

export interface SoakContext {
  cluster: Cluster;
  /** The production environment's numeric project_id (feed, tokens, destinations). */
  envId: number;
  projectKey: string;
  adminToken: string;
  /** The link paths the link host is hit on. */
  links: string[];
  /** Unique per run: prefixes client event ids and names. */
  runTag: string;
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });

/** Retry-After in ms (whole seconds in this contract); `fallback` when absent. */
export function retryAfterMs(headers: Headers, fallback = 1000): number {
  const v = headers.get("retry-after");
  return v !== null && /^[0-9]+$/.test(v) ? Number(v) * 1000 : fallback;
}

export function adminHeaders(ctx: SoakContext): Record<string, string> {
  return { Authorization: `Bearer ${ctx.adminToken}`, "Content-Type": "application/json" };
}

export function feedPath(ctx: SoakContext, query: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) q.append(k, v);
  const qs = q.toString();
  return `/api/v1/projects/${ctx.envId}/event_stream${qs ? `?${qs}` : ""}`;
}
