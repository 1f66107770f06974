// The benchmark harness's judging, without wrk or a database: a row whose measurement failed
// (a timeout, an unexpected status, a GraphQL error body, missing data) is invalid and fails
// the run, whatever its figure; a figure without a target is "reported".
import assert from "node:assert/strict";
import { wrk } from "../bench/lib.ts";
import { DistinctReceipts, ReceiptLatencies } from "../bench/receipts.ts";
import {
  exitStatus,
  failedScenario,
  judge,
  notFinite,
  outcomeLabel,
  renderTable,
  report,
  type Row,
} from "../bench/rows.ts";
import { checkScript, parseWrkReport, REPORT_MARK } from "../bench/wrk_check.ts";

/** wrk's output as it prints it with bench/wrk_check.ts's done() line. */
function wrkOutput(report: Record<string, unknown>): string {
  return `Running 2s test @ http://127.0.0.1:40000/x
  2 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.20ms  300.00us   9.00ms   90.00%
    Req/Sec    12.00k     1.00k   14.00k    70.00%
  48000 requests in 2.00s, 10.00MB read
Requests/sec:  24000.00
Transfer/sec:      5.00MB

${REPORT_MARK}${
    JSON.stringify({
      requests: 48000,
      duration_us: 2_000_000,
      p50_us: 1100,
      p99_us: 4500,
      statuses: { "302": 48000 },
      bad_bodies: 0,
      connect: 0,
      read: 0,
      write: 0,
      timeout: 0,
      ...report,
    })
  }
`;
}

const row = (outcome: Row["outcome"]): Row => ({ name: "r", figure: "f", target: "t", outcome });

Deno.test("bench rows: a problem makes a row invalid even when its figure meets the target", () => {
  assert.deepEqual(judge(true, []), { kind: "met" });
  assert.deepEqual(judge(false, []), { kind: "missed" });
  const invalid = judge(true, ["3 of 60 events not received within 5000 ms"]);
  assert.equal(invalid.kind, "invalid");
  assert.equal(outcomeLabel(invalid), "INVALID: 3 of 60 events not received within 5000 ms");
  assert.deepEqual(notFinite({ p50: NaN, ratio: 1.2, rate: Infinity }), [
    "p50 is NaN, not a measured number",
    "rate is Infinity, not a measured number",
  ]);
});

Deno.test("bench rows: a figure without a target prints reported, never yes", () => {
  assert.equal(outcomeLabel(report([])), "reported");
  assert.equal(report(["0 events after the migration"]).kind, "invalid");
  const table = renderTable([
    { name: "cost", figure: "CPU 12 ms | RSS 80 MiB", target: "none", outcome: report([]) },
  ]);
  assert.equal(
    table.split("\n")[2],
    "| cost | CPU 12 ms \\| RSS 80 MiB | none | reported |",
  );
});

Deno.test("bench rows: exit status 1 when a row is invalid, 2 when one missed, else 0", () => {
  assert.equal(exitStatus([row({ kind: "met" }), row({ kind: "reported" })]), 0);
  assert.equal(exitStatus([row({ kind: "met" }), row({ kind: "missed" })]), 2);
  assert.equal(
    exitStatus([row({ kind: "missed" }), row({ kind: "invalid", reasons: ["timeout"] })]),
    1,
  );
  assert.equal(exitStatus([failedScenario("delivery", new Error("wrk failed: x\nmore"))]), 1);
  assert.equal(
    outcomeLabel(failedScenario("delivery", new Error("wrk failed: x\nmore")).outcome),
    "INVALID: wrk failed: x",
  );
  // Nothing measured is not a success.
  assert.equal(exitStatus([]), 1);
});

Deno.test("bench rows: a send whose receipt never came is a timeout, not a latency", () => {
  const latencies = new ReceiptLatencies();
  for (let i = 0; i < 9; i++) latencies.record(1000 * i, 1000 * i + 40 + i);
  // The tenth event stalls: no receipt of its own within the wait.
  latencies.record(9000, undefined);
  const summary = latencies.summary(5000);
  assert.equal(summary.samples, 9);
  assert.equal(summary.timeouts, 1);
  assert.equal(summary.p50, 44);
  assert.ok(summary.p50 >= 0 && summary.p99 >= 0);
  assert.deepEqual(summary.problems, ["1 of 10 events not received within 5000 ms"]);
  assert.equal(judge(summary.p50 < 250, summary.problems).kind, "invalid");

  // A receipt timed before its send (an earlier event's) is refused too.
  const early = new ReceiptLatencies();
  early.record(500, 400);
  assert.deepEqual(early.summary(5000).problems, ["1 receipts timed before their send"]);
  assert.ok(Number.isNaN(early.summary(5000).p50));

  const all = new ReceiptLatencies();
  all.record(0, 120);
  all.record(10, 30);
  assert.deepEqual(all.summary(5000).problems, []);
});

