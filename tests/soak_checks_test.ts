// The soak's checks (soak/checks.ts) on made-up records: each catches what it is there for.
import assert from "node:assert/strict";
import {
  dedupeDeliveries,
  maxInWindow,
  sequenceCheck,
  storedOnce,
  storedOnceOk,
  unjustifiedRefusals,
  viewLossBound,
} from "../soak/checks.ts";
import { defaultTerminateAt } from "../soak/run.ts";

Deno.test("soak checks: a sequence must be the feed exactly (missing, duplicate, reordered)", () => {
  const feed = ["a", "b", "c", "d"];
  assert.equal(sequenceCheck("r", ["a", "b", "c", "d"], feed).ok, true);
  const missing = sequenceCheck("r", ["a", "b", "d"], feed);
  assert.equal(missing.ok, false);
  assert.match(missing.detail, /first difference at #2 .*missing 1, duplicates 0/);
  const duplicate = sequenceCheck("r", ["a", "b", "b", "c", "d"], feed);
  assert.equal(duplicate.ok, false);
  assert.match(duplicate.detail, /duplicates 1/);
  assert.equal(sequenceCheck("r", ["a", "c", "b", "d"], feed).ok, false);
  assert.match(sequenceCheck("r", ["a", "b", "c", "d", "x"], feed).detail, /not in the feed 1/);
});

Deno.test("soak checks: deliveries are deduplicated by event id, a reused webhook-id must repeat its events", () => {
  const d = dedupeDeliveries([
    { webhookId: "m1", eventIds: ["a", "b"] },
    { webhookId: "m1", eventIds: ["a", "b"] }, // the takeover resends the batch in flight
    { webhookId: "m2", eventIds: ["c"] },
  ]);
  assert.deepEqual(d.ids, ["a", "b", "c"]);
  assert.equal(d.duplicateEvents, 2);
  assert.equal(d.repeatedBatches, 1);
  assert.equal(d.inconsistentBatches, 0);
  const bad = dedupeDeliveries([
    { webhookId: "m1", eventIds: ["a", "b"] },
    { webhookId: "m1", eventIds: ["a", "c"] },
  ]);
  assert.equal(bad.inconsistentBatches, 1);
  // Out of order stays out of order after deduplication: the sequence check then fails.
  assert.deepEqual(
    dedupeDeliveries([{ webhookId: "m1", eventIds: ["b"] }, { webhookId: "m2", eventIds: ["a"] }])
      .ids,
    ["b", "a"],
  );
});

Deno.test("soak checks: the sliding window count sees one read too many, however spread", () => {
  // 3 reads in (t - 60 s, t]: the window is half-open, so 60 s apart are in different windows.
  assert.equal(maxInWindow([0, 30_000, 59_999], 60_000), 3);
  assert.equal(maxInWindow([0, 30_000, 60_000], 60_000), 2);
  assert.equal(maxInWindow([60_000, 0, 30_000, 90_000, 119_999], 60_000), 3);
  assert.equal(maxInWindow([], 60_000), 0);
});

Deno.test("soak checks: a refusal is unjustified only if fewer than limit reads can be in its window", () => {
  const admitted = [1_000, 2_000, 3_000];
  // Limit 3, refused at about 10 s: all three reads are within 60 s.
  assert.equal(unjustifiedRefusals([{ sent: 10_000, received: 10_010 }], admitted, 3, 60_000), 0);
  // Refused at about 62.5 s: the read at 1 s and 2 s have left the window.
  assert.equal(unjustifiedRefusals([{ sent: 62_500, received: 62_510 }], admitted, 3, 60_000), 1);
  // A slow answer keeps the benefit of the doubt: sent at 60.5 s, the 1 s read may still count.
  assert.equal(unjustifiedRefusals([{ sent: 60_500, received: 70_000 }], admitted, 3, 60_000), 0);
});

Deno.test("soak checks: view loss is bounded by what the killed instance answered just before", () => {
  const answered = [
    { at: 900, instance: 0 },
    { at: 1_500, instance: 0 },
    { at: 1_900, instance: 1 },
    { at: 2_000, instance: 0 },
    { at: 2_500, instance: 0 }, // after the kill: answered by nobody killed
  ];
  assert.equal(viewLossBound(answered, [{ at: 2_000, instance: 0 }], 1_000), 2);
  assert.equal(viewLossBound(answered, [], 1_000), 0);
  // Killed 1.5 s after the database's connections were terminated: the views since then too.
  const outage = { at: 500, ms: 5_000 };
  assert.equal(viewLossBound(answered, [{ at: 2_000, instance: 0 }], 1_000, [outage]), 3);
  // Killed long after the outage: only the moment before the kill.
  assert.equal(
    viewLossBound(answered, [{ at: 2_000, instance: 0 }], 1_000, [{ ...outage, ms: 1_000 }]),
    2,
  );
  // Two outages, the kill within the second (a database node down since 800 ms): from there.
  assert.equal(
    viewLossBound(answered, [{ at: 2_000, instance: 0 }], 1_000, [
      { at: 100, ms: 1_000 },
      { at: 800, ms: 10_000 },
    ]),
    3,
  );
  // An outage that has not happened (no terminate step): nothing more.
  assert.equal(
    viewLossBound(answered, [{ at: 2_000, instance: 0 }], 1_000, [{ at: null, ms: 5_000 }]),
    2,
  );
});

Deno.test("soak checks: acknowledged ids once, unclear ones at most once, nothing else", () => {
  const acked = new Set(["a", "b"]);
  const unclear = new Set(["u"]);
  assert.equal(storedOnceOk(storedOnce(acked, unclear, ["a", "b"])), true);
  assert.equal(storedOnceOk(storedOnce(acked, unclear, ["a", "b", "u"])), true);
  assert.deepEqual(storedOnce(acked, unclear, ["a"]), {
    missing: 1,
    duplicated: 0,
    unknown: 0,
    unclearStored: 0,
  });
  assert.equal(storedOnce(acked, unclear, ["a", "b", "b"]).duplicated, 1);
  assert.equal(storedOnce(acked, unclear, ["a", "b", "u", "u"]).duplicated, 1);
  assert.equal(storedOnce(acked, unclear, ["a", "b", "z"]).unknown, 1);
});

Deno.test("soak: the connections are terminated between two kills, near the middle", () => {
  assert.equal(defaultTerminateAt(120, 30), 75);
  assert.equal(defaultTerminateAt(20, 7), 10.5);
  assert.equal(defaultTerminateAt(900, 30), 465);
  assert.equal(defaultTerminateAt(60, 0), 30);
});
