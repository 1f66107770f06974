// The text format of services/monitoring/exposition.ts: escaping, cumulated buckets, families
// without series, and series removed.
import assert from "node:assert/strict";
import { Counter, Gauge, Histogram, Registry } from "../services/monitoring/exposition.ts";

Deno.test("exposition: HELP, TYPE, escaped label values, cumulated buckets with +Inf, sum and count", () => {
  const registry = new Registry();
  const c = registry.register(new Counter("x_total", "a \\ help\nwith a newline", ["v"]));
  const h = registry.register(new Histogram("y_seconds", "latency", ["route"], [0.1, 0.5]));
  const g = registry.register(new Gauge("z", "empty"));
  c.inc(['a "quoted" \\ value\nover two lines']);
  c.child(["b"]).inc(2);
  for (const v of [0.05, 0.1, 0.3, 0.7]) h.observe(["/:id"], v);
  assert.equal(
    registry.render(),
    [
      "# HELP x_total a \\\\ help\\nwith a newline",
      "# TYPE x_total counter",
      'x_total{v="a \\"quoted\\" \\\\ value\\nover two lines"} 1',
      'x_total{v="b"} 2',
      "# HELP y_seconds latency",
      "# TYPE y_seconds histogram",
      'y_seconds_bucket{route="/:id",le="0.1"} 2',
      'y_seconds_bucket{route="/:id",le="0.5"} 3',
      'y_seconds_bucket{route="/:id",le="+Inf"} 4',
      'y_seconds_sum{route="/:id"} 1.15',
      'y_seconds_count{route="/:id"} 4',
      "# HELP z empty",
      "# TYPE z gauge",
      "",
    ].join("\n"),
  );
  g.set([], 3);
  c.removeWhere(([v]) => v === "b");
  c.setTotal(["c"], 7);
  const text = registry.render();
  assert.match(text, /^z 3$/m);
  assert.doesNotMatch(text, /v="b"/);
  assert.match(text, /^x_total\{v="c"\} 7$/m);
});

Deno.test("exposition: a name registered twice, an invalid name and a label named le are refused", () => {
  const registry = new Registry();
  registry.register(new Gauge("a", "x"));
  assert.throws(() => registry.register(new Gauge("a", "x")), /registered twice/);
  assert.throws(() => registry.register(new Gauge("a-b", "x")), /not a valid Prometheus name/);
  assert.throws(() => new Histogram("h", "x", ["le"], [1]), /label named le/);
});
