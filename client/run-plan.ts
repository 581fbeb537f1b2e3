// What a submit resolves before a run starts: the instances of tasks that list them by a command (run in the
// task's image by any worker, taskInstancesWorkflow), the run's selection checked against every task's list,
// and the plan of shards pinned in the run (runs/instance-shards.ts). A retry or rerun keeps its original's
// plan: the same instances in the same shards.

import { WorkflowFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TaskDefinition } from '../contract/benchmark.js';
import { InputError, type Problem } from '../contract/problems.js';
import { taskDirectory } from '../contract/task-template.js';
import { FAILURE_TYPES } from '../runs/failure-types.js';
import { planTask, SHARD_LIST_MAX_BYTES, shardCount, type RunPlan } from '../runs/instance-shards.js';
import type { RunSpec } from '../runs/run-spec.js';
import type { Settings } from '../config/settings.js';
import type { ListInstancesInput } from '../activities/list-task-instances.js';
import { executeOrJoin } from './workflow-once.js';
// Types only: the workflow module brings the workflow SDK, which no client process needs to load.
import type { taskInstancesWorkflow } from '../workflows/task-instances-workflow.js';

/** Lists a task's instances with its command; a worker does it (listInstancesOnWorker), a test may hand its own. */
export type InstanceLister = (input: ListInstancesInput) => Promise<string[]>;

/**
 * `spec` with every task's instances known and its plan pinned. Throws an InputError for a selection that
 * names instances no task lists, for a shard too big to pass, and for a command that lists none.
 */
export async function planRun(spec: RunSpec, list: InstanceLister, say?: (line: string) => void): Promise<RunSpec> {
  // Pinned by the run it retries or reruns: the same shards, whatever the benchmark lists now.
  if (spec.plan || spec.definitions) return spec;
  const tasks = await Promise.all(
    spec.tasks.map(async (task) => {
      if (!task.instancesCommand || task.instances) return task;
      say?.(`listing the instances of task ${task.name} in its image (the image is built first if this host has none)`);
      return { ...task, instances: await list({ benchmark: spec.benchmark, task }) };
    }),
  );
  const problems = selectionProblems(spec, tasks);
  if (problems.length) throw new InputError(problems);
  const plan: RunPlan = tasks.map((task) => planTask(task, spec.options));
  const noneSelected = plan.length > 0 && plan.every((p) => p !== null && p.selected === 0);
  if (noneSelected) throw new InputError([{ file: 'instances', field: '', message: "the run's instances and limit select no instance of any task" }]);
  const oversized = tasks.flatMap((task, i) => shardListProblems(spec, task, plan[i] ?? null));
  if (oversized.length) throw new InputError(oversized);
  return { ...spec, tasks, plan };
}

function taskFile(spec: RunSpec, task: TaskDefinition): string {
  return path.join(spec.benchmark.dir, 'tasks', taskDirectory(task), 'task.yaml');
}

/** Ids of the run's `instances` that no task lists, when every task lists its own (otherwise a task that does not may have them). */
function selectionProblems(spec: RunSpec, tasks: TaskDefinition[]): Problem[] {
  const wanted = spec.options.instances;
  if (!wanted || tasks.some((task) => !task.instances)) return [];
  const listed = new Set(tasks.flatMap((task) => task.instances!));
  const unknown = wanted.filter((id) => !listed.has(id));
  if (!unknown.length) return [];
  const examples = tasks.map((task) => `${task.name}: ${task.instances!.slice(0, 3).join(', ')}${task.instances!.length > 3 ? ', ...' : ''}`).join('; ');
  // The run's option is the bad input (the flag, or the API body's field of that name), not the task's list.
  return [
    {
      file: 'instances',
      field: '',
      message: `the run's instances name ${unknown.length === 1 ? 'an id' : 'ids'} no task lists: ${unknown
        .slice(0, 5)
        .map((id) => `"${id}"`)
        .join(', ')}${unknown.length > 5 ? ` and ${unknown.length - 5} more` : ''} (${examples})`,
    },
  ];
}

