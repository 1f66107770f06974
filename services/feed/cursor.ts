// The feed's continuation cursor: a signed position, opaque to clients.
//
// Format: `v2.<payload>.<mac>`, both base64url. The payload is the JSON array
// [environment id, capture epoch, last xid, last seq, filter set]; the MAC is HMAC-SHA256 over
// `v2.<payload>` with the instance's cursor secret. Nothing about the client is stored: any
// instance sharing the secret continues from a cursor, also after a restart.
//
// `v1` cursors (issued before capture ordered the feed by transaction: [environment id, epoch,
// last seq, filter set]) are still accepted: their seq is a position of the events captured
// before that change, which the migration kept as (xid 0, seq), so they read on from there.
//
// Within a page: `<v2 cursor>.<xid>.<seq>` (see withinPage), the page's last cursor and an
// earlier place in the same page, so a page's 1000 edge cursors cost one MAC, not 1000.
import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from "node:crypto";

const VERSION = "v2";
/** Well above any real cursor (a filter set of every type is under 300 characters). */
const MAX_CURSOR_LENGTH = 1024;
const CURSOR_PATTERN =
  /^(v[12])\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})(?:\.(0|[1-9][0-9]{0,18})\.(0|[1-9][0-9]{0,18}))?$/;
const DECIMAL = /^(0|[1-9][0-9]{0,18})$/;

/**
 * A place in an environment's feed: events are ordered by (xid, seq), both decimal strings
 * (services/feed/capture.ts says why).
 */
export interface FeedPoint {
  xid: string;
  seq: string;
}

/** Before every event. */
export const FEED_START: FeedPoint = { xid: "0", seq: "0" };

/** Negative, zero or positive as `a` is before, at or after `b` in the feed. */
export function comparePoints(a: FeedPoint, b: FeedPoint): number {
  return compareDecimal(a.xid, b.xid) || compareDecimal(a.seq, b.seq);
}

/** Decimals without leading zeros compare by length, then by text (no BigInt per call). */
function compareDecimal(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Where a reader stands in one environment's feed, for one filter set: after `xid`/`seq`. */
export interface FeedPosition extends FeedPoint {
  environmentId: number;
  /**
   * The capture epoch (capture_started_at in microseconds, decimal; "" while not capturing).
   * A cursor of an earlier capture reads the current one from its start, so a revoke-all and
   * restart never makes an old cursor skip the fresh feed.
   */
  epoch: string;
  /** The normalised filter set (sorted, deduplicated); empty means every type. */
  eventTypes: readonly string[];
}

// The secret as a key object, made once: createHmac with a string key prepares the key on every
// call, three times the cost of the MAC itself (a Relay page signs 1000 edge cursors).
let cachedKey: { secret: string; key: KeyObject } | undefined;

function mac(secret: string, signed: string): Buffer {
  if (cachedKey?.secret !== secret) {
    cachedKey = { secret, key: createSecretKey(Buffer.from(secret, "utf8")) };
  }
  return createHmac("sha256", cachedKey.key).update(signed).digest();
}

export function encodeCursor(secret: string, position: FeedPosition): string {
  const payload = Buffer.from(
    JSON.stringify([
      position.environmentId,
      position.epoch,
      position.xid,
      position.seq,
      position.eventTypes,
    ]),
  ).toString("base64url");
  const signed = `${VERSION}.${payload}`;
  return `${signed}.${mac(secret, signed).toString("base64url")}`;
}

/**
 * The cursor of `point`, an event of the page whose last event `bound` (a cursor from
 * encodeCursor) is the cursor of: the bound with the point appended, so no MAC is computed. The
 * point is unsigned; decodeCursor accepts it only at or before the bound's own place, in the
 * bound's environment, epoch and filter set. Whatever a client writes there is thus a place it
 * had a cursor for, or one before it, which the same token could read anyway: it can reread,
 * never read ahead of what it was served.
 */
export function withinPage(bound: string, point: FeedPoint): string {
  return `${bound}.${point.xid}.${point.seq}`;
}

/** The position a cursor carries, or null for anything this instance's secret did not sign. */
export function decodeCursor(secret: string, cursor: string): FeedPosition | null {
  if (cursor.length > MAX_CURSOR_LENGTH) return null;
  const match = CURSOR_PATTERN.exec(cursor);
  if (!match) return null;
  const [, version, payload, presented, xid, seq] = match as unknown as [
    string,
    string,
    string,
    string,
    string | undefined,
    string | undefined,
  ];
  const expected = mac(secret, `${version}.${payload}`);
  const given = Buffer.from(presented, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  const bound = version === VERSION ? toPosition(value) : fromV1(value);
  if (!bound || xid === undefined || seq === undefined) return bound;
  // A place within a page: only v2 pages issue these, and never past their bound.
  if (version !== VERSION || comparePoints({ xid, seq }, bound) > 0) return null;
  return { ...bound, xid, seq };
}

function fromV1(value: unknown): FeedPosition | null {
  if (!Array.isArray(value) || value.length !== 4) return null;
  const [environmentId, epoch, seq, eventTypes] = value as unknown[];
  return toPosition([environmentId, epoch, "0", seq, eventTypes]);
}

// Signed payloads were written by encodeCursor, but a secret shared with an older or newer
// build is no reason to trust their shape.
function toPosition(value: unknown): FeedPosition | null {
  if (!Array.isArray(value) || value.length !== 5) return null;
  const [environmentId, epoch, xid, seq, eventTypes] = value as unknown[];
  if (typeof environmentId !== "number" || !Number.isSafeInteger(environmentId)) return null;
  if (typeof epoch !== "string" || (epoch !== "" && !DECIMAL.test(epoch))) return null;
  if (typeof xid !== "string" || !DECIMAL.test(xid)) return null;
  if (typeof seq !== "string" || !DECIMAL.test(seq)) return null;
  if (!Array.isArray(eventTypes) || !eventTypes.every((t) => typeof t === "string")) return null;
  return { environmentId, epoch, xid, seq, eventTypes: eventTypes as string[] };
}
