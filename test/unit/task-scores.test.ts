// Scores over repeats (runs/run-outcome.ts): per task the succeeded repeats' scores with mean and sample
// std (taskScores), and the spread of a repeated run's per-repeat means (repeatStd).

import { describe, expect, it } from 'vitest';
import { meanAndStd, repeatStd, taskScores } from '../../runs/run-outcome.js';
import type { JobResult, JobStatus } from '../../runs/run-spec.js';

function job(task: string, status: JobStatus, overall: number | undefined, repeat?: number): JobResult {
  return {
    jobId: `run.${task}${repeat === undefined ? '' : `.r${repeat}`}`,
    task,
    status,
    ...(overall === undefined ? {} : { result: { overall, raw_metrics: {} } }),
    ...(repeat === undefined ? {} : { repeat }),
    timings: { queuedAt: '', finishedAt: '', containerSeconds: 0 },
  };
}

describe('meanAndStd', () => {
  it('gives the mean and the sample (n-1) standard deviation', () => {
    const { mean, std } = meanAndStd([2, 4, 4, 4, 5, 5, 7, 9]);
    expect(mean).toBe(5);
    expect(std).toBeCloseTo(Math.sqrt(32 / 7), 12);
  });

  it('is std 0 for one value and null for none', () => {
    expect(meanAndStd([0.25])).toEqual({ mean: 0.25, std: 0 });
    expect(meanAndStd([])).toEqual({ mean: null, std: null });
  });
});

describe('taskScores', () => {
  it("lists each task's succeeded scores in repeat order, with every repeat counted", () => {
    const scores = taskScores([
      job('a', 'SUCCEEDED', 0.5, 1),
      job('a', 'SUCCEEDED', 1, 0),
      job('b', 'FAILED', undefined, 0),
      job('b', 'SUCCEEDED', 0.25, 1),
      job('c', 'SUCCEEDED', 0.3, 0),
    ]);
    expect(scores.map(({ task, scores, repeats, mean }) => ({ task, scores, repeats, mean }))).toEqual([
      { task: 'a', scores: [1, 0.5], repeats: 2, mean: 0.75 },
      { task: 'b', scores: [0.25], repeats: 2, mean: 0.25 },
      { task: 'c', scores: [0.3], repeats: 1, mean: 0.3 },
    ]);
    expect(scores[0]!.std).toBeCloseTo(Math.sqrt(0.125), 12);
    expect(scores.slice(1).map((s) => s.std)).toEqual([0, 0]);
  });

  it('has no mean for a task none of whose repeats succeeded, and ignores a result on a failed job', () => {
    expect(taskScores([job('a', 'TIMED_OUT', 0.9, 0), job('a', 'FAILED', undefined, 1)])).toEqual([
      { task: 'a', scores: [], repeats: 2, mean: null, std: null },
    ]);
  });

  it('reads a job without a repeat number as repeat 0 (a run without repeats)', () => {
    expect(taskScores([job('a', 'SUCCEEDED', 0.5), job('a', 'SUCCEEDED', 0.7, 1)])[0]!.scores).toEqual([0.5, 0.7]);
  });
});

describe('repeatStd', () => {
  it("is the sample std of each repeat's mean over its succeeded tasks", () => {
    // Repeat 0 means 0.5, repeat 1 means 1 (its failed task left out, not counted as 0).
    const jobs = [job('a', 'SUCCEEDED', 1, 0), job('b', 'SUCCEEDED', 0, 0), job('a', 'SUCCEEDED', 1, 1), job('b', 'FAILED', undefined, 1)];
    expect(repeatStd(jobs)).toBeCloseTo(Math.sqrt(0.125), 12);
  });

  it('is 0.2 for repeat means 0.2, 0.4 and 0.6', () => {
    expect(repeatStd([job('a', 'SUCCEEDED', 0.2, 0), job('a', 'SUCCEEDED', 0.4, 1), job('a', 'SUCCEEDED', 0.6, 2)])).toBeCloseTo(0.2, 12);
  });

  it('is null with fewer than two repeats that succeeded anything', () => {
    expect(repeatStd([job('a', 'SUCCEEDED', 0.5), job('b', 'SUCCEEDED', 1)])).toBeNull();
    expect(repeatStd([job('a', 'SUCCEEDED', 0.5, 0), job('a', 'FAILED', undefined, 1)])).toBeNull();
    expect(repeatStd([])).toBeNull();
  });
});
