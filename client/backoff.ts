// Exponential backoff with full jitter, never shorter than the server's Retry-After.

export interface BackoffOptions {
  /** The cap of the first retry's delay. */
  baseDelayMs: number;
  /** The largest cap, however many retries. */
  maxDelayMs: number;
}

/**
 * The delay before retry `attempt` (1 for the first): uniformly random between 0 and
 * min(maxDelayMs, baseDelayMs · 2^(attempt-1)) ("full jitter"), and at least `retryAfterMs`
 * when the server sent a Retry-After.
 */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions,
  random: () => number,
  retryAfterMs?: number,
): number {
  const cap = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.min(attempt - 1, 30));
  const jittered = Math.floor(random() * cap);
  return Math.max(jittered, retryAfterMs ?? 0);
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or bad. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^[0-9]+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A timer that resolves early (without error) when `signal` aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
