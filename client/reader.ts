// The feed reader: pages in arrival order, handed to the caller, the cursor saved only after.
import { abortableSleep, backoffDelay, type BackoffOptions, parseRetryAfter } from "./backoff.ts";
import {
  cursorKey,
  type CursorStore,
  normaliseBaseUrl,
  normaliseEventTypes,
} from "./cursor_store.ts";
import { FeedError, recoveryFor } from "./errors.ts";
import { FileCursorStore } from "./file_cursor_store.ts";
import { RecentIds } from "./recent_ids.ts";
import { type FeedEvent, type FeedPage, SUPPORTED_SCHEMA_VERSION } from "./types.ts";

/** Options of a {@link FeedReader}. Only `baseUrl`, `projectId` and `token` are required. */
export interface FeedReaderOptions {
  /** The origin of the feed API ({api_url}), e.g. `https://feed.example.com`. */
  baseUrl: string;
  /** The numeric project_id of the environment the token was created for. */
  projectId: string | number;
  /** The feed token (`est_…`). Keep it secret: from the environment, never from a flag. */
  token: string;
  /** Names the consumer: each integration keeps its own cursor. Default `default`. */
  integration?: string;
  /** `event_types[]` filter; empty or omitted reads every type. Part of the cursor's key. */
  eventTypes?: readonly string[];
  /** Page size, 1 to 1000; omitted uses the server's default (100). */
  limit?: number;
  /** Where cursors are kept. Default: a {@link FileCursorStore} at `cursorFile`. */
  store?: CursorStore;
  /** The default store's file. Default `feed.cursor` in the working directory. */
  cursorFile?: string;
  /** Keep polling once caught up (true, the default), or stop at the first empty page. */
  follow?: boolean;
  /** How long to wait after an empty page before polling again. Default 1000 ms. */
  pollIntervalMs?: number;
  /** How many recently processed ids are kept (and saved) to drop rereads. Default 5000. */
  dedupWindow?: number;
  /** Consecutive failures (503, network, handler) tolerated before stopping. Default 10. */
  maxRetries?: number;
  /** Backoff caps. Defaults: 500 ms for the first retry, at most 30 s. */
  backoff?: Partial<BackoffOptions>;
  /** A request taking longer counts as a network error. Default 30 000 ms. */
  requestTimeoutMs?: number;
  /** Stops the reader after the page in progress (processed and saved), or at once when idle. */
  signal?: AbortSignal;
  /** Called after each page, on each retry and before each idle wait. */
  onProgress?: (progress: FeedProgress) => void;
  /** Injectable for tests. */
  fetch?: typeof fetch;
  /** Injectable for tests; must resolve early when the signal aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Injectable for tests: uniform in [0, 1). */
  random?: () => number;
  /** Injectable for tests: epoch milliseconds. */
  now?: () => number;
}

/** Running totals of one {@link FeedReader.run}. */
export interface FeedStats {
  /** Pages completely processed (their cursor saved). */
  pages: number;
  /** Events handed to the handler and completed. */
  events: number;
  /** Events dropped because their id was processed before. */
  duplicates: number;
  /** Retries after a 503, a network error, an unreadable page or a throwing handler. */
  retries: number;
  /** Now minus the newest `occurred_at` of the last non-empty page; null before one. */
  lagMs: number | null;
  /** The last page was empty: the reader has read everything available. */
  caughtUp: boolean;
}

/** What {@link FeedReaderOptions.onProgress} receives. */
export type FeedProgress =
  | { kind: "page"; stats: FeedStats; received: number; delivered: number }
  | {
    kind: "retry";
    stats: FeedStats;
    attempt: number;
    delayMs: number;
    reason: string;
    status?: number | undefined;
  }
  | { kind: "idle"; stats: FeedStats; waitMs: number };

/** What a page handler gets besides the events. */
export interface FeedPageContext {
  /** The cursor that will be saved once the handler resolves. */
  nextAfter: string;
  /** Events in the page as served, duplicates included. */
  received: number;
  /**
   * Marks one event as processed before the whole page is. If the handler then throws, the
   * retry of the page skips it. Events of a page that resolves are marked automatically.
   */
  markProcessed(id: string): void;
  signal: AbortSignal | undefined;
}

