// The paired comparison of two runs (analysis/paired-comparison.ts) against values computed by hand: exact
// binomial tails, McNemar's and the sign test, the interpolated quantile, and the seeded bootstrap interval.

import { describe, expect, it } from 'vitest';
import { binomialHalfCdf, comparePaired, quantile, twoSidedBinomialP } from '../../analysis/paired-comparison.js';

const scores = (entries: Record<string, number[]>) => new Map(Object.entries(entries));

describe('exact binomial tails and p-values', () => {
  it('match hand-computed values', () => {
    expect(binomialHalfCdf(1, 3)).toBe(0.5); // (C(3,0) + C(3,1)) / 8
    expect(twoSidedBinomialP(1, 2)).toBe(1);
    expect(twoSidedBinomialP(0, 5)).toBeCloseTo(0.0625, 12); // 2 / 32
    expect(twoSidedBinomialP(2, 10)).toBeCloseTo((2 * (1 + 12 + 66)) / 4096, 12); // 0.038574...
    expect(twoSidedBinomialP(0, 0)).toBe(1);
  });

  it('stay finite and exact enough for thousands of discordant pairs', () => {
    expect(twoSidedBinomialP(500, 500)).toBe(1);
    // P(X <= 450) for n = 1000: a z of -3.16, about 8.2e-4 in the tail, so p about 1.6e-3.
    expect(twoSidedBinomialP(450, 550)).toBeGreaterThan(1.4e-3);
    expect(twoSidedBinomialP(450, 550)).toBeLessThan(1.9e-3);
  });
});

describe('quantile', () => {
  it('interpolates linearly between order statistics (type 7)', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([1, 2, 3, 4], 0.025)).toBeCloseTo(1.075, 12);
    expect(quantile([7], 0.975)).toBe(7);
  });
});

describe('comparePaired', () => {
  it('compares 0/1 scores with McNemar on the shared instances, and says what only one run has', () => {
    const a = scores({ a: [1], b: [1], c: [0], d: [0], e: [1] });
    const b = scores({ a: [1], b: [0], c: [1], d: [1], e: [1], f: [1] });
    const compared = comparePaired(a, b);
    expect(compared).toMatchObject({ shared: 5, onlyA: 0, onlyB: 1, test: { name: 'mcnemar', aBetter: 1, bBetter: 2, pValue: 1 } });
    expect(compared.meanA).toBeCloseTo(0.6, 12);
    expect(compared.meanB).toBeCloseTo(0.8, 12);
    expect(compared.difference).toBeCloseTo(0.2, 12);
    expect(compared.agreement).toEqual({ both: 2, onlyA: 1, onlyB: 2, neither: 0 });
    const [low, high] = compared.interval!;
    expect(low).toBeLessThanOrEqual(0.2);
    expect(high).toBeGreaterThanOrEqual(0.2);
  });

  it('averages repeats first, and then uses the sign test when scores are not all 0 or 1', () => {
    const compared = comparePaired(scores({ x: [1, 0], y: [1, 1], z: [0, 0] }), scores({ x: [1, 1], y: [1, 1], z: [0.5, 0.5] }));
    expect(compared.test).toEqual({ name: 'sign', aBetter: 0, bBetter: 2, pValue: 0.5 });
    expect(compared.difference).toBeCloseTo((0.5 + 0 + 0.5) / 3, 12);
    expect(compared.agreement).toBeUndefined();
  });

  it('gives a constant difference a zero-width interval, and the same interval for the same seed', () => {
    const a = scores(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`q${i}`, [0.25]])));
    const b = scores(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`q${i}`, [0.75]])));
    expect(comparePaired(a, b).interval).toEqual([0.5, 0.5]);
    const noisyB = scores(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`q${i}`, [i % 3 === 0 ? 1 : 0]])));
    expect(comparePaired(a, noisyB, { seed: 7 }).interval).toEqual(comparePaired(a, noisyB, { seed: 7 }).interval);
    const [low, high] = comparePaired(a, noisyB).interval!;
    // 14 of 40 are 1: the difference is 14/40 - 0.25 = 0.1; the interval holds it and is about ±0.15 wide.
    expect(low).toBeLessThan(0.1);
    expect(high).toBeGreaterThan(0.1);
    expect(high - low).toBeGreaterThan(0.2);
    expect(high - low).toBeLessThan(0.4);
  });

  it('has no figures when the runs share no instance', () => {
    expect(comparePaired(scores({ a: [1] }), scores({ b: [1] }))).toEqual({
      shared: 0,
      onlyA: 1,
      onlyB: 1,
      meanA: null,
      meanB: null,
      difference: null,
      interval: null,
      test: null,
    });
  });
});
