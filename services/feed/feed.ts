// Reading the captured event feed: one page after a cursor, for REST and GraphQL alike.
import type postgres from "postgres";
import type { Config } from "../../config.ts";
import type { Db, Sql } from "../../db/connect.ts";
import type { Clock } from "../../infra/clock.ts";
import { ApiError } from "../errors.ts";
import { FEED_EVENT_TYPES } from "./envelope.ts";
import { admitFeedRead, type FeedReadAdmission, type FeedReader } from "./auth.ts";
import {
  comparePoints,
  decodeCursor,
  encodeCursor,
  FEED_START,
  type FeedPoint,
  type FeedPosition,
  withinPage,
} from "./cursor.ts";
import { feedRetentionCutoff } from "./retention.ts";
import { pinsPagePlan, planUnfilteredPageOnce } from "./page_plan.ts";
import { parseEnvironmentId } from "../projects/projects.ts";
import { countFeedPage } from "../monitoring/metrics.ts";

export const DEFAULT_FEED_LIMIT = 100;
/**
 * How long a read waits for the feed's horizon to pass events that committed but are not yet
 * served (see selectEnvironmentPage): an acknowledged event is readable right away unless a
 * transaction that started writing before it is still running after this long.
 */
export const HORIZON_WAIT_MS = 1_000;
export const MAX_FEED_LIMIT = 1000;

export { planUnfilteredPageOnce } from "./page_plan.ts";

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
  /**
   * The envelopes only (FeedPage.bodies), without each event's place and link id: REST's page,
   * whose cursor needs only the last place. Fewer columns for the driver to read on every row.
   */
  bodiesOnly?: boolean | undefined;
}

/**
 * Runs in readFeedPage's transaction once the token is admitted by the rate limit, before the
 * query parameters are checked: an extra admission (the live tail's open-stream limit) that a
 * later rejection rolls back with the rest.
 */
export type FeedAdmission = (tx: Db, reader: FeedReader) => Promise<void>;

/** One captured event: its envelope exactly as stored, and its place in the feed. */
export interface FeedPageEvent extends FeedPoint {
  body: string;
  /** The attributed link's id, as in the envelope; null without one (or if captured before it). */
  linkId: number | null;
}

export interface FeedPage {
  /** The events, with their places and link ids; empty for a read of the bodies only. */
  events: FeedPageEvent[];
  /** Every event's envelope exactly as stored, in feed order. */
  bodies: string[];
  /** The cursor after the last event; on an empty page, the cursor of the same position. */
  nextAfter: string;
  /** More events were available right now beyond this page. */
  hasMore: boolean;
  /** The cursor right after one of this page's events (GraphQL edge cursors). */
  cursorAfter(event: FeedPoint): string;
  /** See EnvironmentPage.pendingXid; null on a full page. */
  pendingXid: string | null;
}

interface FeedQuery {
  limit: number;
  eventTypes: string[];
  after: FeedPosition | null;
  bodiesOnly: boolean;
}

/**
 * Authenticates, authorises, rate-limits and reads one page. The checks answer in the
 * contract's order: 401, 403, 402, 503, then 400 for limit, event_types[] and after. A request
 * rejected by any of them changes nothing: the rate-limit hit and last-used stamp are written
 * in one transaction that a rejection rolls back, and only when the parameters are valid.
 *
 * The admission is feed_admit's (services/feed/auth.ts), the one every transport's read goes
 * through; its statements and the page's share one transaction (admitAndRead).
 */
export async function readFeedPage(
  sql: Sql,
  deps: FeedDeps,
  input: FeedReadInput,
  admit?: FeedAdmission,
): Promise<FeedPage> {
  const now = deps.clock.now();
  // The parameters are checked first, so that an invalid read is not recorded, but their 400
  // is thrown only once the token is admitted. A token admitted reads the environment of the
  // path, so that is the one the cursor must name.
  const environmentId = parseEnvironmentId(input.projectId);
  let query: FeedQuery | null = null;
  let invalid: ApiError | null = null;
  try {
    if (environmentId !== null) query = parseFeedQuery(deps.cursorSecret, environmentId, input);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    invalid = err;
  }
  const admission: FeedReadAdmission = {
    token: input.token,
    projectId: input.projectId,
    now,
    rateLimit: deps.config.feedRateLimit,
    record: query !== null,
  };
  const page = await admitAndRead(sql, deps.cursorSecret, admission, admit, query, invalid);
  // An empty page while committed events wait behind an older transaction: wait for them,
  // so that an acknowledged event is readable at once. Outside the transaction: it holds a
  // transaction id, which would hold back the horizon of every other reader waiting here.
  const served = page.pendingXid === null || page.bodies.length > 0
    ? page
    : await selectPageAfterHorizon(sql, deps.cursorSecret, environmentId!, query!, now, page);
  countFeedPage(served.bodies.length);
  return served;
}

