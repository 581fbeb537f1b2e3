// How a run splits a task into shards: the instances it selects (the task's declared list, narrowed by the
// run's `instances` and `limit`) cut in order into slices of the shard size, each slice a job whose container
// gets it in BENCHROUTER_INSTANCES. A task is split only when it lists its instances and says its score is a
// mean over them (task.yaml `aggregate`); any other task is one job, as it always was. The plan a submit
// makes is pinned in the run (RunSpec.plan), so job ids and counts need no definition. Pure.

import type { TaskDefinition } from '../contract/benchmark.js';
import type { RunOptions } from './run-options.js';

/**
 * The most a job's BENCHROUTER_INSTANCES may hold: well under Linux's 128 KiB for one variable. A shard bigger is
 * refused at submit; a resumed shard whose remaining instances would not fit evaluates them all again instead.
 */
export const SHARD_LIST_MAX_BYTES = 96 * 1024;

/** What a submit resolved for one task that lists its instances: how many it selected, and how many a shard holds. */
export interface TaskPlan {
  selected: number;
  shardSize: number;
  /** The fewest instances a shard of the task may hold (task.yaml `min_shard_size`): a smaller remainder joins the shard before it. */
  minShard?: number;
  /**
   * The task's `aggregate`: present for a task whose result folds over its instances, so that its jobs are folded
   * (and resume by instance) wherever the plan is read, its definition at hand or not.
   */
  aggregate?: Record<string, 'mean' | 'sum'>;
}

/** Per task of the run, in order: its plan, or null for a task that lists no instances (one job). */
export type RunPlan = Array<TaskPlan | null>;

/**
 * How a job's container is told its instances: `all` (the task's whole list: nothing is set, the benchmark
 * runs what it runs by default), `first` (a prefix of it: BENCHROUTER_LIMIT) or `listed` (BENCHROUTER_INSTANCES).
 */
export type InstanceSelection = 'all' | 'first' | 'listed';

/** A job's slice of its task's instances. */
export interface JobShard {
  /** 0-based, in instance order. */
  index: number;
  /** The task's shards in this run (one for a task that is not split). */
  count: number;
  /** The instance ids, in the task's order; empty where only the job's id was needed (tasks known by name). */
  instances: string[];
  selection: InstanceSelection;
  /** The task's `aggregate`, for a task whose result combines over instances: its jobs fold, and resume instance by instance. */
  aggregate?: Record<string, 'mean' | 'sum'>;
  /** How many instances the run selected of the task, over all its shards. */
  of: number;
}

/** The task's instances the run's `instances` and `limit` select, in the task's own order; undefined when it lists none. */
export function selectedInstances(task: Pick<TaskDefinition, 'instances'>, options: Pick<RunOptions, 'instances' | 'limit'>): string[] | undefined {
  if (!task.instances) return undefined;
  const wanted = options.instances ? new Set(options.instances) : undefined;
  const selected = wanted ? task.instances.filter((id) => wanted.has(id)) : task.instances;
  return options.limit !== undefined ? selected.slice(0, options.limit) : selected;
}

/** The plan of one task with its instances known (resolved at submit): null for a task that lists none. */
export function planTask(
  task: Pick<TaskDefinition, 'instances' | 'aggregate' | 'shardSize' | 'minShardSize'>,
  options: Pick<RunOptions, 'instances' | 'limit' | 'shardSize'>,
): TaskPlan | null {
  const selected = selectedInstances(task, options);
  if (!selected) return null;
  const whole = Math.max(1, selected.length);
  // Never split a task that does not say its score is a mean over instances, nor below the shard it can run.
  const min = task.minShardSize ?? 1;
  const shardSize = task.aggregate ? Math.min(Math.max(options.shardSize ?? task.shardSize ?? whole, min), whole) : whole;
  return {
    selected: selected.length,
    shardSize,
    ...(task.aggregate && min > 1 ? { minShard: min } : {}),
    ...(task.aggregate ? { aggregate: task.aggregate } : {}),
  };
}

/** How many jobs one repeat of a task makes: 1 for a task that lists no instances, 0 for one the run selected none of. */
export function shardCount(plan: TaskPlan | null | undefined): number {
  if (!plan) return 1;
  const count = Math.ceil(plan.selected / plan.shardSize);
  const remainder = plan.selected % plan.shardSize;
  // A remainder too small to run alone joins the shard before it.
  return count > 1 && remainder > 0 && remainder < (plan.minShard ?? 1) ? count - 1 : count;
}

/** Where shard `index` of a plan starts and ends in the task's selection. */
function shardBounds(plan: TaskPlan, index: number): [number, number] {
  const start = index * plan.shardSize;
  const last = index === shardCount(plan) - 1;
  return [start, last ? plan.selected : Math.min(plan.selected, start + plan.shardSize)];
}

/** Instances in shard `index` of a plan. */
export function shardLength(plan: TaskPlan, index: number): number {
  const [start, end] = shardBounds(plan, index);
  return Math.max(0, end - start);
}

/**
 * Shard `index` of a task, its ids cut from `selected` (the task's selection, selectedInstances) when the
 * definition is at hand, or left empty for a task known by name only.
 */
export function shardOf(task: Pick<TaskDefinition, 'instances' | 'aggregate'>, plan: TaskPlan, index: number, selected: string[] | undefined): JobShard {
  const count = shardCount(plan);
  const instances = selected ? selected.slice(...shardBounds(plan, index)) : [];
  return {
    index,
    count,
    instances,
    selection: selectionOf(task.instances ?? [], instances, index === 0),
    of: plan.selected,
    ...(plan.aggregate ? { aggregate: plan.aggregate } : {}),
  };
}

function selectionOf(declared: readonly string[], slice: readonly string[], first: boolean): InstanceSelection {
  if (slice.length === 0) return 'listed';
  const prefix = first && slice.every((id, i) => declared[i] === id);
  if (prefix) return slice.length === declared.length ? 'all' : 'first';
  return 'listed';
}

/** The variables that tell a job's container its instances (none for the task's whole list). */
export function shardEnvironment(shard: Pick<JobShard, 'instances' | 'selection'>, remaining?: readonly string[]): Record<string, string> {
  // A job resumed after some of its instances were scored names the rest, whatever its slice was.
  if (remaining) return { BENCHROUTER_INSTANCES: remaining.join(',') };
  if (shard.selection === 'all') return {};
  if (shard.selection === 'first') return { BENCHROUTER_LIMIT: String(shard.instances.length) };
  return { BENCHROUTER_INSTANCES: shard.instances.join(',') };
}