/** Processes one page's new events; the cursor advances only after it resolves. */
export type PageHandler = (events: FeedEvent[], page: FeedPageContext) => Promise<void> | void;

/** Processes one event; the cursor advances only after every event of the page resolved. */
export type EventHandler = (event: FeedEvent) => Promise<void> | void;

/** How a {@link FeedReader.run} ended (errors are thrown as {@link FeedError}). */
export interface FeedRunResult {
  /** `caught_up`: `follow` was false and a page came back empty. `aborted`: the signal. */
  reason: "caught_up" | "aborted";
  /** The saved cursor. */
  after: string | null;
  stats: FeedStats;
}

const DEFAULTS = {
  integration: "default",
  cursorFile: "feed.cursor",
  pollIntervalMs: 1000,
  dedupWindow: 5000,
  maxRetries: 10,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  requestTimeoutMs: 30_000,
};

/** A failure worth retrying from the same cursor. */
class Retryable {
  // Plain fields, not parameter properties: Node.js's type stripping does not support those.
  readonly reason: string;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(reason: string, status?: number, retryAfterMs?: number) {
    this.reason = reason;
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * Reads one project's feed with every client rule of the specification: one cursor per
 * project, integration and filter set; the cursor saved only after a page is completely
 * processed; retries from the saved cursor with exponential backoff and full jitter on 503s and
 * network errors; deduplication by event id; a stop with the specified recovery on any other
 * error status.
 *
 * ```ts
 * const reader = new FeedReader({ baseUrl, projectId: 1, token, eventTypes: ["purchase"] });
 * await reader.run(async (events) => { await upsert(events); });
 * ```
 */
export class FeedReader {
  /** The cursor's key in the store. */
  readonly key: string;
  readonly #options: FeedReaderOptions;
  readonly #store: CursorStore;
  readonly #eventTypes: string[];
  readonly #backoff: BackoffOptions;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;
  readonly #now: () => number;

  constructor(options: FeedReaderOptions) {
    if (!options.token) throw new TypeError("FeedReader: token is required");
    if (
      options.limit !== undefined &&
      (!Number.isInteger(options.limit) || options.limit < 1 || options.limit > 1000)
    ) {
      throw new TypeError("FeedReader: limit must be an integer from 1 to 1000");
    }
    this.#options = options;
    this.#eventTypes = normaliseEventTypes(options.eventTypes ?? []);
    this.key = cursorKey({
      baseUrl: options.baseUrl,
      projectId: options.projectId,
      integration: options.integration ?? DEFAULTS.integration,
      eventTypes: this.#eventTypes,
    });
    this.#store = options.store ?? new FileCursorStore(options.cursorFile ?? DEFAULTS.cursorFile);
    this.#backoff = {
      baseDelayMs: options.backoff?.baseDelayMs ?? DEFAULTS.baseDelayMs,
      maxDelayMs: options.backoff?.maxDelayMs ?? DEFAULTS.maxDelayMs,
    };
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#sleep = options.sleep ?? abortableSleep;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
  }

  /** The saved cursor (null when none is saved yet). */
  async savedCursor(): Promise<string | null> {
    return (await this.#load()).after;
  }

  /**
   * Forgets the saved cursor but keeps the window of recent ids, so that the next run omits
   * `after` and rereads the retained events, dropping those processed recently (the
   * specification's recovery for a lost or rejected cursor).
   */
  async resetCursor(): Promise<void> {
    const state = await this.#load();
    await this.#save({ after: null, recentIds: state.recentIds });
  }

  /**
   * Reads pages and hands each page's new events to `handler`, in arrival order. Resolves when
   * caught up (with `follow: false`) or after the signal aborts; rejects with a
   * {@link FeedError} when the reader must not go on by itself. The cursor is saved after each
   * page the handler completed, and never otherwise.
   */
  async run(handler: PageHandler): Promise<FeedRunResult> {
    const opts = this.#options;
    const follow = opts.follow ?? true;
    const maxRetries = opts.maxRetries ?? DEFAULTS.maxRetries;
    const signal = opts.signal;
    const state = await this.#load();
    const recent = new RecentIds(opts.dedupWindow ?? DEFAULTS.dedupWindow, state.recentIds);
    let after = state.after;
    let failures = 0;
    // Ids marked processed during failed attempts at the page being read.
    const partial = new Set<string>();
    const stats: FeedStats = {
      pages: 0,
      events: 0,
      duplicates: 0,
      retries: 0,
      lagMs: null,
      caughtUp: false,
    };
    const retry = async (failure: Retryable, cause?: unknown) => {
      failures++;
      if (failures > maxRetries) {
        if (cause !== undefined) {
          throw new FeedError(
            "handler_failed",
            `the page handler failed ${failures} times in a row`,
            "fix the handler's failure and run again: the cursor was not advanced",
            { cause },
          );
        }
        throw new FeedError(
          "retries_exhausted",
          `${failures} consecutive failed reads (last: ${failure.reason})`,
          "the service is unavailable or rate limiting; run again later: the cursor was " +
            "not advanced",
          { status: failure.status },
        );
      }
      stats.retries++;
      const delayMs = backoffDelay(failures, this.#backoff, this.#random, failure.retryAfterMs);
      opts.onProgress?.({
        kind: "retry",
        stats: { ...stats },
        attempt: failures,
        delayMs,
        reason: failure.reason,
        status: failure.status,
      });
      await this.#sleep(delayMs, signal);
    };

    while (!signal?.aborted) {
      const page = await this.#fetchPage(after);
      if (page instanceof Retryable) {
        await retry(page);
        continue;
      }
      const fresh: FeedEvent[] = [];
      const inPage = new Set<string>();
      for (const event of page.events) {
        if (inPage.has(event.id) || recent.has(event.id)) {
          // Events completed by an earlier, failed attempt at this page are not duplicates.
          if (!partial.has(event.id)) stats.duplicates++;
        } else {
          fresh.push(event);
        }
        inPage.add(event.id);
      }
      if (fresh.length > 0) {
        try {
          await handler(fresh, {
            nextAfter: page.next_after,
            received: page.events.length,
            markProcessed: (id) => {
              if (!recent.has(id)) stats.events++;
              recent.add(id);
              partial.add(id);
            },
            signal,
          });
        } catch (err) {
          // Events marked processed stay in the window: the retry skips them.
          await retry(new Retryable(`handler threw: ${describe(err)}`), err);
          continue;
        }
        for (const event of fresh) {
          if (!partial.has(event.id)) stats.events++;
          recent.add(event.id);
        }
      }
      partial.clear();
      failures = 0;
      if (fresh.length > 0 || page.next_after !== after) {
        await this.#save({ after: page.next_after, recentIds: recent.toArray() });
      }
      after = page.next_after;
      stats.pages++;
      stats.caughtUp = page.events.length === 0;
      const newest = newestOccurredAt(page.events);
      if (newest !== null) stats.lagMs = Math.max(0, this.#now() - newest);
      opts.onProgress?.({
        kind: "page",
        stats: { ...stats },
        received: page.events.length,
        delivered: fresh.length,
      });
      if (page.events.length === 0) {
        if (!follow) return { reason: "caught_up", after, stats };
        const waitMs = opts.pollIntervalMs ?? DEFAULTS.pollIntervalMs;
        opts.onProgress?.({ kind: "idle", stats: { ...stats }, waitMs });
        await this.#sleep(waitMs, signal);
      }
    }
    return { reason: "aborted", after, stats };
  }

  /**
   * Like {@link run}, one event at a time: each event is marked processed when `handler`
   * resolves for it, so a page retried after a throw resumes after the last completed event.
   */
  runEach(handler: EventHandler): Promise<FeedRunResult> {
    return this.run(async (events, page) => {
      for (const event of events) {
        await handler(event);
        page.markProcessed(event.id);
      }
    });
  }

  /** One GET; a FeedPage, a Retryable, or a thrown FeedError. */
  async #fetchPage(after: string | null): Promise<FeedPage | Retryable> {
    const opts = this.#options;
    const url = new URL(
      `${normaliseBaseUrl(opts.baseUrl)}/api/v1/projects/` +
        `${encodeURIComponent(String(opts.projectId))}/event_stream`,
    );
    if (after !== null) url.searchParams.set("after", after);
    if (opts.limit !== undefined) url.searchParams.set("limit", String(opts.limit));
    for (const type of this.#eventTypes) url.searchParams.append("event_types[]", type);

    let status: number;
    let text: string;
    let retryAfter: string | null;
    try {
      const res = await this.#fetch(url, {
        headers: { Authorization: `Bearer ${opts.token}`, Accept: "application/json" },
        signal: AbortSignal.timeout(opts.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs),
      });
      status = res.status;
      retryAfter = res.headers.get("Retry-After");
      text = await res.text();
    } catch (err) {
      return new Retryable(`network error: ${describe(err)}`);
    }
    if (status === 503) {
      return new Retryable(
        `503 ${errorBody(text).code ?? "unavailable"}`,
        503,
        parseRetryAfter(retryAfter, this.#now()),
      );
    }
    if (status !== 200) {
      const body = errorBody(text);
      throw new FeedError(
        "http",
        `the feed answered ${status}${body.code ? ` ${body.code}` : ""}` +
          (body.message ? ` (${body.message})` : ""),
        recoveryFor(status, body.code),
        { status, code: body.code, serverMessage: body.message },
      );
    }
    let page: unknown;
    try {
      page = JSON.parse(text);
    } catch {
      return new Retryable("unreadable page: not JSON", 200);
    }
    return checkPage(page);
  }

  async #load() {
    try {
      return (await this.#store.load(this.key)) ?? { after: null, recentIds: [] };
    } catch (err) {
      throw storeError("read", err);
    }
  }

  async #save(state: { after: string | null; recentIds: string[] }) {
    try {
      await this.#store.save(this.key, state);
    } catch (err) {
      throw storeError("write", err);
    }
  }
}

/** A 200 body as a FeedPage, refusing payload versions this client does not know. */
function checkPage(page: unknown): FeedPage | Retryable {
  const p = page as Partial<FeedPage> | null;
  if (typeof p !== "object" || p === null) return new Retryable("unreadable page", 200);
  if (p.schema_version !== SUPPORTED_SCHEMA_VERSION) throw schemaError("page", p.schema_version);
  if (!Array.isArray(p.events) || typeof p.next_after !== "string" || p.next_after === "") {
    return new Retryable("unreadable page: missing events or next_after", 200);
  }
  for (const event of p.events as unknown[]) {
    const e = event as Partial<FeedEvent> | null;
    if (typeof e !== "object" || e === null || typeof e.id !== "string") {
      return new Retryable("unreadable page: an event without an id", 200);
    }
    if (e.schema_version !== SUPPORTED_SCHEMA_VERSION) {
      throw schemaError(`event ${e.id}`, e.schema_version);
    }
  }
  return p as FeedPage;
}

function schemaError(what: string, version: unknown): FeedError {
  return new FeedError(
    "schema_version",
    `the feed sent a ${what} of schema_version ${JSON.stringify(version)}; this client reads ` +
      `schema_version ${SUPPORTED_SCHEMA_VERSION}`,
    "upgrade the feed client; the cursor was not advanced past the page",
  );
}

function storeError(op: "read" | "write", cause: unknown): FeedError {
  return new FeedError(
    "cursor_store",
    `could not ${op} the saved cursor: ${describe(cause)}`,
    op === "read"
      ? "restore the cursor file from a backup, or remove it to reread the retained events"
      : "make the cursor file writable; the handled page will be read again (deduplicate by id)",
    { cause },
  );
}

function errorBody(text: string): { code?: string; message?: string } {
  try {
    const error = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }).error;
    return {
      code: typeof error?.code === "string" ? error.code : undefined,
      message: typeof error?.message === "string" ? error.message : undefined,
    } as { code?: string; message?: string };
  } catch {
    return {};
  }
}

function newestOccurredAt(events: readonly FeedEvent[]): number | null {
  let newest: number | null = null;
  for (const e of events) {
    const at = Date.parse(e.occurred_at);
    if (!Number.isNaN(at) && (newest === null || at > newest)) newest = at;
  }
  return newest;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