/**
 * readFeedPage's transaction: the admission, then (for the live tail) `admit`, then the page.
 * Without `admit`, one round trip (readInOneTrip).
 */
function admitAndRead(
  sql: Sql,
  secret: string,
  admission: FeedReadAdmission,
  admit: FeedAdmission | undefined,
  query: FeedQuery | null,
  invalid: ApiError | null,
): Promise<FeedPage> {
  if (!admit) return readInOneTrip(sql, secret, admission, query, invalid);
  return sql.begin(async (tx) => {
    await admit(tx, await admitFeedRead(tx, admission));
    if (!query) throw invalid!;
    // Each sent at its call, so the settings before the page.
    const plan = planUnfilteredPageOnce(tx, query.eventTypes)?.execute();
    const [, page] = await Promise.all([
      plan,
      selectPage(tx, secret, parseEnvironmentId(admission.projectId)!, query, admission.now, true),
    ]);
    return page;
  });
}

/**
 * readFeedPage's statements in one write on a reserved connection: BEGIN, the admission (which
 * also sets the page's plan settings, services/feed/page_plan.ts), the page and COMMIT. A
 * refused admission aborts the transaction, so the page after it fails unread and the COMMIT
 * rolls back. BEGIN through postgres.js's sql.begin would be a round trip of its own, which
 * cost each page a write, a read and a wakeup of the server's process.
 */
async function readInOneTrip(
  sql: Sql,
  secret: string,
  admission: FeedReadAdmission,
  query: FeedQuery | null,
  invalid: ApiError | null,
): Promise<FeedPage> {
  const conn = await sql.reserve();
  let ended = false;
  try {
    // postgres.js sends a query in the order something first waits on it (or it is executed),
    // one microtask later: each is waited on as it is made, and selectPage's statement is sent
    // at its call, so they go out in this order.
    const sent: Promise<unknown>[] = [];
    const send = <T>(q: Promise<T>): Promise<T> => {
      q.catch(() => {});
      sent.push(q);
      return q;
    };
    send(conn`begin`);
    const pinPagePlan = query !== null && pinsPagePlan(query.eventTypes);
    const reader = send(admitFeedRead(conn, { ...admission, pinPagePlan }));
    const environmentId = parseEnvironmentId(admission.projectId)!;
    const page = query
      ? send(selectPage(conn, secret, environmentId, query, admission.now, true))
      : null;
    send(conn`commit`);
    ended = true;
    const settled = await Promise.allSettled(sent);
    // The admission's refusal first: the statements after it failed only because it did.
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw (await reader.then(() => failed.reason, (refusal) => refusal));
    if (!page) throw invalid!;
    return await page;
  } finally {
    // A transaction left open by a throw before its COMMIT was sent is rolled back here.
    if (!ended) await conn`rollback`.catch(() => {});
    conn.release();
  }
}

/**
 * The next page for a reader already admitted by readFeedPage (the live tail): the same
 * parameter checks and page, without authentication, rate limit or last-used stamp, and
 * without waiting for the horizon (the caller polls again soon when `pendingXid` is set).
 */
export async function readAdmittedPage(
  db: Db,
  deps: Pick<FeedDeps, "clock" | "cursorSecret">,
  environmentId: number,
  input: Pick<FeedReadInput, "limit" | "eventTypes" | "after">,
): Promise<FeedPage> {
  const query = parseFeedQuery(deps.cursorSecret, environmentId, input);
  const page = await selectPage(db, deps.cursorSecret, environmentId, query, deps.clock.now());
  countFeedPage(page.bodies.length);
  return page;
}