function shardListProblems(spec: RunSpec, task: TaskDefinition, plan: RunPlan[number]): Problem[] {
  if (!plan || !task.instances) return [];
  const longest = Math.max(...task.instances.map((id) => Buffer.byteLength(id) + 1));
  if (plan.shardSize * longest <= SHARD_LIST_MAX_BYTES || shardCount(plan) <= 1) return [];
  const fits = Math.max(1, Math.floor(SHARD_LIST_MAX_BYTES / longest));
  // The size came from the run (--shard-size), or from the task's own shard_size.
  const byRun = spec.options.shardSize !== undefined;
  return [
    {
      file: byRun ? 'shardSize' : taskFile(spec, task),
      field: byRun ? '' : 'shard_size',
      message: `shards of ${plan.shardSize} instances of up to ${longest - 1} bytes each make a BENCHROUTER_INSTANCES over ${SHARD_LIST_MAX_BYTES / 1024} KiB: expected a shard size of at most ${fits}`,
    },
  ];
}

/**
 * Where this machine keeps what a task's command listed, by the benchmark's content, the task and the command:
 * a second submit asks no worker, and `br benchmarks` can count the task.
 */
function listedFile(
  settings: Pick<Settings, 'instancesCacheDir'>,
  benchmark: { digest: string },
  task: Pick<TaskDefinition, 'name' | 'instancesCommand' | 'extraEnv'>,
): string {
  // The environment too: a task a template makes lists its instances by its name and arguments there.
  const key = createHash('sha256')
    .update(JSON.stringify([benchmark.digest, task.name, task.instancesCommand, task.extraEnv]))
    .digest('hex');
  return path.join(settings.instancesCacheDir, 'listed', `${key}.json`);
}

/** The instances a task's command listed on this machine before, if it has. */
export function listedBefore(
  settings: Pick<Settings, 'instancesCacheDir'>,
  benchmark: { digest: string },
  task: Pick<TaskDefinition, 'name' | 'instancesCommand' | 'extraEnv'>,
): string[] | undefined {
  try {
    const ids = JSON.parse(readFileSync(listedFile(settings, benchmark, task), 'utf8')) as unknown;
    return Array.isArray(ids) && ids.every((id) => typeof id === 'string') ? ids : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Lists a task's instances on whichever worker takes it (or reads what this machine listed before), waiting for
 * the answer; its failure becomes an InputError naming the task.
 */
export function listInstancesOnWorker(client: Client, settings: Settings, runId: string): InstanceLister {
  return async (input) => {
    const known = listedBefore(settings, input.benchmark, input.task);
    if (known) return known;
    const workflowId = `${runId}.instances-${input.task.name}`;
    try {
      const ids = await executeOrJoin<Awaited<ReturnType<typeof taskInstancesWorkflow>>>(client.workflow, 'taskInstancesWorkflow', {
        workflowId,
        taskQueue: settings.sharedQueue,
        args: [input],
      });
      const file = listedFile(settings, input.benchmark, input.task);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify(ids));
      renameSync(`${file}.${process.pid}.tmp`, file);
      return ids;
    } catch (error) {
      const cause = error instanceof WorkflowFailedError ? deepestCause(error) : undefined;
      if (cause instanceof ApplicationFailure && (cause.type === FAILURE_TYPES.instancesProblem || cause.type === FAILURE_TYPES.imageProblem))
        throw new InputError([
          { file: path.join(input.benchmark.dir, 'tasks', input.task.name, 'task.yaml'), field: 'instances.command', message: cause.message },
        ]);
      throw error;
    }
  };
}

function deepestCause(error: Error): Error {
  let at: Error = error;
  while (at.cause instanceof Error) at = at.cause;
  return at;
}
