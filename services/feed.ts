// Reading the captured event feed: one page after a cursor, for REST and GraphQL alike.
import type { Config } from "../config.ts";
import type { Db, Sql } from "../db/connect.ts";
import type { Clock } from "./clock.ts";
import { ApiError } from "./errors.ts";
import { FEED_EVENT_TYPES } from "./feed_envelope.ts";
import {
  authenticateFeedToken,
  authorizeFeedRead,
  type FeedReader,
  touchFeedToken,
} from "./feed_auth.ts";
import { decodeCursor, encodeCursor, type FeedPosition } from "./feed_cursor.ts";
import { feedRetentionCutoff } from "./feed_retention.ts";
import { assertUnderRateLimit, recordRateHit } from "./rate_limit.ts";

export const DEFAULT_FEED_LIMIT = 100;
export const MAX_FEED_LIMIT = 1000;

const KNOWN_TYPES: ReadonlySet<string> = new Set(FEED_EVENT_TYPES);

export interface FeedDeps {
  clock: Clock;
  cursorSecret: string;
  config: Pick<Config, "feedRateLimit">;
}

export interface FeedReadInput {
  /** The bearer token as presented (see bearerToken), or null when none was. */
  token: string | null;
  /** The numeric project_id of the path, as written. */
  projectId: string;
  /** Events per page; undefined means the default, and NaN a value that is not a number. */
  limit?: number | undefined;
  /** undefined (or empty) means every type. */
  eventTypes?: readonly string[] | undefined;
  after?: string | undefined;
}

/**
 * Runs in readFeedPage's transaction once the token is admitted by the rate limit, before the
 * query parameters are checked: an extra admission (the live tail's open-stream limit) that a
 * later rejection rolls back with the rest.
 */
export type FeedAdmission = (tx: Db, reader: FeedReader) => Promise<void>;

/** One captured event: its envelope exactly as stored, and its place in the feed. */
export interface FeedPageEvent {
  seq: string;
  body: string;
}

export interface FeedPage {
  events: FeedPageEvent[];
  /** The cursor after the last event; on an empty page, the cursor of the same position. */
  nextAfter: string;
  /** More events were available right now beyond this page. */
  hasMore: boolean;
  /** The cursor right after one of this page's events (GraphQL edge cursors). */
  cursorAfter(seq: string): string;
}

interface FeedQuery {
  limit: number;
  eventTypes: string[];
  after: FeedPosition | null;
}

/**
 * Authenticates, authorises, rate-limits and reads one page. The checks answer in the
 * contract's order: 401, 403, 402, 503, then 400 for limit, event_types[] and after. A request
 * rejected by any of them changes nothing: the rate-limit hit and last-used stamp are written
 * in one transaction that a rejection rolls back.
 */
export async function readFeedPage(
  sql: Sql,
  deps: FeedDeps,
  input: FeedReadInput,
  admit?: FeedAdmission,
): Promise<FeedPage> {
  const now = deps.clock.now();
  return await sql.begin(async (tx) => {
    // What this transaction writes (a rate-limit hit, a last-used minute) may be lost in a
    // crash without harm, so its commit does not wait for the WAL flush: a read is not a write.
    // Pipelined with the token lookup, it costs no round trip.
    const [, reader] = await Promise.all([
      tx`set local synchronous_commit = off`,
      authenticateFeedToken(tx, input.token),
    ]);
    authorizeFeedRead(reader, input.projectId);
    await assertUnderRateLimit(tx, reader.tokenId, now, deps.config.feedRateLimit);
    await admit?.(tx, reader);
    const query = parseFeedQuery(deps.cursorSecret, reader.environmentId, input);
    // Admitted: the two writes and the page go out together, in one round trip. The page is
    // one statement with its own snapshot, taken after every earlier capture committed.
    const [, , page] = await Promise.all([
      recordRateHit(tx, reader.tokenId, now),
      touchFeedToken(tx, reader.tokenId, now),
      selectPage(tx, deps.cursorSecret, reader.environmentId, query, now),
    ]);
    return page;
  });
}

/**
 * The next page for a reader already admitted by readFeedPage (the live tail): the same
 * parameter checks and page, without authentication, rate limit or last-used stamp.
 */
export async function readAdmittedPage(
  db: Db,
  deps: Pick<FeedDeps, "clock" | "cursorSecret">,
  environmentId: number,
  input: Pick<FeedReadInput, "limit" | "eventTypes" | "after">,
): Promise<FeedPage> {
  const query = parseFeedQuery(deps.cursorSecret, environmentId, input);
  return await selectPage(db, deps.cursorSecret, environmentId, query, deps.clock.now());
}

/** Validates the query parameters (in the contract's order) against the token's environment. */
function parseFeedQuery(
  secret: string,
  environmentId: number,
  input: Pick<FeedReadInput, "limit" | "eventTypes" | "after">,
): FeedQuery {
  const limit = parseLimit(input.limit);
  const eventTypes = normaliseEventTypes(input.eventTypes ?? []);
  if (input.after === undefined) return { limit, eventTypes, after: null };
  const after = decodeCursor(secret, input.after);
  if (
    !after || after.environmentId !== environmentId ||
    after.eventTypes.join(",") !== eventTypes.join(",")
  ) {
    throw new ApiError(
      "bad_cursor",
      "after is not a cursor issued for this project and filter set; " +
        "send the saved next_after unchanged, or omit after to reread the retained events",
      { field: "after" },
    );
  }
  return { limit, eventTypes, after };
}

function parseLimit(n: number | undefined): number {
  if (n === undefined) return DEFAULT_FEED_LIMIT;
  if (!Number.isInteger(n) || n < 1 || n > MAX_FEED_LIMIT) {
    throw new ApiError("invalid_limit", `limit must be an integer from 1 to ${MAX_FEED_LIMIT}`, {
      field: "limit",
    });
  }
  return n;
}

