// The one CSV writer (services/csv_cells.ts): no text cell of any CSV the service writes runs
// as a formula in a spreadsheet (OWASP CSV injection: = + - @, tab, carriage return), and the
// links import reads every cell back to the exact text that was written. The links export and
// import go through it end to end in links_csv_test.ts and links_dashboard_test.ts.
import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { cellText, csvText, safeCell } from "../infra/csv_cells.ts";
import { analyticsCsv } from "../dashboard/analytics_routes.tsx";

const runsAsFormula = (cell: string) =>
  /^[=+\-@\t\r]/.test(cell) && !/^-?[0-9]+(\.[0-9]+)?$/.test(cell);

/** Every text of up to `n` characters over an alphabet of the characters that matter here. */
function* texts(n: number): Generator<string> {
  const alphabet = ["'", "=", "+", "-", "@", "\t", "\r", "1", ".", "a", " "];
  let level = [""];
  yield "";
  for (let i = 0; i < n; i++) {
    level = level.flatMap((t) => alphabet.map((c) => t + c));
    yield* level;
  }
}

Deno.test("safeCell: no text cell runs as a formula, and cellText undoes it for every text", () => {
  let count = 0;
  for (const text of texts(4)) {
    const cell = safeCell(text);
    assert.ok(!runsAsFormula(cell), JSON.stringify({ text, cell }));
    assert.equal(cellText(cell), text, JSON.stringify({ text, cell }));
    count++;
  }
  assert.equal(count, 1 + 11 + 121 + 1331 + 14641);
  assert.equal(
    safeCell('=HYPERLINK("https://evil.example")'),
    `'=HYPERLINK("https://evil.example")`,
  );
  assert.equal(safeCell("'=already"), "''=already");
  assert.equal(safeCell("'twas"), "'twas");
  assert.equal(safeCell("-5"), "-5");
  assert.equal(safeCell("-5 off"), "'-5 off");
});

Deno.test("csvText writes numbers and booleans as they are and every string through safeCell", () => {
  const text = csvText([["=a", -3, true, "-2.5", "@b,c", null]]);
  assert.deepEqual(parse(text), [["'=a", "-3", "1", "-2.5", "'@b,c", ""]]);
});

Deno.test("the analytics CSV: a group named like a formula is text, a negative share a number", () => {
  const form = {
    from: "2026-01-01",
    to: "2026-01-31",
    interval: "day",
    tz: "UTC",
    metrics: ["revenue"],
    filters: [],
    currency: "",
  };
  const answer = (groups: { key: string | null; totals: Record<string, number> }[]) => ({
    from: "2026-01-01T00:00:00Z",
    to: "2026-02-01T00:00:00Z",
    tz: "UTC",
    totals: { revenue: 100 },
    groups,
  });
  const csv = analyticsCsv(form, {
    series: { ...answer([]), series: [{ start: "2026-01-01T00:00:00Z", revenue: 100 }] },
    breakdowns: [{
      dimension: "campaign",
      label: "Campaigns",
      answer: answer([
        { key: '=HYPERLINK("http://evil.example")', totals: { revenue: 150 } },
        { key: "@refunds", totals: { revenue: -50 } },
        { key: null, totals: { revenue: 0 } },
      ]),
    }],
  } as never);
  const rows = parse(csv) as string[][];
  assert.deepEqual(rows.flat().filter(runsAsFormula), []);
  assert.deepEqual(rows.slice(-3), [
    ["campaign", '\'=HYPERLINK("http://evil.example")', "", "150", "1.5000"],
    ["campaign", "'@refunds", "", "-50", "-0.5000"],
    ["campaign", "", "", "0", "0.0000"],
  ]);
});
