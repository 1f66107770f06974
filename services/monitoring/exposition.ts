// Counters, gauges and histograms in Prometheus's text exposition format (version 0.0.4), kept
// in process memory and written out at each scrape.
//
// Written here rather than taken from prom-client (Apache-2.0, which runs under Deno without
// --allow-sys): its Histogram.observe hashes the label values on every call, even through a
// labelled child, and each request observes one; here a hot path keeps the series it observes
// into, or finds it by one Map lookup of a joined key (docs/SCALING.md has the measurements).
// This module is only the format: which metrics exist is services/monitoring/metrics.ts.

type Kind = "counter" | "gauge" | "histogram";

/** Label values, in the order of the family's label names. */
export type LabelValues = readonly string[];

interface Family {
  readonly name: string;
  readonly help: string;
  readonly kind: Kind;
  readonly labelNames: readonly string[];
  /** The family's lines (without HELP and TYPE), in the order its series were created. */
  lines(): string[];
}

/** The metrics one listener serves, in the order they were registered. */
export class Registry {
  #families: Family[] = [];
  #names = new Set<string>();

  register<F extends Family>(family: F): F {
    if (this.#names.has(family.name)) throw new Error(`metric ${family.name} registered twice`);
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(family.name)) {
      throw new Error(`metric name ${family.name} is not a valid Prometheus name`);
    }
    this.#names.add(family.name);
    this.#families.push(family);
    return family;
  }

  /** Every family as text: HELP, TYPE, then its series (a family without series still says what it is). */
  render(): string {
    let out = "";
    for (const f of this.#families) {
      out += `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.kind}\n`;
      for (const line of f.lines()) out += line + "\n";
    }
    return out;
  }
}

// "\u0001" cannot be part of a label value the service sets (route templates, methods, statuses,
// event types, numeric ids): a joined key is the values, unambiguously.
const SEPARATOR = "\u0001";

function keyOf(values: LabelValues): string {
  return values.length === 1 ? values[0]! : values.join(SEPARATOR);
}

function escapeHelp(s: string): string {
  return s.replaceAll("\\", "\\\\").replaceAll("\n", "\\n");
}

function escapeLabel(s: string): string {
  return s.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
}

/** `{a="x",b="y"}` for the names and values, with `extra` (a histogram's le) last; "" for none. */
function labelText(
  names: readonly string[],
  values: LabelValues,
  extra?: [string, string],
): string {
  const parts = names.map((n, i) => `${n}="${escapeLabel(values[i] ?? "")}"`);
  if (extra) parts.push(`${extra[0]}="${extra[1]}"`);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

function numberText(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

abstract class Scalars implements Family {
  abstract readonly kind: Kind;
  protected series = new Map<string, { values: LabelValues; value: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[] = [],
  ) {}

  protected slot(values: LabelValues): { values: LabelValues; value: number } {
    const key = keyOf(values);
    let s = this.series.get(key);
    if (!s) {
      s = { values: [...values], value: 0 };
      this.series.set(key, s);
    }
    return s;
  }

  /** Forgets the series whose label values `drop` says to (e.g. of a deleted destination). */
  removeWhere(drop: (values: LabelValues) => boolean): void {
    for (const [key, s] of this.series) if (drop(s.values)) this.series.delete(key);
  }

  lines(): string[] {
    return [...this.series.values()].map((s) =>
      `${this.name}${labelText(this.labelNames, s.values)} ${numberText(s.value)}`
    );
  }
}

/** A count that only goes up (its name ends in _total). */
export class Counter extends Scalars {
  readonly kind = "counter";

  inc(values: LabelValues = [], by = 1): void {
    this.slot(values).value += by;
  }

  /** Sets a count kept elsewhere (by the database, by the operating system). */
  setTotal(values: LabelValues, total: number): void {
    this.slot(values).value = total;
  }

  /** The series of these label values, to increment without looking it up again. */
  child(values: LabelValues = []): { inc(by?: number): void } {
    const s = this.slot(values);
    return {
      inc(by = 1) {
        s.value += by;
      },
    };
  }
}

/** A value that goes up and down, usually set when a scrape asks for it. */
export class Gauge extends Scalars {
  readonly kind = "gauge";

  set(values: LabelValues, value: number): void {
    this.slot(values).value = value;
  }

  /** Forgets every series: a scrape then sets those that exist now. */
  clear(): void {
    this.series.clear();
  }
}

interface HistogramSeries {
  values: LabelValues;
  /** counts[i]: observations ≤ bounds[i] but above the bound before (cumulated when written). */
  counts: Float64Array;
  sum: number;
  count: number;
}

/** Observations counted in buckets by upper bound, with their sum and count. */
export class Histogram implements Family {
  readonly kind = "histogram";
  #series = new Map<string, HistogramSeries>();
  readonly #bounds: Float64Array;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    bounds: readonly number[],
  ) {
    if (labelNames.includes("le")) throw new Error("a histogram cannot have a label named le");
    this.#bounds = Float64Array.from([...bounds].sort((a, b) => a - b));
  }

  /** Records `value` in the series of `values`, found by one lookup of their joined key. */
  observe(values: LabelValues, value: number): void {
    this.#record(this.#slot(values), value);
  }

  /** The series of these label values, to observe into without looking it up again. */
  child(values: LabelValues): { observe(value: number): void } {
    const s = this.#slot(values);
    return { observe: (value) => this.#record(s, value) };
  }

  #slot(values: LabelValues): HistogramSeries {
    const key = keyOf(values);
    let s = this.#series.get(key);
    if (!s) {
      s = {
        values: [...values],
        counts: new Float64Array(this.#bounds.length + 1),
        sum: 0,
        count: 0,
      };
      this.#series.set(key, s);
    }
    return s;
  }

  #record(s: HistogramSeries, value: number): void {
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  lines(): string[] {
    const out: string[] = [];
    for (const s of this.#series.values()) {
      let cumulated = 0;
      for (let i = 0; i <= this.#bounds.length; i++) {
        cumulated += s.counts[i]!;
        const le = i < this.#bounds.length ? numberText(this.#bounds[i]!) : "+Inf";
        out.push(
          `${this.name}_bucket${labelText(this.labelNames, s.values, ["le", le])} ${cumulated}`,
        );
      }
      const labels = labelText(this.labelNames, s.values);
      out.push(`${this.name}_sum${labels} ${numberText(s.sum)}`);
      out.push(`${this.name}_count${labels} ${s.count}`);
    }
    return out;
  }
}
