// The soak's summary: the figures, then one line per check with PASS or FAIL, then notes.
import type { SoakReport } from "./run.ts";

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) => `| ${r.map((cell, c) => cell.padEnd(widths[c]!)).join(" | ")} |`;
  const rule = `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`;
  return [line(rows[0]!), rule, ...rows.slice(1).map(line)].join("\n");
}

export function formatReport(report: SoakReport): string {
  const out = [
    table([["figure", "value"], ...report.counts.map(([k, v]) => [k, String(v)])]),
    "",
    table([
      ["check", "result", "detail"],
      ...report.checks.map((c) => [c.name, c.ok ? "PASS" : "FAIL", c.detail]),
    ]),
  ];
  if (report.notes.length) out.push("", "Notes:", ...report.notes.map((n) => `- ${n}`));
  // The failed checks again, last: a CI log often keeps only its tail, and the table may be
  // cut off above the notes.
  const failed = report.checks.filter((c) => !c.ok);
  if (failed.length) out.push("", "Failed:", ...failed.map((c) => `- ${c.name}: ${c.detail}`));
  out.push(
    "",
    `${report.ok ? "SOAK PASSED" : "SOAK FAILED"} (instance logs: ${report.logDir})`,
  );
  return out.join("\n");
}
