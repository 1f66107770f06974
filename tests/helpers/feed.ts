// Feed test helpers: capture synthetic events, read pages over HTTP, follow cursors.
import assert from "node:assert/strict";
import type { Db, Sql } from "../../db/connect.ts";
import type { Clock } from "../../infra/clock.ts";
import { announceCapture, captureEvents } from "../../services/feed/capture.ts";
import { call, type TestResponse } from "./server.ts";

export interface FeedEnvelope {
  schema_version: number;
  id: string;
  type: string;
  occurred_at: string;
  project: { id: string; test: boolean };
  [field: string]: unknown;
}

export interface FeedPageBody {
  schema_version: number;
  events: FeedEnvelope[];
  next_after: string;
}

let counter = 0;

/** A synthetic feed-event envelope, serialised as ingestion stores it. */
export function envelope(
  hashid: string,
  type: string,
  fields: Record<string, unknown> = {},
): { id: string; type: string; body: string } {
  const id = `evt_${(++counter).toString().padStart(8, "0")}_${crypto.randomUUID().slice(0, 8)}`;
  const body = JSON.stringify({
    schema_version: 1,
    id,
    type,
    occurred_at: "2026-01-01T00:00:00.000Z",
    project: { id: hashid, test: false },
    ...fields,
  });
  return { id, type, body };
}

/** Captures events in one committed transaction, as ingestion does; returns their ids. */
export async function capture(
  sql: Sql,
  environmentId: number,
  hashid: string,
  types: readonly string[],
  receivedAt: Date | Clock,
): Promise<string[]> {
  const events = types.map((t) => envelope(hashid, t));
  const at = receivedAt instanceof Date ? receivedAt : receivedAt.now();
  if (await sql.begin((tx: Db) => captureEvents(tx, environmentId, at, events))) {
    await announceCapture(sql, environmentId);
  }
  return events.map((e) => e.id);
}

export interface ReadOptions {
  after?: string;
  limit?: string | number;
  types?: readonly string[];
  headers?: Record<string, string>;
}

export function feedPath(projectId: number | string, options: ReadOptions = {}): string {
  const q = new URLSearchParams();
  if (options.after !== undefined) q.append("after", options.after);
  if (options.limit !== undefined) q.append("limit", String(options.limit));
  for (const t of options.types ?? []) q.append("event_types[]", t);
  const qs = q.toString();
  return `/api/v1/projects/${projectId}/event_stream${qs ? `?${qs}` : ""}`;
}

/** GET event_stream with a bearer token (null: no Authorization header). */
export function readFeed(
  base: string,
  projectId: number | string,
  token: string | null,
  options: ReadOptions = {},
): Promise<TestResponse<FeedPageBody>> {
  const headers: Record<string, string> = { ...options.headers };
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  return call<FeedPageBody>(base, "GET", feedPath(projectId, options), { headers });
}

/** Reads a page that must succeed. */
export async function readOk(
  base: string,
  projectId: number | string,
  token: string,
  options: ReadOptions = {},
): Promise<FeedPageBody> {
  const res = await readFeed(base, projectId, token, options);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.schema_version, 1);
  assert.ok(Array.isArray(res.body.events));
  assert.equal(typeof res.body.next_after, "string");
  assert.ok(res.body.next_after.length > 0);
  return res.body;
}

/** Follows cursors until an empty page; returns every event and the final cursor. */
export async function readAll(
  base: string,
  projectId: number | string,
  token: string,
  options: ReadOptions = {},
): Promise<{ events: FeedEnvelope[]; after: string; pages: number }> {
  const events: FeedEnvelope[] = [];
  let after = options.after;
  for (let pages = 1;; pages++) {
    const page = await readOk(base, projectId, token, { ...options, after });
    after = page.next_after;
    if (page.events.length === 0) return { events, after, pages };
    events.push(...page.events);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export type CaptureFn = (
  tx: Db,
  environmentId: number,
  receivedAt: Date,
  events: { type: string; body: string }[],
) => Promise<unknown>;

export interface NoLossOptions {
  /** The app to read through, with a rate limit high enough for a busy reader. */
  base: string;
  /** One pool per writer (on PGlite they are all the one connection). */
  pools: Sql[];
  environmentId: number;
  hashid: string;
  token: string;
  transactionsPerWriter: number;
  capture: CaptureFn;
  /** Writers go on until the reader caught up this often (0: they stop at their quota). */
  minFrontierPages: number;
}

export interface NoLossResult {
  written: string[];
  /** Every id the reader was served, in the order served. */
  read: string[];
  /**
   * Pages read while writers were still running that were not full: the reader had caught up
   * with what was committed, where an out-of-order commit would make it skip.
   */
  frontierPages: number;
}

const READER_LIMIT = 5;
/** Events committed but not yet read beyond which writers wait for the reader. */
const MAX_READER_LAG = READER_LIMIT;

/**
 * Writers each run transactions that capture 1–3 events and commit after a random delay, while
 * a reader follows cursors with a small limit; once the writers are done the reader catches up.
 * Writers pause between transactions so that the reader keeps up with them: a reader far
 * behind only reads long-committed events and could not notice a gap.
 */
/** How often a no-loss reader must have caught up with writers still writing. */
export const MIN_FRONTIER_PAGES = 20;

export async function writeWhileReading(options: NoLossOptions): Promise<NoLossResult> {
  const written: string[] = [];
  const read: string[] = [];
  let writing = true;
  let frontierPages = 0;
  // The check is only worth something when the reader reached the commit frontier while writers
  // were still committing: on a loaded machine it may lag behind, so writers go on (up to ten
  // times their quota) until it has been there `minFrontierPages` times.
  const more = (i: number) =>
    i < options.transactionsPerWriter ||
    (frontierPages < options.minFrontierPages && i < 10 * options.transactionsPerWriter);
  const writer = async (pool: Sql) => {
    for (let i = 0; more(i); i++) {
      await sleep(Math.random() * 40);
      // Writers wait while the reader is more than a few pages behind, so that it keeps
      // reaching the commit frontier however loaded the machine is (a reader far behind reads
      // only long-committed events). Writers already in a transaction still commit in random
      // order around it: that is what the reader must not skip. The wait is bounded: a reader
      // that lost events never catches up, and the test must then fail, not hang.
      for (let w = 0; w < 100 && written.length - read.length > MAX_READER_LAG; w++) {
        await sleep(2);
      }
      const events = Array.from(
        { length: 1 + Math.floor(Math.random() * 3) },
        () => envelope(options.hashid, Math.random() < 0.5 ? "install" : "view"),
      );
      await pool.begin(async (tx: Db) => {
        await sleep(Math.random() * 2);
        await options.capture(tx, options.environmentId, new Date(), events);
        await sleep(Math.random() * 10);
      });
      written.push(...events.map((e) => e.id));
    }
  };
  const writers = Promise.all(options.pools.map(writer)).finally(() => (writing = false));

  let after: string | undefined;
  const readPage = async () => {
    const page = await readOk(options.base, options.environmentId, options.token, {
      after,
      limit: READER_LIMIT,
    });
    read.push(...page.events.map((e) => e.id));
    after = page.next_after;
    return page.events.length;
  };
  while (writing) {
    const n = await readPage();
    if (n < READER_LIMIT && writing) frontierPages++;
    if (n === 0) await sleep(1);
  }
  await writers;
  while (await readPage() > 0) { /* catch up */ }
  return { written, read, frontierPages };
}
