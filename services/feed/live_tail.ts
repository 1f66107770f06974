// The live tail: the captured feed followed as it grows, for the SSE route (rest/live.ts), the
// GraphQL subscription (resolvers/live.ts) and the dashboard's live page. Every page is read
// through the feed service (readFeedPage for the opening read, with all its checks; then
// readAdmittedPage), so ordering, filters and cursors are the pull feed's own: this module
// only passes opaque cursors around, and never looks inside one.
//
// What holds where:
// - The open-stream limit lives in PostgreSQL (live_streams): a row per open stream, renewed
//   every HEARTBEAT_MS while the stream is open, deleted when it ends. If the process dies
//   mid-stream, its rows stop counting when they expire (at most SLOT_TTL_MS later), and the
//   client resumes from the last `id:` it received on any instance: nothing was acknowledged
//   to the server, so nothing is lost.
// - A follower waits for the capture NOTIFY (services/feed/wakeup.ts) or its poll interval,
//   whichever comes first, so a missed notification costs at most one poll interval.
// - Memory per stream is bounded by one page (PAGE_LIMIT events): the next page is read only
//   when the consumer has taken the previous one, so a client that stops reading holds the
//   server at that page plus its socket buffers, never more.
// - A database read that does not answer (a page or a check: postgres.js can leave a query on a
//   connection the database dropped unsettled for good) ends the stream after READ_BOUND_MS
//   by the app's clock, and the client resumes from its last cursor on a fresh stream; left
//   alone, the stream would stay open with nothing coming, its other checks still succeeding.
import type { Db, Sql } from "../../db/connect.ts";
import { ApiError } from "../errors.ts";
import { admitFeedRead, type FeedReader } from "./auth.ts";
import {
  type FeedDeps,
  type FeedPage,
  HORIZON_WAIT_MS,
  readAdmittedPage,
  readFeedPage,
  waitForHorizon,
} from "./feed.ts";
import type { FeedWakeup } from "./wakeup.ts";
import { describeError, type Logger } from "../../infra/log.ts";

/** The pause before reading again while committed events wait for the feed's horizon. */
const PENDING_POLL_MS = 20;
/** Events read per page while following. */
export const PAGE_LIMIT = 100;
/** Open streams allowed per token, across instances. */
export const MAX_STREAMS_PER_TOKEN = 2;
/** A stream ends this long after it opened (by the app's clock). */
export const MAX_STREAM_MS = 60 * 60 * 1000;
/** How often an open stream re-checks its token and Enterprise (the contract: end within 5 s). */
export const RECHECK_MS = 2_000;
/**
 * How long a stream waits on one database read (by the app's clock) before it ends ("stalled").
 * A page is one indexed read of at most PAGE_LIMIT events, and a check a few indexed rows, each
 * answered in milliseconds: one that takes this long is lost, or the database is in trouble, and
 * a new stream is the way on.
 */
export const READ_BOUND_MS = 10_000;
/** How often a stream's row is renewed, and how long a row counts without renewal. */
const HEARTBEAT_MS = 10_000;
const SLOT_TTL_MS = 30_000;
// The first key of pg_advisory_xact_lock(int, int) for the open-stream count; the second is
// the token id.
const STREAM_LOCK_NAMESPACE = 4_242_011;

/** One event of a live stream: its stored envelope, and the cursor just after it. */
export interface LiveEvent {
  cursor: string;
  body: string;
}

export type LiveEndReason = "closed" | "expired" | "revoked" | "shutdown" | "stalled";

export interface LiveStream {
  /**
   * The events in feed order, one page (at most PAGE_LIMIT) at a time, as long as the stream
   * is open; ends when the stream does.
   */
  pages: AsyncGenerator<LiveEvent[], void, undefined>;
  /** Ends the stream (the consumer left); idempotent. */
  close(): void;
  /** Aborted when the stream ends, whatever the reason. */
  signal: AbortSignal;
  /** Why it ended, once it has. */
  endReason(): LiveEndReason | null;
}

