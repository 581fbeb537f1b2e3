// A run's jobs as its workflow starts them: their ids, order and specs. A job is one repeat of one task,
// or of one shard of a task that a run splits (runs/instance-shards.ts). Pure, so the workflow and the
// client that reads a run's jobs back (client/run-jobs.ts) derive the same list.

import type { TaskDefinition } from '../contract/benchmark.js';
import { selectedInstances, shardCount, shardOf, type RunPlan } from './instance-shards.js';
import type { JobResult, JobSpec, RunSpec } from './run-spec.js';

/**
 * `<run>.<task index>-<task>[.s<shard>][.r<repeat>]`: the shard part only for a task split into more than one. A
 * job id names a directory of artifacts, so a task name's "/" (a task a template makes: `inspect_evals/gsm8k`)
 * is written as "." in it.
 */
export function jobIdFor(runId: string, index: number, taskName: string, repeat?: number, shard?: { index: number; count: number }): string {
  const shardPart = shard && shard.count > 1 ? `.s${String(shard.index).padStart(Math.max(3, String(shard.count - 1).length), '0')}` : '';
  return `${runId}.${String(index).padStart(3, '0')}-${jobIdPart(taskName)}${shardPart}${repeat === undefined ? '' : `.r${repeat}`}`;
}

/** A task name as a job id holds it: "/" as ".". */
export function jobIdPart(taskName: string): string {
  return taskName.split('/').join('.');
}

export function repeatFields(job: JobSpec): Pick<JobResult, 'repeat' | 'seed' | 'shard'> {
  return {
    repeat: job.repeat.index,
    ...(job.repeat.seed !== undefined ? { seed: job.repeat.seed } : {}),
    ...(job.shard
      ? {
          shard: {
            index: job.shard.index,
            count: job.shard.count,
            instances: job.shard.instances.length,
            of: job.shard.of,
            ...(job.shard.aggregate ? { aggregate: job.shard.aggregate } : {}),
          },
        }
      : {}),
  };
}

/** Where a job sits in its run: which repeat, which task (its index in the run's tasks) and which shard of it. */
export interface JobSlot {
  repeat: number;
  task: number;
  shard: number;
}

/** The key of a task's repeat and shard, as a retry carries jobs over by it. */
export function slotKey(task: string, repeat: number, shard: number): string {
  return `${task}#${repeat}#${shard}`;
}

/** The slot key of a finished job. */
export function slotKeyOf(job: Pick<JobResult, 'task' | 'repeat' | 'shard'>): string {
  return slotKey(job.task, job.repeat ?? 0, job.shard?.index ?? 0);
}

type SlotSpec = Pick<RunSpec, 'tasks' | 'definitions' | 'options' | 'plan' | 'retryOf'>;

/** The task names of a run, whether it holds its definitions or pins them by reference. */
function taskNamesOf(spec: Pick<RunSpec, 'tasks' | 'definitions'>): string[] {
  return spec.definitions?.names ?? spec.tasks.map((task) => task.name);
}

/**
 * Every job of the run in order, repeat-major (every task's first repeat before any task's second), then by
 * task and shard; a retry's carried jobs are left out (they ran in the run it retries).
 */
export function jobSlotsOf(spec: SlotSpec): JobSlot[] {
  const names = taskNamesOf(spec);
  const carried = new Set((spec.retryOf?.carried ?? []).map(slotKeyOf));
  const slots: JobSlot[] = [];
  for (let repeat = 0; repeat < spec.options.repeats; repeat++)
    names.forEach((name, task) => {
      const shards = shardCount(spec.plan?.[task]);
      for (let shard = 0; shard < shards; shard++) if (!carried.has(slotKey(name, repeat, shard))) slots.push({ repeat, task, shard });
    });
  return slots;
}

/** How many jobs a run starts (a run pinned by reference knows its tasks by name, and its plan by counts). */
export function jobCountOf(spec: SlotSpec): number {
  return jobSlotsOf(spec).length;
}

/** How many instances the run's jobs hold in all, from its plan: undefined when some task lists none. */
export function instanceCountOf(spec: Pick<RunSpec, 'tasks' | 'definitions' | 'options' | 'plan'>): number | undefined {
  const names = taskNamesOf(spec);
  if (!spec.plan || names.some((_, task) => !spec.plan![task])) return undefined;
  return names.reduce((sum, _, task) => sum + spec.plan![task]!.selected, 0) * spec.options.repeats;
}

/**
 * The run's jobs (jobSlotsOf) as specs. Tasks known by name only (tasksByName) give jobs whose ids and shard
 * numbers are right and whose instances are unknown: enough for ids and progress, never to run.
 */
export function jobSpecsOf(spec: RunSpec, slots: readonly JobSlot[] = jobSlotsOf(spec)): JobSpec[] {
  const repeats = spec.options.repeats;
  const selections = new Map<number, string[] | undefined>();
  const jobTasks = new Map<number, TaskDefinition>();
  return slots.map(({ repeat, task: index, shard: shardIndex }) => {
    const task = spec.tasks[index]!;
    const plan = (spec.plan as RunPlan | undefined)?.[index];
    if (!selections.has(index)) selections.set(index, selectedInstances(task, spec.options));
    const shard = plan ? shardOf(task, plan, shardIndex, selections.get(index)) : undefined;
    const carried = spec.retryOf?.instances?.[slotKey(task.name, repeat, shardIndex)];
    if (!jobTasks.has(index)) jobTasks.set(index, jobTaskOf(task));
    return {
      runId: spec.runId,
      jobId: jobIdFor(spec.runId, index, task.name, repeats > 1 ? repeat : undefined, shard),
      benchmark: spec.benchmark,
      task: jobTasks.get(index)!,
      options: spec.options,
      resolved: spec.resolved,
      cacheFrom: spec.cacheFrom,
      repeat: { index: repeat, ...(spec.options.seed !== undefined || repeats > 1 ? { seed: (spec.options.seed ?? 0) + repeat } : {}) },
      ...(shard ? { shard } : {}),
      ...(carried ? { carried } : {}),
    };
  });
}

/**
 * The definition a job carries: without the task's list of instances (a job has its slice in `shard`; the
 * list, thousands of ids, in every job's input would be the run's history many times over).
 */
function jobTaskOf(task: TaskDefinition): TaskDefinition {
  if (!task.instances && !task.instancesCommand) return task;
  const { instances: _instances, instancesCommand: _command, ...rest } = task;
  return rest;
}