Deno.test("bench rows: a batch delivered again is counted once", () => {
  const received = new DistinctReceipts();
  const batch = ["evt_1", "evt_2", "evt_3"];
  for (const id of batch) received.add(id, 100);
  // The receiver's 2xx was late: the same batch again.
  for (const id of batch) assert.equal(received.add(id, 900), false);
  assert.equal(received.count, 3);
  assert.equal(received.duplicates, 3);
  assert.equal(received.lastNewAt, 100);
  assert.equal(received.add("evt_4", 1000), true);
  assert.equal(received.lastNewAt, 1000);
});

Deno.test("bench rows: wrk answers are judged by their status, 3xx included", () => {
  // Every answer the 302 a redirect row times.
  const redirects = parseWrkReport(wrkOutput({}), { status: 302 });
  assert.deepEqual(redirects.problems, []);
  assert.equal(redirects.requests, 48000);
  assert.equal(redirects.rps, 24000);
  assert.equal(redirects.p50ms, 1.1);
  assert.equal(redirects.p99ms, 4.5);
  assert.equal(redirects.errors, 0);

  // A row timing 304s that got 200s (wrk alone counts neither as an error).
  const notModified = parseWrkReport(
    wrkOutput({ statuses: { "304": 47000, "200": 1000 } }),
    { status: 304 },
  );
  assert.deepEqual(notModified.problems, ["1000 of 48000 answers were not 304 (1000× 200)"]);
  assert.equal(notModified.errors, 1000);

  // A 200 row whose answers were redirects.
  assert.equal(parseWrkReport(wrkOutput({}), { status: 200 }).problems.length, 1);
});

Deno.test("bench rows: GraphQL errors with status 200 make the run invalid", () => {
  const expect = {
    status: 200,
    bodyPrefix: '{"data":{"link":{',
    bodyExcludes: ['"errors":'],
  };
  const r = parseWrkReport(wrkOutput({ statuses: { "200": 48000 }, bad_bodies: 48000 }), expect);
  assert.deepEqual(r.problems, [
    '48000 of 48000 200 answers not the expected body (starting {"data":{"link":{, without "errors":)',
  ]);
  assert.equal(r.errors, 48000);
  // The script wrk runs checks exactly that, in Lua string escapes.
  const lua = checkScript(expect);
  assert.match(lua, /local bench_expect_status = 200\n/);
  assert.ok(lua.includes('"\\123\\034data\\034\\058\\123\\034link\\034\\058\\123"'));
  assert.ok(lua.includes('{ "\\034errors\\034\\058" }'));
});

Deno.test("bench rows: timeouts, socket errors and a missing report are problems", () => {
  const r = parseWrkReport(
    wrkOutput({ statuses: { "200": 48000 }, timeout: 7, read: 2, connect: 1 }),
    { status: 200 },
  );
  assert.deepEqual(r.problems, ["7 requests timed out", "socket errors: connect 1, read 2"]);
  assert.equal(r.errors, 10);

  const none = parseWrkReport(wrkOutput({ requests: 0, statuses: {} }), { status: 200 });
  assert.deepEqual(none.problems, ["no request completed"]);
  assert.ok(Number.isNaN(none.p50ms));

  const missing = parseWrkReport("Running 2s test @ http://127.0.0.1:1/\n", { status: 200 });
  assert.deepEqual(missing.problems, ["wrk printed no report of its answers"]);
  assert.ok(Number.isNaN(missing.rps));
});

Deno.test("bench rows: a run's own script may not replace the checking hooks", async () => {
  await assert.rejects(
    () =>
      wrk("http://127.0.0.1:1/", {
        connections: 1,
        seconds: 1,
        lua: "function response(status) end",
      }),
    /must not define setup, init, response or done/,
  );
});