export interface LiveTailOptions {
  /** Capture notifications; null polls only (the embedded database). */
  wakeup: FeedWakeup | null;
  /** Poll interval when no notification comes. */
  pollMs?: number;
}

export interface LiveOpenInput {
  token: string | null;
  projectId: string;
  eventTypes?: readonly string[] | undefined;
  after?: string | undefined;
}

interface Follow {
  environmentId: number;
  eventTypes: readonly string[] | undefined;
  after: string | undefined;
  first: FeedPage | null;
  /** Throws (or returns false) when the reader may no longer read. */
  stillAllowed: () => Promise<boolean>;
  slotId: number | null;
}

/** What the live tails need of the service: the pull feed's dependencies, its pool and logger. */
export interface LiveTailDeps extends FeedDeps {
  sql: Sql;
  logger: Logger;
}

export class LiveTails {
  readonly #deps: LiveTailDeps;
  readonly #wakeup: FeedWakeup | null;
  readonly #pollMs: number;
  readonly #open = new Set<(reason: LiveEndReason) => void>();
  /** Resolves when a stream's reading loop has finished (its transport then closes it). */
  readonly #finishing = new Set<Promise<void>>();
  #closed = false;

  constructor(deps: LiveTailDeps, options: LiveTailOptions) {
    this.#deps = deps;
    this.#wakeup = options.wakeup;
    this.#pollMs = options.pollMs ?? (options.wakeup?.live ? 1_000 : 250);
  }

  /** Open streams on this instance. */
  get size(): number {
    return this.#open.size;
  }

