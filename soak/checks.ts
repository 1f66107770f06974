// The soak's verdicts, as pure functions of what was recorded: tested on their own
// (tests/soak_checks_test.ts), so a passing soak means the service held, not that a check was lax.

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** Received must be exactly the expected sequence: every event, once, in feed order. */
export function sequenceCheck(name: string, received: string[], expected: string[]): Check {
  const seen = new Map<string, number>();
  for (const id of received) seen.set(id, (seen.get(id) ?? 0) + 1);
  const expectedSet = new Set(expected);
  let duplicates = 0;
  for (const n of seen.values()) duplicates += n - 1;
  const missing = expected.filter((id) => !seen.has(id)).length;
  const unknown = [...seen.keys()].filter((id) => !expectedSet.has(id)).length;
  let firstDifference = -1;
  const n = Math.max(received.length, expected.length);
  for (let i = 0; i < n; i++) {
    if (received[i] !== expected[i]) {
      firstDifference = i;
      break;
    }
  }
  const ok = firstDifference === -1;
  const detail = ok
    ? `${received.length} events, in order`
    : `${received.length} of ${expected.length}: first difference at #${firstDifference} ` +
      `(got ${received[firstDifference] ?? "nothing"}, expected ${
        expected[firstDifference] ?? "nothing"
      }); missing ${missing}, duplicates ${duplicates}, not in the feed ${unknown}`;
  return { name, ok, detail };
}

export interface DeliveryRecord {
  webhookId: string;
  eventIds: string[];
}

export interface DedupedDeliveries {
  /** Event ids in arrival order, each kept at its first arrival (docs/webhooks.md: by `id`). */
  ids: string[];
  /** Events received again (at-least-once redeliveries). */
  duplicateEvents: number;
  /** Requests that repeated an earlier webhook-id. */
  repeatedBatches: number;
  /** Repeated webhook-ids whose events differed from the first request's: must be none. */
  inconsistentBatches: number;
}

export function dedupeDeliveries(deliveries: readonly DeliveryRecord[]): DedupedDeliveries {
  const batches = new Map<string, string>();
  const seen = new Set<string>();
  const out: DedupedDeliveries = {
    ids: [],
    duplicateEvents: 0,
    repeatedBatches: 0,
    inconsistentBatches: 0,
  };
  for (const d of deliveries) {
    const key = d.eventIds.join(",");
    const earlier = batches.get(d.webhookId);
    if (earlier !== undefined) {
      out.repeatedBatches++;
      if (earlier !== key) out.inconsistentBatches++;
    } else batches.set(d.webhookId, key);
    for (const id of d.eventIds) {
      if (seen.has(id)) {
        out.duplicateEvents++;
        continue;
      }
      seen.add(id);
      out.ids.push(id);
    }
  }
  return out;
}

/** The most timestamps (ms, any order) within any window (t - windowMs, t]. */
export function maxInWindow(timestamps: readonly number[], windowMs: number): number {
  const sorted = [...timestamps].sort((a, b) => a - b);
  let max = 0;
  let i = 0;
  for (let j = 0; j < sorted.length; j++) {
    while (sorted[j]! - sorted[i]! >= windowMs) i++;
    max = Math.max(max, j - i + 1);
  }
  return max;
}

/** How many sorted values lie in (from, to]. */
function countIn(sorted: readonly number[], from: number, to: number): number {
  const upper = (x: number) => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]! <= x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return Math.max(0, upper(to) - upper(from));
}

/**
 * Refusals that cannot have been right: the server decided at some moment t within the
 * request's [sent, received], refusing only with `limit` admitted reads in (t - windowMs, t].
 * Admitted reads that could lie in such a window lie in (sent - windowMs, received]; fewer than
 * `limit` there, and the refusal was wrong whatever t was.
 */
export function unjustifiedRefusals(
  refusals: readonly { sent: number; received: number }[],
  admittedAt: readonly number[],
  limit: number,
  windowMs: number,
): number {
  const sorted = [...admittedAt].sort((a, b) => a - b);
  return refusals.filter((r) => countIn(sorted, r.sent - windowMs, r.received) < limit).length;
}

/**
 * The documented bound on lost link views: a SIGKILLed instance loses the views it had not yet
 * written, "at most a moment's worth" (docs/link-host.md), read here as the redirects that
 * instance answered in the `momentMs` before it was killed; and, killed while the database could
 * not take their writes (an outage: the connections terminated, a Citus worker stopped), the views
 * it answered since that outage began: their write failed and waits in memory for its retry, a
 * second apart. Each outage counts for a kill within `ms` of its start (its length plus the time a
 * retry needs to get through).
 */
export function viewLossBound(
  answered: readonly { at: number; instance: number }[],
  kills: readonly { at: number; instance: number }[],
  momentMs: number,
  outages: readonly { at: number | null; ms: number }[] = [],
): number {
  let bound = 0;
  for (const k of kills) {
    let from = k.at - momentMs;
    for (const outage of outages) {
      if (outage.at !== null && outage.at <= k.at && k.at - outage.at <= outage.ms) {
        from = Math.min(from, outage.at);
      }
    }
    for (const a of answered) {
      if (a.instance === k.instance && a.at <= k.at && a.at >= from) bound++;
    }
  }
  return bound;
}

export interface StoredOnce {
  /** Acknowledged ids not found. */
  missing: number;
  /** Ids found more than once (acknowledged or not). */
  duplicated: number;
  /** Ids found that no writer sent. */
  unknown: number;
  /** Ids of unacknowledged batches that were stored (allowed: once). */
  unclearStored: number;
}

/** Acknowledged ids must be found exactly once; unclear ones at most once; nothing else. */
export function storedOnce(
  acked: ReadonlySet<string>,
  unclear: ReadonlySet<string>,
  found: Iterable<string>,
): StoredOnce {
  const counts = new Map<string, number>();
  for (const id of found) counts.set(id, (counts.get(id) ?? 0) + 1);
  const out: StoredOnce = { missing: 0, duplicated: 0, unknown: 0, unclearStored: 0 };
  for (const id of acked) if (!counts.has(id)) out.missing++;
  for (const [id, n] of counts) {
    if (n > 1) out.duplicated++;
    if (!acked.has(id)) {
      if (unclear.has(id)) out.unclearStored++;
      else out.unknown++;
    }
  }
  return out;
}

export function storedOnceOk(s: StoredOnce): boolean {
  return s.missing === 0 && s.duplicated === 0 && s.unknown === 0;
}
