// The feed rate limit under load: one token read far more often than its limit, over every
// instance. What the server admitted is read from PostgreSQL itself (feed_rate_hits, the table
// the limit is counted in), snapshotted more often than a row lives (a row is deleted only once
// it has left the 60 s window), so every admitted read is seen with its exact server timestamp.
import { ConnectionFailed, errorCode } from "./cluster.ts";
import { feedPath, sleep, type SoakContext } from "./context.ts";
import { withConnection } from "./database.ts";

export interface HammerLog {
  /** Client-side send and receive times of reads answered 200. */
  admitted: { sent: number; received: number }[];
  /** Client-side send and receive times of reads answered 503 rate_limited. */
  refused: { sent: number; received: number }[];
  /** 503 rate_limited answers without Retry-After (the contract requires it). */
  refusedWithoutRetryAfter: number;
  /** Any other answer below 500 (status → count). */
  other: Map<number, number>;
  /** Reads whose answer was lost or was a 5xx other than rate_limited: admitted or not. */
  unclear: number;
}

export function newHammerLog(): HammerLog {
  return { admitted: [], refused: [], refusedWithoutRetryAfter: 0, other: new Map(), unclear: 0 };
}

export async function runHammer(
  ctx: SoakContext,
  token: string,
  options: { concurrency: number; pauseMs: number },
  stop: AbortSignal,
  log: HammerLog,
): Promise<void> {
  const path = feedPath(ctx, { limit: "1" });
  const one = async () => {
    while (!stop.aborted) {
      const sent = Date.now();
      try {
        const answer = await ctx.cluster.request("rate limit hammer", path, {
          headers: { Authorization: `Bearer ${token}` },
        }, { attempts: 1 });
        const received = Date.now();
        if (answer.status === 200) log.admitted.push({ sent, received });
        else if (answer.status === 503 && errorCode(answer.text) === "rate_limited") {
          log.refused.push({ sent, received });
          if (!answer.headers.get("retry-after")) log.refusedWithoutRetryAfter++;
        } else if (answer.status >= 500) {
          // 503 unavailable: the database went away, possibly after the read's transaction
          // (and its rate-limit hit) committed. Admitted or not, like a lost answer.
          log.unclear++;
        } else log.other.set(answer.status, (log.other.get(answer.status) ?? 0) + 1);
      } catch (err) {
        if (!(err instanceof ConnectionFailed)) throw err;
        log.unclear++;
      }
      await sleep(options.pauseMs, stop);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, one));
}

export interface HitSnapshots {
  /** ctid:at → at (ms), every admitted read of the token seen in any snapshot. */
  hits: Map<string, number>;
  snapshots: number;
  failedSnapshots: number;
  /** The longest time between two successful snapshots (must stay under the row lifetime). */
  longestGapMs: number;
}

/**
 * Snapshots the token's rows every `everyMs` until `stop` aborts, then once more. A row lives
 * at least 60 s (until a later read of the token, or the purge job, finds it out of the
 * window), so with snapshots less than 60 s apart none is missed.
 */
export async function snapshotRateHits(
  dbUrl: string,
  tokenId: number,
  everyMs: number,
  stop: AbortSignal,
): Promise<HitSnapshots> {
  const out: HitSnapshots = { hits: new Map(), snapshots: 0, failedSnapshots: 0, longestGapMs: 0 };
  let last = Date.now();
  const take = async () => {
    try {
      // The table has no key and its rows are never updated: (ctid, at) names a row.
      const rows = await withConnection(dbUrl, (sql) =>
        sql<{ ctid: string; ms: number }[]>`
          select ctid::text as ctid, (extract(epoch from at) * 1000)::float8 as ms
          from feed_rate_hits where token_id = ${tokenId}
        `, 10_000);
      for (const r of rows) out.hits.set(`${r.ctid}:${r.ms}`, Math.round(r.ms));
      out.snapshots++;
      out.longestGapMs = Math.max(out.longestGapMs, Date.now() - last);
      last = Date.now();
    } catch {
      // The database's connections were just terminated: the next snapshot reconnects.
      out.failedSnapshots++;
    }
  };
  while (!stop.aborted) {
    await take();
    await sleep(everyMs, stop);
  }
  await take();
  return out;
}
