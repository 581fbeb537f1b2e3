// Pure aggregation of job results into a run's status, score and progress counts.

import type { JobResult, JobState, JobStatus, RunProgress, RunResult, RunStatus, TaskScore } from './run-spec.js';
import { SIDE_MODEL_ROLES } from './side-models.js';
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
  const sides = SIDE_MODEL_ROLES.flatMap((role) => {
    const using = metered.filter((j) => j.usage!.counters[role]);
    return using.length ? [[role, summarizeUsage(using.reduce((acc, j) => mergeCounters(acc, j.usage!.counters[role]!), emptyCounters()))]] : [];
  });
  return { model: summarizeUsage(model), ...Object.fromEntries(sides) };
}

export function meanAndStd(values: number[]): { mean: number | null; std: number | null } {
  if (values.length === 0) return { mean: null, std: null };
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  if (values.length === 1) return { mean, std: 0 };
  const variance = values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (values.length - 1);
  return { mean, std: Math.sqrt(variance) };
}

/** Per task, the succeeded repeats' scores with their mean and sample std. */
export function taskScores(jobs: ReadonlyArray<JobResult>): TaskScore[] {
  const byTask = new Map<string, JobResult[]>();
  for (const job of jobs) byTask.set(job.task, [...(byTask.get(job.task) ?? []), job]);
  return [...byTask.entries()].map(([task, runs]) => {
    const scores = [...runs]
      .sort((a, b) => (a.repeat ?? 0) - (b.repeat ?? 0))
      .filter((j) => j.status === 'SUCCEEDED' && j.result)
      .map((j) => j.result!.overall);
    return { task, scores, repeats: runs.length, ...meanAndStd(scores) };
  });
}

/**
 * The spread of a repeated run: each repeat's mean over its succeeded tasks, then the sample std of
 * those means. Null without repeats to compare.
 */
export function repeatStd(jobs: ReadonlyArray<JobResult>): number | null {
  const byRepeat = new Map<number, number[]>();
  for (const job of jobs) {
    if (job.status !== 'SUCCEEDED' || !job.result) continue;
    byRepeat.set(job.repeat ?? 0, [...(byRepeat.get(job.repeat ?? 0) ?? []), job.result.overall]);
  }
  if (byRepeat.size < 2) return null;
  return meanAndStd([...byRepeat.values()].map((scores) => meanAndStd(scores).mean!)).std;
}

/** The unbiased pass@k estimate for one instance: n tries, c of them correct (Chen et al., 2021). */
export function passAtK(n: number, c: number, k: number): number {
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = n - c + 1; i <= n; i++) allFail *= 1 - k / i;
  return 1 - allFail;
}

/**
 * pass@k for k = 1..n over instances present in every one of n repeats: each repeat's scores by
 * instance index; a score of 1 is a pass. Undefined when fewer than two repeats have records.
 */
export function passAtKOfRepeats(repeats: ReadonlyArray<ReadonlyMap<string, number>>): Record<string, number> | undefined {
  const n = repeats.length;
  if (n < 2) return undefined;
  const shared = [...repeats[0]!.keys()].filter((index) => repeats.every((r) => r.has(index)));
  if (shared.length === 0) return undefined;
  const out: Record<string, number> = {};
  for (let k = 1; k <= n; k++) {
    const sum = shared.reduce((acc, index) => acc + passAtK(n, repeats.filter((r) => r.get(index)! >= 1).length, k), 0);
    out[`pass@${k}`] = sum / shared.length;
  }
  return out;
}

/**
 * What one host read of a task's repeats: how many of the task's jobs it holds and could read, and
 * per instance, in how many of those it appeared and passed (score 1). Hosts' counts add up.
 */
export interface RepeatCounts {
  jobsRead: number;
  jobsUnread: number;
  /** instance index → [repeats it appears in, repeats it passed]. */
  instances: Record<string, [number, number]>;
}

export function mergeRepeatCounts(parts: ReadonlyArray<RepeatCounts | undefined>): RepeatCounts {
  const merged: RepeatCounts = { jobsRead: 0, jobsUnread: 0, instances: {} };
  for (const part of parts) {
    if (!part) continue;
    merged.jobsRead += part.jobsRead;
    merged.jobsUnread += part.jobsUnread;
    for (const [index, [present, passed]] of Object.entries(part.instances)) {
      const into = (merged.instances[index] ??= [0, 0]);
      into[0] += present;
      into[1] += passed;
    }
  }
  return merged;
}

/**
 * pass@k for k = 1..n from merged counts: only when all n repeats (each `jobsPerRepeat` jobs: a task run in
 * shards) were read, over the instances
 * present in every one of them (the same rule as passAtKOfRepeats).
 */
export function passAtKOfCounts(counts: RepeatCounts, repeats: number, jobsPerRepeat = 1): Record<string, number> | undefined {
  if (repeats < 2 || counts.jobsRead !== repeats * jobsPerRepeat || counts.jobsUnread > 0) return undefined;
  const shared = Object.values(counts.instances).filter(([present]) => present === repeats);
  if (shared.length === 0) return undefined;
  const out: Record<string, number> = {};
  for (let k = 1; k <= repeats; k++) out[`pass@${k}`] = shared.reduce((acc, [, passed]) => acc + passAtK(repeats, passed, k), 0) / shared.length;
  return out;
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
