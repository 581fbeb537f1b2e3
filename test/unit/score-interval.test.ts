// A score's n and 95% interval (runs/score-interval.ts), against values computed by hand, and as the run
// tally computes them from its jobs' records summaries.

import { describe, expect, it } from 'vitest';
import type { JobResult } from '../../runs/run-spec.js';
import { addJobs, emptyTally, tallyOutcome } from '../../runs/run-tally.js';
import { formatScoreStats, parseScoreStats, scoreStats, t975, wilsonInterval } from '../../runs/score-interval.js';

describe('wilsonInterval', () => {
  it('is the Wilson score interval at 95%: 32 of 40 gives [0.6524, 0.8950]', () => {
    // p = 0.8, z² / n = 3.8415/40; centre (0.8 + 0.048019) / 1.096038 = 0.773714, half 0.121287.
    const [low, high] = wilsonInterval(32, 40);
    expect(low).toBeCloseTo(0.652427, 6);
    expect(high).toBeCloseTo(0.895, 6);
  });

  it('stays inside [0, 1] at the edges: 0 of 10 gives [0, 0.2775], 10 of 10 [0.7225, 1]', () => {
    expect(wilsonInterval(0, 10)[0]).toBe(0);
    expect(wilsonInterval(0, 10)[1]).toBeCloseTo(0.277533, 6);
    expect(wilsonInterval(10, 10)[0]).toBeCloseTo(0.722467, 6);
    expect(wilsonInterval(10, 10)[1]).toBeCloseTo(1, 12);
  });
});

describe('scoreStats', () => {
  it('with 0/1 per-instance scores and one repeat: Wilson over the instances, n the instances', () => {
    const stats = scoreStats({ overall: 0.8, scoredJobs: 2, repeatMeans: [0.8], instances: { n: 40, sum: 32, squares: 32 } });
    expect(stats.n).toBe(40);
    expect(stats.method).toBe('wilson');
    expect(stats.low).toBeCloseTo(0.652427, 6);
    expect(stats.high).toBeCloseTo(0.895, 6);
  });

  it('with other per-instance scores: mean ± 1.96 s/√n (scores 1, 0.5, 0.5, 0: s² = 1/6, [0.0999, 0.9001])', () => {
    const stats = scoreStats({ overall: 0.5, scoredJobs: 1, repeatMeans: [0.5], instances: { n: 4, sum: 2, squares: 1.5 } });
    expect(stats).toMatchObject({ n: 4, method: 'normal' });
    expect(stats.low).toBeCloseTo(0.099924, 6);
    expect(stats.high).toBeCloseTo(0.900076, 6);
  });

  it('with repeats: the score ± t(0.975, R-1) s / √R over the repeat means (0.4, 0.5, 0.6: t 4.303, [0.2516, 0.7484])', () => {
    const stats = scoreStats({ overall: 0.5, scoredJobs: 6, repeatMeans: [0.4, 0.5, 0.6], instances: { n: 120, sum: 60, squares: 60 } });
    expect(stats).toMatchObject({ n: 120, method: 'repeats' });
    expect(stats.low).toBeCloseTo(0.251566, 6);
    expect(stats.high).toBeCloseTo(0.748434, 6);
  });

  it('without records: n is the scored jobs and there is no interval; no score, no interval', () => {
    expect(scoreStats({ overall: 0.5, scoredJobs: 3, repeatMeans: [0.5] })).toEqual({ n: 3 });
    expect(scoreStats({ overall: null, scoredJobs: 0, repeatMeans: [] })).toEqual({ n: 0 });
    expect(scoreStats({ overall: 1, scoredJobs: 1, repeatMeans: [1], instances: { n: 1, sum: 1, squares: 1 } })).toEqual({ n: 1 });
  });

  it('knows t(0.975) for small degrees of freedom and the normal quantile beyond 30', () => {
    expect([t975(1), t975(2), t975(9), t975(30), t975(31)]).toEqual([12.706, 4.303, 2.262, 2.042, 1.959963984540054]);
  });

  it('reads back the search attribute text it writes', () => {
    const stats = { n: 40, low: 0.652427, high: 0.895, method: 'wilson' as const };
    expect(formatScoreStats(stats)).toBe('n=40;low=0.652427;high=0.895000;by=wilson');
    expect(parseScoreStats(formatScoreStats(stats))).toEqual(stats);
    expect(formatScoreStats({ n: 3 })).toBe('n=3');
    expect(parseScoreStats('n=3')).toEqual({ n: 3 });
    expect(parseScoreStats('garbage')).toBeUndefined();
    expect(parseScoreStats(undefined)).toBeUndefined();
  });
});

describe('the run tally', () => {
  const job = (task: string, correct: number, count: number, squares?: number): JobResult => ({
    jobId: `run.${task}`,
    task,
    status: 'SUCCEEDED',
    result: { overall: correct / count, raw_metrics: {} },
    records: {
      count,
      badLines: 0,
      badLineExamples: [],
      meanScore: correct / count,
      ...(squares !== undefined ? { scoreSquares: squares } : {}),
      promptTokens: { total: 0, missing: count },
      completionTokens: { total: 0, missing: count },
      cost: { total: 0, missing: count },
    },
    timings: { queuedAt: '', finishedAt: '', containerSeconds: 0 },
  });

  it("sums the jobs' records: arith's two tasks of 20 at 16 right each are 32 of 40, Wilson [0.6524, 0.8950]", () => {
    const { scoreStats: stats, overall } = tallyOutcome(addJobs(emptyTally(), [job('addition', 16, 20, 16), job('multiplication', 16, 20, 16)]), false, false);
    expect(overall).toBe(0.8);
    expect(stats).toMatchObject({ n: 40, method: 'wilson' });
    expect(stats.low).toBeCloseTo(0.652427, 6);
  });

  it('has no interval once a scored job brought a summary without squares (written before they were kept)', () => {
    expect(tallyOutcome(addJobs(emptyTally(), [job('a', 16, 20, 16), job('b', 16, 20)]), false, false).scoreStats).toEqual({ n: 2 });
  });
});
