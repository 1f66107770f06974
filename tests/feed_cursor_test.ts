// The cursor codec on its own: round trip, and null (never a throw) for anything not signed.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import {
  decodeCursor,
  encodeCursor,
  type FeedPosition,
  withinPage,
} from "../services/feed/cursor.ts";

const SECRET = "cursor-test-secret-0123456789abcdefghijkl";
const position: FeedPosition = {
  environmentId: 7,
  epoch: "1767225600000000",
  eventTypes: ["install", "purchase"],
  xid: "4294967301",
  seq: "9007199254740993",
};

/** A cursor as builds before the (xid, seq) order issued it: `v1`, a seq and no xid. */
function v1Cursor(secret: string, value: unknown[]): string {
  const signed = `v1.${Buffer.from(JSON.stringify(value)).toString("base64url")}`;
  return `${signed}.${createHmac("sha256", secret).update(signed).digest("base64url")}`;
}

Deno.test("feed cursors round-trip and are stable for one position", () => {
  const cursor = encodeCursor(SECRET, position);
  assert.match(cursor, /^v2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  assert.equal(encodeCursor(SECRET, position), cursor);
  assert.deepEqual(decodeCursor(SECRET, cursor), position);
  const idle = { ...position, epoch: "", eventTypes: [], xid: "0", seq: "0" };
  assert.deepEqual(decodeCursor(SECRET, encodeCursor(SECRET, idle)), idle);
});

Deno.test("v1 cursors still decode, as the same seq of the events captured before xid 0", () => {
  const v1 = v1Cursor(SECRET, [7, "1767225600000000", "41", ["install"]]);
  assert.deepEqual(decodeCursor(SECRET, v1), {
    environmentId: 7,
    epoch: "1767225600000000",
    xid: "0",
    seq: "41",
    eventTypes: ["install"],
  });
  // The version is signed: a v2 payload under a v1 prefix (or the reverse) does not verify.
  const v2 = encodeCursor(SECRET, position);
  assert.equal(decodeCursor(SECRET, v2.replace(/^v2/, "v1")), null);
  assert.equal(decodeCursor(SECRET, v1.replace(/^v1/, "v2")), null);
  // Each version's payload has its own shape.
  assert.equal(decodeCursor(SECRET, v1Cursor(SECRET, [7, "1", "0", "41", []])), null);
});

Deno.test("feed cursors decode to null when edited, cut, re-signed or malformed", () => {
  const cursor = encodeCursor(SECRET, position);
  const [, payload, mac] = cursor.split(".") as [string, string, string];
  const sign = (value: unknown) => {
    const body = Buffer.from(JSON.stringify(value)).toString("base64url");
    return encodeCursor(SECRET, position).replace(payload, body);
  };
  const cases = [
    "",
    "v1",
    cursor.slice(0, -1),
    cursor.slice(1),
    cursor.toUpperCase(),
    `v1.${payload}.${mac.slice(0, -2)}AA`,
    encodeCursor("another-secret-0123456789abcdefghijklmnop", position),
    sign([7, "1", "2", []]),
    sign([7, "1", "2", "x", []]),
    sign([7, "1", "-1", "2", []]),
    "v1.!!!." + mac,
    "v1." + "A".repeat(2000) + "." + mac,
  ];
  for (const c of cases) assert.equal(decodeCursor(SECRET, c), null, c);
});

Deno.test("a place within a page decodes at or before its page's bound, never after it", () => {
  const bound = encodeCursor(SECRET, position);
  const earlier = { xid: "4294967301", seq: "9007199254740990" };
  const edge = withinPage(bound, earlier);
  assert.match(edge, /^v2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}\.4294967301\.9007199254740990$/);
  assert.deepEqual(decodeCursor(SECRET, edge), { ...position, ...earlier });
  // An earlier transaction, and the bound's own place, are within it too.
  assert.deepEqual(decodeCursor(SECRET, withinPage(bound, { xid: "0", seq: "0" })), {
    ...position,
    xid: "0",
    seq: "0",
  });
  assert.deepEqual(decodeCursor(SECRET, withinPage(bound, position)), position);
  // Past the bound, under another secret, on a v1 bound, or not decimal: refused.
  const refused = [
    withinPage(bound, { xid: "4294967301", seq: "9007199254740994" }),
    withinPage(bound, { xid: "4294967302", seq: "0" }),
    withinPage(encodeCursor("another-secret-0123456789abcdefghijklmnop", position), earlier),
    withinPage(v1Cursor(SECRET, [7, "1", "41", []]), { xid: "0", seq: "40" }),
    `${bound}.01.2`,
    `${bound}.1.-2`,
    `${bound}.1`,
    `${bound}.1.2.3`,
  ];
  for (const c of refused) assert.equal(decodeCursor(SECRET, c), null, c);
});
