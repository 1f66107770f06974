// Send-to-receipt latencies of events that are each identified by a marker the receiver reads
// back. A send whose own receipt did not come is a timeout, never a sample: the latency of an
// earlier receipt (or none at all) must not stand in for it.

export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
}

export interface LatencySummary {
  p50: number;
  p99: number;
  samples: number;
  timeouts: number;
  /** Why the figures are not a valid measurement; empty when they are. */
  problems: string[];
}

export class ReceiptLatencies {
  #samples: number[] = [];
  #timeouts = 0;
  #early = 0;

  /** `receivedAt` undefined: the marker's receipt did not come within the wait. */
  record(sentAt: number, receivedAt: number | undefined): void {
    if (receivedAt === undefined) this.#timeouts++;
    else if (receivedAt < sentAt) this.#early++;
    else this.#samples.push(receivedAt - sentAt);
  }

  summary(waitMs: number): LatencySummary {
    const sorted = [...this.#samples].sort((a, b) => a - b);
    const problems: string[] = [];
    const sends = sorted.length + this.#timeouts + this.#early;
    if (this.#timeouts > 0) {
      problems.push(`${this.#timeouts} of ${sends} events not received within ${waitMs} ms`);
    }
    if (this.#early > 0) problems.push(`${this.#early} receipts timed before their send`);
    if (sends === 0) problems.push("no event sent");
    return {
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      samples: sorted.length,
      timeouts: this.#timeouts,
      problems,
    };
  }
}

/** The receipt time `lookup` gives once it has one, or undefined after `timeoutMs`. */
export async function waitForReceipt(
  lookup: () => number | undefined,
  timeoutMs: number,
): Promise<number | undefined> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const at = lookup();
    if (at !== undefined || performance.now() >= deadline) return at;
    await new Promise((r) => setTimeout(r, 1));
  }
}

/**
 * Events received at least once, counted by id: a batch delivered again (a retry after a
 * timeout) adds to `duplicates`, not to `count`, and does not move `lastNewAt`.
 */
export class DistinctReceipts {
  #seen = new Set<string>();
  duplicates = 0;
  /** When the first and the newest first receipt came (0 before any). */
  firstNewAt = 0;
  lastNewAt = 0;

  get count(): number {
    return this.#seen.size;
  }

  /** True for the first receipt of `id`. */
  add(id: string, at: number): boolean {
    if (this.#seen.has(id)) {
      this.duplicates++;
      return false;
    }
    this.#seen.add(id);
    if (this.#seen.size === 1) this.firstNewAt = at;
    this.lastNewAt = at;
    return true;
  }
}
