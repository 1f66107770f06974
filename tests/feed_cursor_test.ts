// The cursor codec on its own: round trip, and null (never a throw) for anything not signed.
import assert from "node:assert/strict";
import { decodeCursor, encodeCursor, type FeedPosition } from "../services/feed_cursor.ts";

const SECRET = "cursor-test-secret-0123456789abcdefghijkl";
const position: FeedPosition = {
  environmentId: 7,
  epoch: "1767225600000000",
  eventTypes: ["install", "purchase"],
  seq: "9007199254740993",
};

Deno.test("feed cursors round-trip and are stable for one position", () => {
  const cursor = encodeCursor(SECRET, position);
  assert.match(cursor, /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  assert.equal(encodeCursor(SECRET, position), cursor);
  assert.deepEqual(decodeCursor(SECRET, cursor), position);
  const idle = { ...position, epoch: "", eventTypes: [], seq: "0" };
  assert.deepEqual(decodeCursor(SECRET, encodeCursor(SECRET, idle)), idle);
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
    "v1.!!!." + mac,
    "v1." + "A".repeat(2000) + "." + mac,
  ];
  for (const c of cases) assert.equal(decodeCursor(SECRET, c), null, c);
});
