// Pure aggregation of job results into a run's status, score and progress counts.

import type { JobResult, JobState, JobStatus, RunProgress, RunResult, RunStatus } from './run-spec.js';
import { emptyCounters, mergeCounters, summarizeUsage } from './usage.js';

export function runStatus(jobs: ReadonlyArray<Pick<JobResult, 'status'>>, cancelled: boolean): RunStatus {
  if (cancelled) return 'CANCELLED';
  const succeeded = jobs.filter((j) => j.status === 'SUCCEEDED').length;
  if (jobs.length > 0 && succeeded === jobs.length) return 'COMPLETED';
  return succeeded > 0 ? 'PARTIAL' : 'FAILED';
}

/** Mean `overall` of the succeeded jobs; failed jobs are reported, never averaged in as zero. */
export function meanOverall(jobs: ReadonlyArray<JobResult>): number | null {
  const scores = jobs.filter((j) => j.status === 'SUCCEEDED' && j.result).map((j) => j.result!.overall);
  if (scores.length === 0) return null;
  return scores.reduce((a, b) => a + b, 0) / scores.length;
}

/** Usage over all jobs that went through the gateway; undefined when none did. */
export function runUsage(jobs: ReadonlyArray<JobResult>): RunResult['usage'] {
  const metered = jobs.filter((j) => j.usage);
  if (metered.length === 0) return undefined;
  const model = metered.reduce((acc, j) => mergeCounters(acc, j.usage!.counters.model), emptyCounters());
  const judged = metered.filter((j) => j.usage!.counters.judge);
  const judge = judged.length ? judged.reduce((acc, j) => mergeCounters(acc, j.usage!.counters.judge!), emptyCounters()) : undefined;
  return { model: summarizeUsage(model), ...(judge ? { judge: summarizeUsage(judge) } : {}) };
}

export function stateOfStatus(status: JobStatus): JobState {
  switch (status) {
    case 'SUCCEEDED':
      return 'succeeded';
    case 'FAILED':
      return 'failed';
    case 'TIMED_OUT':
      return 'timed_out';
    case 'CANCELLED':
      return 'cancelled';
  }
}

export function summarizeProgress(jobs: RunProgress['jobs']): RunProgress {
  const count = (state: JobState) => jobs.filter((j) => j.state === state).length;
  return {
    total: jobs.length,
    pending: count('pending'),
    running: count('running'),
    succeeded: count('succeeded'),
    failed: count('failed'),
    timedOut: count('timed_out'),
    cancelled: count('cancelled'),
    jobs,
  };
}

/** Exit code of `br run`/`br status` for a run status: scripts can tell the cases apart. */
export const EXIT_CODES = { COMPLETED: 0, ERROR: 1, BAD_INPUT: 2, PARTIAL: 3, FAILED: 4, CANCELLED: 5 } as const;

export function exitCodeOf(status: RunStatus): number {
  return EXIT_CODES[status];
}