  /**
   * Opens a stream for a feed token: the pull feed's checks in its order (401, 403, 402, 503,
   * then 400s), plus the open-stream limit as a 503 rate_limited; the opening counts as one
   * read. Throws ApiError before anything is streamed.
   */
  async open(input: LiveOpenInput): Promise<LiveStream> {
    if (this.#closed) throw new ApiError("unavailable", "the server is shutting down");
    const sql = this.#deps.sql;
    let reader: FeedReader | null = null;
    let slotId: number | null = null;
    const first = await readFeedPage(sql, this.#deps, {
      token: input.token,
      projectId: input.projectId,
      limit: PAGE_LIMIT,
      eventTypes: input.eventTypes,
      after: input.after,
    }, async (tx, admitted) => {
      reader = admitted;
      slotId = await takeStreamSlot(tx, admitted.tokenId, this.#deps.clock.now());
    });
    const r = reader as FeedReader | null;
    if (!r) throw new Error("readFeedPage admitted no reader");
    return this.#start({
      environmentId: r.environmentId,
      eventTypes: input.eventTypes,
      after: input.after,
      first,
      slotId,
      stillAllowed: async () => {
        try {
          await admitFeedRead(sql, {
            token: input.token,
            projectId: input.projectId,
            now: this.#deps.clock.now(),
            rateLimit: null,
            record: false,
          });
          return true;
        } catch (err) {
          if (err instanceof ApiError) return false;
          throw err;
        }
      },
    });
  }

  /**
   * Opens a stream for someone already authorised for the environment (a dashboard session):
   * no token, no rate limit, no slot; `after` undefined starts at the feed's head. The stream
   * ends once `stillAllowed` answers false (checked as a token's right is).
   */
  async openForAdmin(
    environmentId: number,
    after: string | undefined,
    stillAllowed: () => Promise<boolean>,
  ): Promise<LiveStream> {
    if (this.#closed) throw new ApiError("unavailable", "the server is shutting down");
    let start = after;
    if (start === undefined) {
      // Walk to the head once, page by page, through the feed service. Events acknowledged
      // before the stream opened but not yet past the feed's horizon (committed behind an older
      // transaction still open) belong before the head too: the walk waits for them, as a pull
      // read does, rather than stream them as new.
      const sql = this.#deps.sql;
      let from: string | undefined;
      let waited = false;
      for (;;) {
        const page = await readAdmittedPage(sql, this.#deps, environmentId, {
          limit: 1000,
          after: from,
        });
        if (page.hasMore) {
          from = page.nextAfter;
          continue;
        }
        // Once: in a busy environment there is always a transaction just behind the head.
        if (
          !waited && page.pendingXid !== null &&
          await waitForHorizon(sql, environmentId, page.pendingXid, HORIZON_WAIT_MS)
        ) {
          waited = true;
          from = page.nextAfter;
          continue;
        }
        start = page.nextAfter;
        break;
      }
    }
    return this.#start({
      environmentId,
      eventTypes: undefined,
      after: start,
      first: null,
      slotId: null,
      stillAllowed,
    });
  }

  /**
   * Ends every open stream (server shutdown) and refuses new ones; resolves once their reading
   * loops have finished (at most `graceMs`), so the transports end them cleanly before the
   * server stops.
   */
  async close(graceMs = 2_000): Promise<void> {
    this.#closed = true;
    if (this.#open.size === 0 && this.#finishing.size === 0) return;
    const finishing = [...this.#finishing];
    for (const end of [...this.#open]) end("shutdown");
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all(finishing),
      new Promise((resolve) => timer = setTimeout(resolve, graceMs)),
    ]);
    clearTimeout(timer);
    // The transports write their last bytes and close the responses on the next turns.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  #start(follow: Follow): LiveStream {
    const deps = this.#deps;
    const controller = new AbortController();
    const openedAt = deps.clock.now().getTime();
    let reason: LiveEndReason | null = null;
    let started = false;
    let finished!: () => void;
    const finishing = new Promise<void>((resolve) => finished = resolve);
    this.#finishing.add(finishing);
    void finishing.then(() => this.#finishing.delete(finishing));
    const end = (why: LiveEndReason) => {
      if (!started) finished();
      if (reason) return;
      reason = why;
      this.#open.delete(end);
      clearInterval(watchdog);
      controller.abort();
      if (follow.slotId !== null) void releaseStreamSlot(deps.sql, follow.slotId, deps);
    };
    this.#open.add(end);

    // The watchdog runs beside the reading loop, so it ends a stream whose consumer has
    // stopped reading as surely as a busy one, and one whose reads do not answer.
    let lastBeat = Date.now();
    /** When the read the stream waits on (a page, or the watchdog's check) began; null: none. */
    let pageSince: number | null = null;
    let checkSince: number | null = null;
    const stalled = (since: number | null) =>
      since !== null && deps.clock.now().getTime() - since >= READ_BOUND_MS;
    const watchdog = setInterval(async () => {
      if (reason) return;
      if (stalled(pageSince) || stalled(checkSince)) {
        deps.logger.warn("live tail read did not answer: stream ended", {
          environment_id: follow.environmentId,
          waiting_on: stalled(pageSince) ? "page" : "check",
        });
        return end("stalled");
      }
      if (checkSince !== null) return;
      checkSince = deps.clock.now().getTime();
      try {
        if (deps.clock.now().getTime() - openedAt >= MAX_STREAM_MS) return end("expired");
        if (!(await follow.stillAllowed())) return end("revoked");
        if (follow.slotId !== null && Date.now() - lastBeat >= HEARTBEAT_MS) {
          lastBeat = Date.now();
          await renewStreamSlot(deps.sql, follow.slotId, deps.clock.now());
        }
      } catch (err) {
        // The database is away: keep the stream; the next check retries.
        deps.logger.warn("live tail check failed", describeError(err));
      } finally {
        checkSince = null;
      }
    }, Math.min(RECHECK_MS, this.#pollMs * 4));

    const wakeup = this.#wakeup;
    const pollMs = this.#pollMs;
    const sql = deps.sql;
    async function* pages(): AsyncGenerator<LiveEvent[], void, undefined> {
      started = true;
      let woken = false;
      const unsubscribe = wakeup?.subscribe(follow.environmentId, () => {
        woken = true;
        notify?.();
      });
      let notify: (() => void) | null = null;
      try {
        let after = follow.after;
        let page = follow.first;
        while (!controller.signal.aborted) {
          if (!page) {
            woken = false;
            pageSince = deps.clock.now().getTime();
            page = await unlessEnded(
              readAdmittedPage(sql, deps, follow.environmentId, {
                limit: PAGE_LIMIT,
                eventTypes: follow.eventTypes,
                after,
              }),
              controller.signal,
            );
            pageSince = null;
            // Ended while reading (stalled, revoked, shut down): the read's answer is not waited for.
            if (!page) break;
          }
          if (page.events.length > 0) {
            const read = page;
            yield read.events.map((e) => ({ cursor: read.cursorAfter(e), body: e.body }));
          }
          after = page.nextAfter;
          const more = page.hasMore;
          // Committed events behind an older transaction still running: they are served once
          // it ends (services/feed/feed.ts), which is usually a matter of milliseconds.
          const pending = page.pendingXid !== null;
          page = null;
          if (more || woken) continue;
          // Wait for a capture, the poll interval or the end, whichever comes first.
          await new Promise<void>((resolve) => {
            const timer = setTimeout(done, pending ? Math.min(pollMs, PENDING_POLL_MS) : pollMs);
            controller.signal.addEventListener("abort", done, { once: true });
            notify = done;
            function done() {
              clearTimeout(timer);
              controller.signal.removeEventListener("abort", done);
              notify = null;
              resolve();
            }
          });
        }
      } finally {
        unsubscribe?.();
        end("closed");
        finished();
      }
    }

    return {
      pages: pages(),
      close: () => end("closed"),
      signal: controller.signal,
      endReason: () => reason,
    };
  }
}

/**
 * `read`'s answer, or null as soon as `signal` aborts (the read is then left to settle unheard).
 */
function unlessEnded<T>(read: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) {
    read.catch(() => {});
    return Promise.resolve(null);
  }
  return new Promise<T | null>((resolve, reject) => {
    const ended = () => resolve(null);
    signal.addEventListener("abort", ended, { once: true });
    read.then(resolve, (err) => {
      // A read that fails after the stream ended has no one to tell.
      if (signal.aborted) resolve(null);
      else reject(err);
    }).finally(() => signal.removeEventListener("abort", ended));
  });
}

/** Counts the token's open streams under a per-token lock, and takes one or throws 503. */
async function takeStreamSlot(tx: Db, tokenId: number, now: Date): Promise<number> {
  const [, [open]] = await Promise.all([
    tx`select pg_advisory_xact_lock(${STREAM_LOCK_NAMESPACE}::int, ${tokenId}::int)`,
    tx<{ n: number }[]>`
      select count(*)::int as n from live_streams where token_id = ${tokenId} and expires_at > ${now}
    `,
  ]);
  if (open!.n >= MAX_STREAMS_PER_TOKEN) {
    throw new ApiError(
      "rate_limited",
      `this feed token already has ${MAX_STREAMS_PER_TOKEN} open live streams; close one first`,
      { retryAfter: Math.ceil(RECHECK_MS / 1000) },
    );
  }
  const [row] = await tx<{ id: number }[]>`
    with expired as (delete from live_streams where token_id = ${tokenId} and expires_at <= ${now})
    insert into live_streams (token_id, expires_at)
    values (${tokenId}, ${new Date(now.getTime() + SLOT_TTL_MS)})
    returning id::int as id
  `;
  return row!.id;
}

async function renewStreamSlot(sql: Sql, id: number, now: Date): Promise<void> {
  await sql`
    update live_streams set expires_at = ${new Date(now.getTime() + SLOT_TTL_MS)} where id = ${id}
  `;
}

async function releaseStreamSlot(sql: Sql, id: number, deps: Pick<LiveTailDeps, "logger">) {
  try {
    await sql`delete from live_streams where id = ${id}`;
  } catch (err) {
    // The row expires by itself within SLOT_TTL_MS.
    deps.logger.warn("live stream slot not released", describeError(err));
  }
}