/**
 * The page again once the horizon has passed the events that were committed but not yet
 * served when `page` was read, or `page` itself if that takes longer than HORIZON_WAIT_MS.
 * Not to be called inside a transaction that holds a transaction id (see readFeedPage).
 */
async function selectPageAfterHorizon(
  db: Db,
  secret: string,
  environmentId: number,
  query: FeedQuery,
  now: Date,
  page: FeedPage,
): Promise<FeedPage> {
  if (!(await waitForHorizon(db, environmentId, page.pendingXid!, HORIZON_WAIT_MS))) return page;
  return await selectPage(db, secret, environmentId, query, now);
}

/**
 * Waits until every transaction up to `xid` has ended (the horizon of the environment's feed is
 * past it), polling with a growing pause; false if that takes longer than `budgetMs`. The
 * horizon is read where the environment's feed is written: on one server that is the server's,
 * on Citus the worker holding its shard (feed_horizon(integer), migration 00018).
 */
export async function waitForHorizon(
  db: Db,
  environmentId: number,
  xid: string,
  budgetMs: number,
): Promise<boolean> {
  const deadline = performance.now() + budgetMs;
  for (let pause = 1;; pause = Math.min(pause * 2, 50)) {
    const [row] = await db<
      { horizon: string }[]
    >`select feed_horizon(${environmentId}::int) as horizon`;
    if (BigInt(row!.horizon) > BigInt(xid)) return true;
    if (performance.now() + pause > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** Validates the query parameters (in the contract's order) against the token's environment. */
function parseFeedQuery(
  secret: string,
  environmentId: number,
  input: Pick<FeedReadInput, "limit" | "eventTypes" | "after" | "bodiesOnly">,
): FeedQuery {
  const limit = parseLimit(input.limit);
  const eventTypes = normaliseEventTypes(input.eventTypes ?? []);
  const bodiesOnly = input.bodiesOnly === true;
  if (input.after === undefined) return { limit, eventTypes, after: null, bodiesOnly };
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
  return { limit, eventTypes, after, bodiesOnly };
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
  horizon: string | null;
  pending: string | null;
  xid: string | null;
  seq: string | null;
  body: string | null;
  link_id: number | null;
}

/** Pages go by (xid, seq); selectEnvironmentPage says why none is ever skipped. */
async function selectPage(
  tx: Db,
  secret: string,
  environmentId: number,
  query: FeedQuery,
  now: Date,
  sendAtCall = false,
): Promise<FeedPage> {
  const afterEpoch = query.after?.epoch ?? null;
  const after = query.after ?? FEED_START;
  const found = await selectEnvironmentPage(
    tx,
    environmentId,
    {
      after,
      afterEpoch,
      eventTypes: query.eventTypes,
      limit: query.limit,
      bodiesOnly: query.bodiesOnly,
    },
    now,
    sendAtCall,
  );
  const epoch = found.epoch;
  const from = afterEpoch === epoch ? after : FEED_START;
  const events = found.events;
  const last = found.last ?? from;
  const nextAfter = encodeCursor(secret, {
    environmentId,
    epoch,
    eventTypes: query.eventTypes,
    xid: last.xid,
    seq: last.seq,
  });
  // Every place in the page is at or before `last`: one MAC for the whole page (feed_cursor.ts).
  const cursorAfter = (point: FeedPoint) => {
    const order = comparePoints(point, last);
    if (order === 0) return nextAfter;
    if (order < 0) return withinPage(nextAfter, point);
    return encodeCursor(secret, { environmentId, epoch, eventTypes: query.eventTypes, ...point });
  };
  return {
    events,
    bodies: found.bodies,
    nextAfter,
    hasMore: found.hasMore,
    cursorAfter,
    pendingXid: found.hasMore ? null : found.pendingXid,
  };
}

export interface EnvironmentPageQuery {
  /** Events after this place are read. */
  after: FeedPoint;
  /**
   * The capture epoch `after` belongs to: when it is not the current one (all tokens and
   * destinations were removed since), the page starts from the current capture's beginning.
   * null: no check (a destination's position is always in the current capture).
   */
  afterEpoch?: string | null;
  /** Normalised (see normaliseEventTypes); [] is every type. */
  eventTypes: readonly string[];
  limit: number;
  /** Read the envelopes and the last event's place only (EnvironmentPage.events left empty). */
  bodiesOnly?: boolean;
}

export interface EnvironmentPage {
  /** The current capture epoch ("" when the environment does not capture). */
  epoch: string;
  /**
   * Where the page's snapshot ends: every event before this place was visible to it, and no
   * event can later appear before it. A reader that got an incomplete page has seen everything
   * before `head`, and may move there.
   */
  head: FeedPoint;
  events: FeedPageEvent[];
  /** The events' envelopes as stored, in feed order (also for a read of the bodies only). */
  bodies: string[];
  /** The last event's place; null on an empty page. */
  last: FeedPoint | null;
  /** More matching events were available right now beyond this page. */
  hasMore: boolean;
  /**
   * The greatest transaction id of matching events already committed but not served yet,
   * because an older transaction was still running (they come once the horizon passes it).
   */
  pendingXid: string | null;
}

/**
 * One page of an environment's captured feed, with no token or cursor checks: the pull feed
 * reads through it, and so do push destinations.
 *
 * Arrival order that never skips: events are ordered by (xid, seq) (services/feed/capture.ts),
 * and a page serves only events whose transaction id is below the horizon of its snapshot
 * (feed_horizon(), migration 00008): the oldest transaction of this database still running.
 * Every transaction below it has ended, so the set of events before the horizon is final; any
 * event that commits later has an xid at or above it, after every position served here.
 * Writers committing out of order only delay what is served, never reorder or hide it. A
 * long-running writing transaction of this database holds the feed back until it ends; reads
 * wait up to HORIZON_WAIT_MS for committed events behind one (`pendingXid`).
 *
 * The cost follows the page, not the history: the unfiltered read walks the index
 * (environment_id, xid, seq) from the position; a filtered one walks (environment_id, type,
 * xid, seq) once per requested type, each stopping at limit + 1 rows, and merges. Events older
 * than the retention window are skipped here and purged by services/feed/retention.ts.
 */
export async function selectEnvironmentPage(
  db: Db,
  environmentId: number,
  query: EnvironmentPageQuery,
  now: Date,
  sendAtCall = false,
): Promise<EnvironmentPage> {
  // One statement, so one snapshot for the capture epoch, the horizon and the events. An empty
  // page still yields one row, carrying the epoch and the horizon.
  const cutoff = feedRetentionCutoff(now);
  const take = query.limit + 1;
  const afterEpoch = query.afterEpoch ?? null;
  const { xid: afterXid, seq: afterSeq } = query.after;
  const types = query.eventTypes as string[];
  // The one row every page starts from: the epoch, the horizon, what waits behind it, and where
  // this page starts (the beginning when the cursor is of an earlier capture). offset 0 (twice):
  // each computed here once, not pulled up into every row of the page.
  const head = db`
    select c.*,
      (
        select max(xid) from feed_events
        where environment_id = ${environmentId} and xid >= c.horizon
          ${types.length > 0 ? db`and type = any(${types}::text[])` : db``}
      ) as pending,
      case when ${afterEpoch}::text is null or c.epoch = ${afterEpoch}
        then ${afterXid}::bigint else 0 end as after_xid,
      case when ${afterEpoch}::text is null or c.epoch = ${afterEpoch}
        then ${afterSeq}::bigint else 0 end as after_seq
    from (
      select (extract(epoch from capture_started_at) * 1000000)::bigint::text as epoch,
        feed_horizon() as horizon
      from environments where id = ${environmentId} offset 0
    ) c
    offset 0
  `;
  // The head once, in a row of its own (no position), then the events without it: not the
  // epoch, horizon and pending check again on each of a thousand rows. The positions go out
  // as bigint, which the driver hands over as strings anyway: a `::text` cast on each row's
  // two cost PostgreSQL 1.3 ms of CPU a 1,000-event page, half as much as the rest of it.
  const headRow = db`
    select e.epoch, e.horizon::text, e.pending::text, null::bigint as xid, null::bigint as seq,
      null::text as body, null::int as link_id
    from e
    union all
  `;
  // The page's events after the cursor, in feed order: one index walk, or one per type merged.
  const walk = types.length === 0
    ? db`
      select xid, seq, body, link_id from feed_events
      where environment_id = ${environmentId}
        and (xid, seq) > (e.after_xid, e.after_seq)
        and xid < e.horizon
        and received_at >= ${cutoff}
      order by xid, seq
      limit ${take}
    `
    : db`
      select typed.xid, typed.seq, typed.body, typed.link_id
      from unnest(${types}::text[]) as t(type)
        cross join lateral (
          select f.xid, f.seq, f.body, f.link_id from feed_events f
          where f.environment_id = ${environmentId} and f.type = t.type
            and (f.xid, f.seq) > (e.after_xid, e.after_seq)
            and f.xid < e.horizon
            and f.received_at >= ${cutoff}
          order by f.xid, f.seq
          limit ${take}
        ) typed
      order by typed.xid, typed.seq
      limit ${take}
    `;
  if (query.bodiesOnly) {
    return await bodiesPage(db, head, walk, query.limit, sendAtCall);
  }
  const page = db<PageRow[]>`
    with e as materialized (${head})
    ${headRow}
    select null, null, null, page.xid, page.seq, page.body, page.link_id
    from e cross join lateral (${walk}) page
  `;
  // postgres.js sends a statement once it is first awaited, a microtask or two later; with
  // `sendAtCall` it goes now, so that a statement the caller makes after this call (a
  // transaction's COMMIT) goes out after it.
  const found = await (sendAtCall ? page.execute() : page);
  // The head row is the one without a position; the events come in the page's order.
  let first: PageRow | undefined;
  const events: FeedPageEvent[] = [];
  let more = false;
  for (const r of found) {
    if (r.seq === null) first = r;
    else if (events.length === query.limit) more = true;
    else events.push({ xid: r.xid!, seq: r.seq, body: r.body!, linkId: r.link_id });
  }
  return {
    epoch: first?.epoch ?? "",
    head: first?.horizon ? { xid: first.horizon, seq: "0" } : FEED_START,
    events,
    bodies: events.map((e) => e.body),
    last: events.at(-1) ?? null,
    hasMore: more,
    pendingXid: first?.pending ?? null,
  };
}

/**
 * selectEnvironmentPage for a read of the bodies only: each event's row holds its envelope and,
 * for the last one served (and the one after it, which only says there are more), its place;
 * the head travels as a JSON array in the body column ([epoch, horizon, pending]: the stored
 * envelopes are JSON objects, so it cannot be mistaken for one). The driver reads two columns a
 * row where the full page has four: per 1,000-event page about a third of its work
 * (docs/SCALING.md). The window functions number the walk's rows in the order it produced them,
 * as the full page's rows come in its order; `lead` finds the last without counting first.
 */
async function bodiesPage(
  db: Db,
  head: postgres.PendingQuery<postgres.Row[]>,
  walk: postgres.PendingQuery<postgres.Row[]>,
  limit: number,
  sendAtCall: boolean,
): Promise<EnvironmentPage> {
  const page = db<{ body: string; place: string | null }[]>`
    with e as materialized (${head})
    select json_build_array(e.epoch, e.horizon::text, e.pending::text)::text as body,
      null::text as place
    from e
    union all
    select page.body,
      case when lead(page.seq) over () is null or row_number() over () >= ${limit}
        then page.xid::text || ':' || page.seq::text end
    from e cross join lateral (${walk}) page
  `;
  const found = await (sendAtCall ? page.execute() : page);
  let first: [string | null, string | null, string | null] | undefined;
  const bodies: string[] = [];
  let last: string | null = null;
  let more = false;
  for (const r of found) {
    // "[": the head (an envelope starts with "{").
    if (r.place === null && r.body.charCodeAt(0) === 91) first = JSON.parse(r.body);
    else if (bodies.length === limit) more = true;
    else {
      bodies.push(r.body);
      if (r.place !== null) last = r.place;
    }
  }
  const at = last === null ? -1 : last.indexOf(":");
  return {
    epoch: first?.[0] ?? "",
    head: first?.[1] ? { xid: first[1], seq: "0" } : FEED_START,
    events: [],
    bodies,
    last: last === null ? null : { xid: last.slice(0, at), seq: last.slice(at + 1) },
    hasMore: more,
    pendingXid: first?.[2] ?? null,
  };
}
