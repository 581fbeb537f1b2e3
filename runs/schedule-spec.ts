// What a schedule evaluates: a run or a suite pinned as a template when the schedule is created, whose
// model is whatever checkpoint the endpoint serves when the schedule fires. Pure: the checkpoint
// workflow fills the template in, and the run ids it derives make a checkpoint's second run impossible.

import type { RunSpec, RunStatus } from './run-spec.js';

/** A suite's definition, as SuiteWorkflow takes it. */
export interface SuiteTemplate {
  suiteId: string;
  suite: string;
  model: string;
  runs: RunSpec[];
  /** Benchmarks running at once. */
  parallel: number;
}

/** The model name a template carries until a checkpoint is found; never sent to an endpoint. */
export const CHECKPOINT_PLACEHOLDER = '(checkpoint)';

/** Schedule names: they become Temporal ids and prefix run ids, so `@` and `.` are kept out. */
export const SCHEDULE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export type ScheduleTarget = { kind: 'run'; run: RunSpec } | { kind: 'suite'; suite: SuiteTemplate };

/** The checkpoint workflow's input: the schedule action's arguments, fixed when the schedule is created. */
export interface CheckpointScheduleSpec {
  /** The schedule's name (`br schedule create <name>`). */
  name: string;
  /** Where the checkpoint is read from: `GET <endpoint>/models`, with the key from `apiKeyEnv` on the worker. */
  endpoint: string;
  apiKeyEnv?: string;
  target: ScheduleTarget;
}

/** What the endpoint served when the schedule fired: its id, and a form of it fit for ids and paths. */
export interface ServedCheckpoint {
  checkpoint: string;
  /** `[A-Za-z0-9_-]` only: a readable slug and a hash of the whole id, so two ids never share a key. */
  key: string;
}

export interface CheckpointOutcome {
  checkpoint: string;
  /** The run (or suite) this checkpoint was evaluated by, started now or by an earlier firing. */
  runId: string;
  /** False when the checkpoint already had its run: nothing was started. */
  started: boolean;
  status?: RunStatus;
  overall?: number;
}

export function scheduleIdOf(name: string): string {
  return `br-schedule-${name}`;
}

/** Every run (and suite) of a schedule has an id starting with this; no other schedule's do. */
export function scheduleRunPrefix(name: string): string {
  return `${scheduleIdOf(name)}@`;
}

/** The run (or suite) id of a checkpoint: fixed by schedule and checkpoint, so Temporal refuses a second start. */
export function checkpointRunId(name: string, key: string): string {
  return `${scheduleRunPrefix(name)}${key}`;
}

/**
 * The template made into the run (or suite) of one checkpoint: the checkpoint is the model name, the
 * ids are derived from it, and a suite's runs are `<suite id>.<benchmark>`.
 */
export function instantiateTarget(target: ScheduleTarget, runId: string, checkpoint: string, submittedAt: string): ScheduleTarget {
  const fill = (run: RunSpec, id: string): RunSpec => ({ ...run, runId: id, options: { ...run.options, model: checkpoint }, submittedAt });
  if (target.kind === 'run') return { kind: 'run', run: fill(target.run, runId) };
  const seen = new Map<string, number>();
  const runs = target.suite.runs.map((run) => {
    const count = (seen.get(run.benchmark.name) ?? 0) + 1;
    seen.set(run.benchmark.name, count);
    return fill(run, `${runId}.${run.benchmark.name}${count > 1 ? `-${count}` : ''}`);
  });
  return { kind: 'suite', suite: { ...target.suite, suiteId: runId, model: checkpoint, runs } };
}
