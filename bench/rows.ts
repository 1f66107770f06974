// A benchmark row and its outcome. A row is judged only on a valid measurement: a timeout, an
// unexpected answer or missing data makes it invalid (with the reason), whatever its figure
// says; rows without a target are "reported", never "met".

export type Outcome =
  | { kind: "met" }
  | { kind: "missed" }
  | { kind: "reported" }
  | { kind: "invalid"; reasons: string[] };

export interface Row {
  name: string;
  figure: string;
  target: string;
  outcome: Outcome;
}

/** Met or missed by `met`, unless the measurement had problems: then invalid. */
export function judge(met: boolean, problems: readonly string[]): Outcome {
  if (problems.length > 0) return { kind: "invalid", reasons: [...problems] };
  return met ? { kind: "met" } : { kind: "missed" };
}

/** A figure without a target: reported, unless the measurement had problems. */
export function report(problems: readonly string[]): Outcome {
  return problems.length > 0 ? { kind: "invalid", reasons: [...problems] } : { kind: "reported" };
}

/** A problem for each figure that is not a finite number (a parse that found nothing, 0/0). */
export function notFinite(figures: Record<string, number>): string[] {
  return Object.entries(figures)
    .filter(([, v]) => !Number.isFinite(v))
    .map(([k, v]) => `${k} is ${v}, not a measured number`);
}

/** The row for a scenario that threw before it produced its rows. */
export function failedScenario(scenario: string, error: unknown): Row {
  const message = error instanceof Error ? error.message : String(error);
  return {
    name: `${scenario} (scenario failed)`,
    figure: "none",
    target: "the scenario runs to its end",
    outcome: { kind: "invalid", reasons: [message.split("\n")[0]!.slice(0, 300)] },
  };
}

/** The table's last column. */
export function outcomeLabel(outcome: Outcome): string {
  switch (outcome.kind) {
    case "met":
      return "yes";
    case "missed":
      return "no";
    case "reported":
      return "reported";
    case "invalid":
      return `INVALID: ${outcome.reasons.join("; ")}`;
  }
}

export function renderTable(rows: readonly Row[]): string {
  // A "|" inside a cell would split it.
  const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ");
  return [
    "| benchmark | figure | target | met |",
    "|---|---|---|---|",
    ...rows.map((r) =>
      `| ${cell(r.name)} | ${cell(r.figure)} | ${cell(r.target)} | ${
        cell(outcomeLabel(r.outcome))
      } |`
    ),
  ].join("\n");
}

/**
 * The bench's exit status: 1 when a row is invalid (or there are no rows at all: nothing was
 * measured), else 2 when a target was missed, else 0.
 */
export function exitStatus(rows: readonly Row[]): 0 | 1 | 2 {
  if (rows.length === 0 || rows.some((r) => r.outcome.kind === "invalid")) return 1;
  if (rows.some((r) => r.outcome.kind === "missed")) return 2;
  return 0;
}
