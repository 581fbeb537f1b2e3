// Two runs compared instance by instance: the mean difference of their scores with a paired, seeded
// bootstrap 95% interval, and a paired test (McNemar's exact test for 0/1 scores, the sign test otherwise).
// Pure: the caller reads the runs' records; docs/results.md defines every figure.

/** One run's scores per instance id; several scores (repeats) are averaged first. */
export type InstanceScores = ReadonlyMap<string, readonly number[]>;

export interface PairedTest {
  name: 'mcnemar' | 'sign';
  /** Instances where A is better (McNemar: A right, B wrong), and where B is. Ties are left out. */
  aBetter: number;
  bBetter: number;
  /** Two-sided exact p-value: twice the binomial(aBetter + bBetter, 1/2) tail of the smaller count, at most 1. */
  pValue: number;
}

export interface PairedComparison {
  /** Instances both runs scored, and those only one did (left out of every figure). */
  shared: number;
  onlyA: number;
  onlyB: number;
  /** Means over the shared instances. */
  meanA: number | null;
  meanB: number | null;
  /** meanB − meanA. */
  difference: number | null;
  /** Percentile bootstrap interval of the difference, 95%, over `resamples` resamples of the shared instances. */
  interval: [number, number] | null;
  test: PairedTest | null;
  /** With 0/1 scores: how the runs agree, instance by instance. */
  agreement?: { both: number; onlyA: number; onlyB: number; neither: number };
}

export const DEFAULT_RESAMPLES = 2000;
export const DEFAULT_SEED = 20261202;

const mean = (values: readonly number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;

/** mulberry32: a small, seeded 32-bit generator, so the same inputs always give the same interval. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** P(X <= k) for X ~ Binomial(n, 1/2), summed in log space so that large n neither overflows nor underflows. */
export function binomialHalfCdf(k: number, n: number): number {
  if (k < 0) return 0;
  if (k >= n) return 1;
  let logChoose = 0; // log C(n, 0)
  let total = 0;
  for (let i = 0; i <= k; i++) {
    if (i > 0) logChoose += Math.log(n - i + 1) - Math.log(i);
    total += Math.exp(logChoose - n * Math.LN2);
  }
  return Math.min(1, total);
}

/** Two-sided exact binomial test of `a` against `b` with p = 1/2 (McNemar's exact test, the sign test). */
export function twoSidedBinomialP(a: number, b: number): number {
  const n = a + b;
  if (n === 0) return 1;
  return Math.min(1, 2 * binomialHalfCdf(Math.min(a, b), n));
}

/** The value at quantile q of sorted values, linearly interpolated (R's type 7). */
export function quantile(sorted: readonly number[], q: number): number {
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low);
}

export function comparePaired(a: InstanceScores, b: InstanceScores, options: { resamples?: number; seed?: number } = {}): PairedComparison {
  const ids = [...a.keys()].filter((id) => b.has(id)).sort();
  const onlyA = [...a.keys()].filter((id) => !b.has(id)).length;
  const onlyB = [...b.keys()].filter((id) => !a.has(id)).length;
  const base = { shared: ids.length, onlyA, onlyB };
  if (ids.length === 0) return { ...base, meanA: null, meanB: null, difference: null, interval: null, test: null };

  const scoresA = ids.map((id) => mean(a.get(id)!));
  const scoresB = ids.map((id) => mean(b.get(id)!));
  const differences = ids.map((_, i) => scoresB[i]! - scoresA[i]!);
  const meanA = mean(scoresA);
  const meanB = mean(scoresB);

  const random = seededRandom(options.seed ?? DEFAULT_SEED);
  const resamples = options.resamples ?? DEFAULT_RESAMPLES;
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < differences.length; i++) sum += differences[Math.floor(random() * differences.length)]!;
    means[r] = sum / differences.length;
  }
  const sorted = [...means].sort((x, y) => x - y);

  const binary = [...scoresA, ...scoresB].every((score) => score === 0 || score === 1);
  const aBetter = differences.filter((d) => d < 0).length;
  const bBetter = differences.filter((d) => d > 0).length;
  const test: PairedTest = { name: binary ? 'mcnemar' : 'sign', aBetter, bBetter, pValue: twoSidedBinomialP(aBetter, bBetter) };
  return {
    ...base,
    meanA,
    meanB,
    difference: meanB - meanA,
    interval: [quantile(sorted, 0.025), quantile(sorted, 0.975)],
    test,
    ...(binary
      ? {
          agreement: {
            both: ids.filter((_, i) => scoresA[i] === 1 && scoresB[i] === 1).length,
            onlyA: aBetter,
            onlyB: bBetter,
            neither: ids.filter((_, i) => scoresA[i] === 0 && scoresB[i] === 0).length,
          },
        }
      : {}),
  };
}
