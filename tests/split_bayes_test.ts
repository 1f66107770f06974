// The probability that each split variant is best (services/links/bayes.ts), against cases
// whose answer is known: Evan Miller's closed form for two Beta posteriors, symmetry, and the
// moments of the Beta draws themselves.
import assert from "node:assert/strict";
import { beta, probabilityBest, seededRandom } from "../services/links/bayes.ts";

/** ln Γ(x), Lanczos (g = 7, n = 9): plenty for the test's figures. */
function lnGamma(x: number): number {
  const c = [
    0.99999999999980993,
    676.5203681218851,
    -1259.1392167224028,
    771.32342877765313,
    -176.61502916214059,
    12.507343278686905,
    -0.13857109526572012,
    9.9843695780195716e-6,
    1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  x -= 1;
  let a = c[0]!;
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}
const lnBeta = (a: number, b: number) => lnGamma(a) + lnGamma(b) - lnGamma(a + b);

/** P(B > A) for A ~ Beta(aA, bA), B ~ Beta(aB, bB), aB a whole number (Evan Miller). */
function probabilityBBeatsA(aA: number, bA: number, aB: number, bB: number): number {
  let total = 0;
  for (let i = 0; i < aB; i++) {
    total += Math.exp(
      lnBeta(aA + i, bA + bB) - Math.log(bB + i) - lnBeta(1 + i, bB) - lnBeta(aA, bA),
    );
  }
  return total;
}

Deno.test("two variants: the Monte Carlo answer is within 0.01 of the closed form", () => {
  const cases: [number, number, number, number][] = [
    // [installs A, views A, installs B, views B]
    [20, 100, 30, 100],
    [5, 50, 4, 60],
    [120, 1000, 135, 1000],
    [0, 10, 1, 10],
    [3, 3, 0, 0],
  ];
  for (const [sA, nA, sB, nB] of cases) {
    const exact = probabilityBBeatsA(1 + sA, 1 + nA - sA, 1 + sB, 1 + nB - sB);
    const [pA, pB] = probabilityBest([
      { successes: sA, trials: nA },
      { successes: sB, trials: nB },
    ]) as [number, number];
    assert.ok(Math.abs(pB - exact) < 0.01, `${[sA, nA, sB, nB]}: ${pB} vs ${exact}`);
    assert.ok(Math.abs(pA + pB - 1) < 1e-12);
  }
});

Deno.test("symmetric and extreme cases", () => {
  const none = probabilityBest([{ successes: 0, trials: 0 }, { successes: 0, trials: 0 }, {
    successes: 0,
    trials: 0,
  }]);
  for (const p of none) assert.ok(Math.abs(p - 1 / 3) < 0.015, String(none));
  const same = probabilityBest([{ successes: 50, trials: 500 }, { successes: 50, trials: 500 }]);
  assert.ok(Math.abs(same[0]! - 0.5) < 0.015);
  const clear = probabilityBest([
    { successes: 10, trials: 1000 },
    { successes: 100, trials: 1000 },
    { successes: 12, trials: 1000 },
  ]);
  assert.ok(clear[1]! > 0.999);
  // Installs the host never saw as views count as at most the views.
  assert.deepEqual(
    probabilityBest([{ successes: 9, trials: 3 }, { successes: 3, trials: 3 }]),
    probabilityBest([{ successes: 3, trials: 3 }, { successes: 3, trials: 3 }]),
  );
  // Seeded: the same figures, the same answer.
  assert.deepEqual(
    probabilityBest([{ successes: 7, trials: 40 }, { successes: 9, trials: 41 }]),
    probabilityBest([{ successes: 7, trials: 40 }, { successes: 9, trials: 41 }]),
  );
});

Deno.test("Beta draws have the distribution's mean and variance", () => {
  const random = seededRandom(42);
  for (const [a, b] of [[1, 1], [2, 8], [30, 70], [0.5, 0.5]] as const) {
    const n = 50_000;
    let sum = 0;
    let squares = 0;
    for (let i = 0; i < n; i++) {
      const x = beta(a, b, random);
      assert.ok(x >= 0 && x <= 1);
      sum += x;
      squares += x * x;
    }
    const mean = sum / n;
    const variance = squares / n - mean * mean;
    const expectedMean = a / (a + b);
    const expectedVariance = (a * b) / ((a + b) ** 2 * (a + b + 1));
    assert.ok(Math.abs(mean - expectedMean) < 0.005, `${a},${b}: mean ${mean}`);
    assert.ok(Math.abs(variance - expectedVariance) < 0.003, `${a},${b}: variance ${variance}`);
  }
});