/**
 * The `event_types[]` filter, sorted and deduplicated (400 for an unknown type); every known
 * type at once is the same as no filter, and both read as [].
 */
export function normaliseEventTypes(raw: readonly string[]): string[] {
  for (const type of raw) {
    if (!KNOWN_TYPES.has(type)) {
      throw new ApiError(
        "invalid_event_type",
        `event_types[] must be among ${FEED_EVENT_TYPES.join(", ")}`,
        { field: "event_types[]" },
      );
    }
  }
  const types = [...new Set(raw)].sort();
  return types.length === KNOWN_TYPES.size ? [] : types;
}

interface PageRow {
  epoch: string | null;
  head: string | null;
  seq: string | null;
  body: string | null;
}

interface EventRow {
  seq: string;
  body: string;
}

/**
 * Arrival order that never skips: pages go by `seq`, and services/feed_capture.ts's
 * captureEvents numbers events under the environment row's lock, so per environment commit
 * order is seq order. Once a reader has seen seq n, no event with a smaller seq can still
 * become visible, and "seq > cursor" never passes over an event that commits later.
 */
async function selectPage(
  tx: Db,
  secret: string,
  environmentId: number,
  query: FeedQuery,
  now: Date,
): Promise<FeedPage> {
  const afterEpoch = query.after?.epoch ?? null;
  const afterSeq = query.after?.seq ?? "0";
  const found = await selectEnvironmentPage(tx, environmentId, {
    afterSeq,
    afterEpoch,
    eventTypes: query.eventTypes,
    limit: query.limit,
  }, now);
  const epoch = found.epoch;
  const from = afterEpoch === epoch ? afterSeq : "0";
  const events = found.events;
  const cursorAfter = (seq: string) =>
    encodeCursor(secret, { environmentId, epoch, eventTypes: query.eventTypes, seq });
  return {
    events,
    nextAfter: cursorAfter(events.at(-1)?.seq ?? from),
    hasMore: found.hasMore,
    cursorAfter,
  };
}

export interface EnvironmentPageQuery {
  /** Events with a greater seq are read. */
  afterSeq: string;
  /**
   * The capture epoch `afterSeq` belongs to: when it is not the current one (all tokens and
   * destinations were removed since), the page starts from the current capture's beginning.
   * null: no check (a destination's position is always in the current capture).
   */
  afterEpoch?: string | null;
  /** Normalised (see normaliseEventTypes); [] is every type. */
  eventTypes: readonly string[];
  limit: number;
}

export interface EnvironmentPage {
  /** The current capture epoch ("" when the environment does not capture). */
  epoch: string;
  /**
   * The environment's last captured seq in the page's snapshot: every event up to it is
   * committed, so a reader that got an incomplete page has seen everything up to `head`.
   */
  head: string;
  events: FeedPageEvent[];
  /** More matching events were available right now beyond this page. */
  hasMore: boolean;
}

/**
 * One page of an environment's captured feed, with no token or cursor checks: the pull feed
 * reads through it, and so do push destinations. The cost follows the page, not the history:
 * the unfiltered read walks the primary key (environment_id, seq) from the position; a
 * filtered one walks (environment_id, type, seq) once per requested type, each stopping at
 * limit + 1 rows, and merges. Events older than the retention window are skipped here and
 * purged by services/feed_retention.ts.
 */
export async function selectEnvironmentPage(
  db: Db,
  environmentId: number,
  query: EnvironmentPageQuery,
  now: Date,
): Promise<EnvironmentPage> {
  // One statement, so one snapshot for the capture epoch, the head and the events. An empty
  // page still yields one row, carrying the epoch.
  const cutoff = feedRetentionCutoff(now);
  const take = query.limit + 1;
  const afterEpoch = query.afterEpoch ?? null;
  const afterSeq = query.afterSeq;
  const found = query.eventTypes.length === 0
    ? await db<PageRow[]>`
      select e.epoch, e.head, page.seq, page.body
      from (
        select (extract(epoch from capture_started_at) * 1000000)::bigint::text as epoch,
          feed_seq::text as head
        from environments where id = ${environmentId}
      ) e
      left join lateral (
        select seq, body from feed_events
        where environment_id = ${environmentId}
          and seq > case when ${afterEpoch}::text is null or e.epoch = ${afterEpoch}
            then ${afterSeq}::bigint else 0 end
          and received_at >= ${cutoff}
        order by seq
        limit ${take}
      ) page on true
    `
    : await db<PageRow[]>`
      select e.epoch, e.head, page.seq, page.body
      from (
        select (extract(epoch from capture_started_at) * 1000000)::bigint::text as epoch,
          feed_seq::text as head
        from environments where id = ${environmentId}
      ) e
      left join lateral (
        select typed.seq, typed.body
        from unnest(${query.eventTypes as string[]}::text[]) as t(type)
          cross join lateral (
            select f.seq, f.body from feed_events f
            where f.environment_id = ${environmentId} and f.type = t.type
              and f.seq > case when ${afterEpoch}::text is null or e.epoch = ${afterEpoch}
                then ${afterSeq}::bigint else 0 end
              and f.received_at >= ${cutoff}
            order by f.seq
            limit ${take}
          ) typed
        order by typed.seq
        limit ${take}
      ) page on true
    `;
  const rows = found.filter((r): r is EventRow & PageRow => r.seq !== null);
  return {
    epoch: found[0]?.epoch ?? "",
    head: found[0]?.head ?? "0",
    events: rows.slice(0, query.limit).map((r) => ({ seq: r.seq, body: r.body })),
    hasMore: rows.length > query.limit,
  };
}
