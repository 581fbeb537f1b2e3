// A run's jobs as its workflow starts them: their ids, order and specs. Pure, so the workflow and the
// client that reads a run's jobs back (client/run-jobs.ts) derive the same list.

import type { JobResult, JobSpec, RunSpec } from './run-spec.js';

export function jobIdFor(runId: string, index: number, taskName: string, repeat?: number): string {
  return `${runId}.${String(index).padStart(3, '0')}-${taskName}${repeat === undefined ? '' : `.r${repeat}`}`;
}

export function repeatFields(job: JobSpec): Pick<JobResult, 'repeat' | 'seed'> {
  return { repeat: job.repeat.index, ...(job.repeat.seed !== undefined ? { seed: job.repeat.seed } : {}) };
}

/** How many jobs a run starts: a job per task and repeat (a run pinned by reference knows its tasks by name). */
export function jobCountOf(spec: Pick<RunSpec, 'tasks' | 'definitions' | 'options'>): number {
  return (spec.definitions?.names.length ?? spec.tasks.length) * spec.options.repeats;
}

/** Repeat-major order: every task's first repeat runs before any task's second. */
export function jobSpecsOf(spec: RunSpec): JobSpec[] {
  const repeats = spec.options.repeats;
  return Array.from({ length: repeats }, (_, repeat) =>
    spec.tasks.map((task, index) => ({
      runId: spec.runId,
      jobId: jobIdFor(spec.runId, index, task.name, repeats > 1 ? repeat : undefined),
      benchmark: spec.benchmark,
      task,
      options: spec.options,
      resolved: spec.resolved,
      cacheFrom: spec.cacheFrom,
      repeat: { index: repeat, ...(spec.options.seed !== undefined || repeats > 1 ? { seed: (spec.options.seed ?? 0) + repeat } : {}) },
    })),
  ).flat();
}
