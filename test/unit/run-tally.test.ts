// The tally a batched run carries across continue-as-new (runs/run-tally.ts) gives the same figures as
// the per-job functions over every job at once, however the jobs are split into batches.

import { describe, expect, it } from 'vitest';
import { meanOverall, repeatStd, runStatus, runUsage, taskScores } from '../../runs/run-outcome.js';
import type { JobResult } from '../../runs/run-spec.js';
import { addJobs, addRepeatCounts, addUnstarted, emptyTally, tallyOutcome } from '../../runs/run-tally.js';
import { emptyCounters, record } from '../../runs/usage.js';

function job(index: number, task: string, repeat: number, overall: number | null, tokens = 0): JobResult {
  const counters = emptyCounters();
  if (tokens)
    record(counters, { status: 200, latencyMs: 10, promptTokens: tokens, completionTokens: 1, cost: tokens / 1e6, retries: 0, throttled: 0, queued: false });
  return {
    jobId: `run.${index}-${task}.r${repeat}`,
    task,
    repeat,
    status: overall === null ? 'FAILED' : 'SUCCEEDED',
    ...(overall === null ? { reason: 'NON_ZERO_EXIT' as const } : { result: { overall, raw_metrics: {} } }),
    ...(tokens ? { usage: { model: { requests: 1 } as never, counters: { model: counters } } } : {}),
    timings: { queuedAt: '', finishedAt: '', containerSeconds: 0 },
  };
}

// Scores chosen so that float sums depend on their order: the tally must add in job order.
const jobs: JobResult[] = [0, 1, 2].flatMap((repeat) =>
  ['a', 'b', 'c'].map((task, i) => job(i, task, repeat, task === 'c' && repeat === 1 ? null : 0.1 * (i + 1) + 0.07 * repeat, 100 + i)),
);

describe('a run tally', () => {
  it.each([1, 2, 4, 9])('over batches of %i equals the figures of every job at once', (size) => {
    let tally = emptyTally();
    for (let first = 0; first < jobs.length; first += size) tally = JSON.parse(JSON.stringify(addJobs(tally, jobs.slice(first, first + size))));
    const outcome = tallyOutcome(tally, false, false);
    expect(outcome.status).toBe(runStatus(jobs, false));
    expect(outcome.overall).toBe(meanOverall(jobs));
    expect(outcome.overallStd).toBe(repeatStd(jobs));
    expect(outcome.tasks).toEqual(taskScores(jobs));
    expect(outcome.usage).toEqual(runUsage(jobs));
  });

  it('counts jobs a cancelled run never started as cancelled, and the run as CANCELLED', () => {
    const tally = addUnstarted(addJobs(emptyTally(), jobs.slice(0, 2)), 7);
    expect(tally.jobs).toBe(9);
    expect(tally.statuses).toEqual({ SUCCEEDED: 2, FAILED: 0, TIMED_OUT: 0, CANCELLED: 7 });
    expect(tallyOutcome(tally, true, false).status).toBe('CANCELLED');
  });

  it('adds pass@k counts over batches and hosts, and gives pass@k only when every repeat was read', () => {
    let tally = addJobs(emptyTally(), jobs);
    tally = addRepeatCounts(tally, [{ a: { jobsRead: 2, jobsUnread: 0, instances: { '0': [2, 1] } } }, undefined]);
    tally = addRepeatCounts(tally, [
      { a: { jobsRead: 1, jobsUnread: 0, instances: { '0': [1, 1] } }, b: { jobsRead: 2, jobsUnread: 0, instances: { '0': [2, 2] } } },
    ]);
    const tasks = tallyOutcome(tally, false, true).tasks;
    // a: 3 repeats read, instance 0 passed twice: pass@1 = 2/3.
    expect(tasks.find((t) => t.task === 'a')!.passAtK!['pass@1']).toBeCloseTo(2 / 3, 12);
    // b: only 2 of its 3 repeats were read.
    expect(tasks.find((t) => t.task === 'b')!.passAtK).toBeUndefined();
  });
});
