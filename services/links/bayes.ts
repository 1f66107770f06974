// The probability that each variant of a split is the best (CONTRACT.md, "Link rules, splits and
// passwords"): each variant's conversion rate (installs per view) has a Beta posterior from a
// uniform prior, Beta(1 + installs, 1 + views − installs), and the probability that a variant is
// best is the share of joint draws in which its rate is the highest. Monte Carlo with a seeded
// generator: the same figures give the same answer on every instance and every request.

/** mulberry32: a small seeded generator, uniform on [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal draw (Box–Muller). */
function normal(random: () => number): number {
  let u = 0;
  while (u === 0) u = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** A Gamma(shape, 1) draw (Marsaglia and Tsang; shape < 1 through the boost of shape + 1). */
export function gamma(shape: number, random: () => number): number {
  if (shape < 1) {
    return gamma(shape + 1, random) * Math.pow(random() || Number.MIN_VALUE, 1 / shape);
  }
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = normal(random);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = random();
    if (u < 1 - 0.0331 * x ** 4) return d * v;
    if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}

/** A Beta(a, b) draw. */
export function beta(a: number, b: number, random: () => number): number {
  const x = gamma(a, random);
  return x / (x + gamma(b, random));
}

export interface Arm {
  successes: number;
  trials: number;
}

export const DRAWS = 20_000;
const SEED = 0x5eed;

/**
 * For each arm, the probability that its rate is the highest, from Beta(1 + successes,
 * 1 + trials − successes) posteriors (successes beyond the trials count as the trials: an app
 * may report installs of visitors the host never saw). Ties go to none; the shares sum to 1.
 */
export function probabilityBest(arms: readonly Arm[], draws = DRAWS, seed = SEED): number[] {
  if (arms.length === 0) return [];
  const random = seededRandom(seed);
  const params = arms.map(({ successes, trials }) => {
    const s = Math.max(0, Math.min(successes, trials));
    return [1 + s, 1 + Math.max(0, trials - s)] as const;
  });
  const wins = new Array<number>(arms.length).fill(0);
  for (let n = 0; n < draws; n++) {
    let best = -1;
    let bestValue = -1;
    for (let i = 0; i < params.length; i++) {
      const value = beta(params[i]![0], params[i]![1], random);
      if (value > bestValue) {
        bestValue = value;
        best = i;
      }
    }
    wins[best]!++;
  }
  return wins.map((w) => w / draws);
}
