// Evaluation schedules on Temporal Schedules: each firing starts a CheckpointWorkflow, which reads the
// checkpoint an endpoint serves and evaluates it once (see workflows/checkpoint-workflow.ts). This is
// the one module that creates, reads, pauses, triggers and deletes them, for `br schedule` and the API.

import { ScheduleAlreadyRunning, ScheduleNotFoundError, type Client, type ScheduleDescription, type ScheduleSummary } from '@temporalio/client';
import { InputError } from '../contract/problems.js';
import type { Settings } from '../config/settings.js';
import type { RunSpec } from '../runs/run-spec.js';
import { listInstancesOnWorker, planRun } from './run-plan.js';
import {
  CHECKPOINT_PLACEHOLDER,
  SCHEDULE_NAME,
  scheduleIdOf,
  scheduleRunPrefix,
  type CheckpointScheduleSpec,
  type ScheduleTarget,
} from '../runs/schedule-spec.js';
import { checkpointBoard, type CheckpointBoard } from '../runs/checkpoint-board.js';
import type { checkpointWorkflow } from '../workflows/checkpoint-workflow.js';
import { listRuns, refuseOversizedInput } from './runs.js';

const SCHEDULE_ID_PREFIX = scheduleIdOf('');

/** Where a schedule's value came from, for error messages: `--every` on the command line, `body.every` over HTTP. */
export interface Where {
  name: string;
  every: string;
}

/** A schedule name, checked: it becomes the Temporal schedule id and prefixes every run id. */
export function checkScheduleName(name: string, where: string): string {
  if (!SCHEDULE_NAME.test(name))
    throw new InputError([
      {
        file: where,
        field: '',
        message: `expected 1-63 lowercase letters, digits, "-" or "_", starting with a letter or digit, got ${JSON.stringify(name)}`,
      },
    ]);
  return name;
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `--every`: `90s`, `15m`, `2h`, `1d`, or a bare number of minutes. At least one second. */
export function parseEvery(text: string, where: string): number {
  const match = /^(\d+)\s*(s|m|h|d)?$/.exec(text.trim());
  const seconds = match ? Number(match[1]) * UNIT_SECONDS[match[2] ?? 'm']! : NaN;
  if (!Number.isSafeInteger(seconds) || seconds < 1)
    throw new InputError([
      {
        file: where,
        field: '',
        message: `expected an interval such as 30s, 15m, 2h or 1d (a bare number is minutes), at least 1s, got ${JSON.stringify(text)}`,
      },
    ]);
  return seconds;
}

/** Seconds as `--every` would take them, in the largest whole unit: 86400 → `1d`, 90 → `90s`. */
export function formatEvery(seconds: number): string {
  for (const unit of ['d', 'h', 'm'] as const) if (seconds % UNIT_SECONDS[unit]! === 0) return `${seconds / UNIT_SECONDS[unit]!}${unit}`;
  return `${seconds}s`;
}

/** A run template: the run flags made into a RunSpec whose model is filled in when the schedule fires. */
export function runTemplate(spec: RunSpec): RunSpec {
  return { ...spec, options: { ...spec.options, model: CHECKPOINT_PLACEHOLDER } };
}

export interface ScheduleDefinition {
  spec: CheckpointScheduleSpec;
  /** Fires every this many seconds; absent: only when triggered. */
  everySeconds?: number;
  paused?: boolean;
}

/** What `br schedule list` and `GET /schedules` show of one schedule. */
export interface ScheduleView {
  name: string;
  scheduleId: string;
  /** `arith`, or `suite:lite`. */
  target: string;
  endpoint: string;
  everySeconds: number | null;
  paused: boolean;
  /** Firings so far that the server still remembers (it keeps the last ten), latest last. */
  recentFirings: string[];
  nextFiring: string | null;
}

function targetLabel(target: ScheduleTarget): string {
  return target.kind === 'run' ? target.run.benchmark.name : `suite:${target.suite.suite}`;
}

export async function createSchedule(client: Client, settings: Settings, unplanned: ScheduleDefinition): Promise<ScheduleView> {
  checkScheduleName(unplanned.spec.name, 'name');
  // Its runs' instances resolved and their shards planned now: each firing runs the same plan.
  const plan = (run: RunSpec) => planRun(run, listInstancesOnWorker(client, settings, `${scheduleIdOf(unplanned.spec.name)}.${run.runId}`));
  const target = unplanned.spec.target;
  const planned: ScheduleTarget =
    target.kind === 'run'
      ? { kind: 'run', run: await plan(target.run) }
      : { kind: 'suite', suite: { ...target.suite, runs: await Promise.all(target.suite.runs.map(plan)) } };
  const definition = { ...unplanned, spec: { ...unplanned.spec, target: planned } };
  const { spec } = definition;
  refuseOversizedInput(spec, `schedule ${spec.name}`, "the schedule's definition");
  const scheduleId = scheduleIdOf(spec.name);
  try {
    await client.schedule.create<typeof checkpointWorkflow>({
      scheduleId,
      spec: definition.everySeconds ? { intervals: [{ every: definition.everySeconds * 1000 }] } : {},
      action: { type: 'startWorkflow', workflowType: 'checkpointWorkflow', workflowId: scheduleId, taskQueue: settings.sharedQueue, args: [spec] },
      // A firing while an evaluation runs is kept (one at most) and taken when it ends: a checkpoint
      // that appeared meanwhile is evaluated next, not a whole interval later.
      policies: { overlap: 'BUFFER_ONE', catchupWindow: '1 minute' },
      state: { paused: definition.paused === true, note: definition.paused ? 'created paused' : 'created' },
      memo: { target: targetLabel(spec.target), endpoint: spec.endpoint, everySeconds: definition.everySeconds ?? null },
    });
  } catch (error) {
    if (error instanceof ScheduleAlreadyRunning) throw new ScheduleExistsError(spec.name);
    throw error;
  }
  return describeSchedule(client, spec.name);
}

function viewOf(
  scheduleId: string,
  memo: Record<string, unknown> | undefined,
  state: { paused: boolean },
  info: Pick<ScheduleSummary['info'], 'recentActions' | 'nextActionTimes'>,
): ScheduleView {
  return {
    name: scheduleId.slice(SCHEDULE_ID_PREFIX.length),
    scheduleId,
    target: String(memo?.target ?? ''),
    endpoint: String(memo?.endpoint ?? ''),
    everySeconds: typeof memo?.everySeconds === 'number' ? memo.everySeconds : null,
    paused: state.paused,
    recentFirings: info.recentActions.map((a) => a.takenAt.toISOString()),
    nextFiring: state.paused ? null : (info.nextActionTimes[0]?.toISOString() ?? null),
  };
}

/** The schedule's handle, or an InputError naming the schedule when there is none. */
async function describeOrRefuse(client: Client, name: string): Promise<ScheduleDescription> {
  try {
    return await client.schedule.getHandle(scheduleIdOf(name)).describe();
  } catch (error) {
    if (error instanceof ScheduleNotFoundError) throw new ScheduleMissingError(name);
    throw error;
  }
}

export class ScheduleExistsError extends InputError {
  constructor(readonly scheduleName: string) {
    super([{ file: 'name', field: '', message: `a schedule named "${scheduleName}" exists already (br schedule delete ${scheduleName} first)` }]);
  }
}

export class ScheduleMissingError extends InputError {
  constructor(readonly scheduleName: string) {
    super([{ file: 'schedule', field: '', message: `no schedule named "${scheduleName}" (br schedule list shows them)` }]);
  }
}

export async function describeSchedule(client: Client, name: string): Promise<ScheduleView> {
  const description = await describeOrRefuse(client, name);
  return viewOf(description.scheduleId, description.memo, description.state, description.info);
}

export async function listSchedules(client: Client): Promise<ScheduleView[]> {
  const views: ScheduleView[] = [];
  for await (const schedule of client.schedule.list()) {
    if (!schedule.scheduleId.startsWith(SCHEDULE_ID_PREFIX) || schedule.action?.workflowType !== 'checkpointWorkflow') continue;
    views.push(viewOf(schedule.scheduleId, schedule.memo, schedule.state, schedule.info));
  }
  return views.sort((a, b) => a.name.localeCompare(b.name));
}

export async function pauseSchedule(client: Client, name: string, note = 'paused'): Promise<ScheduleView> {
  await describeOrRefuse(client, name);
  await client.schedule.getHandle(scheduleIdOf(name)).pause(note);
  return describeSchedule(client, name);
}

export async function unpauseSchedule(client: Client, name: string, note = 'unpaused'): Promise<ScheduleView> {
  await describeOrRefuse(client, name);
  await client.schedule.getHandle(scheduleIdOf(name)).unpause(note);
  return describeSchedule(client, name);
}

/** Fires now, whatever the interval (and even when paused): the endpoint's checkpoint is read and evaluated once. */
export async function triggerSchedule(client: Client, name: string): Promise<void> {
  await describeOrRefuse(client, name);
  await client.schedule.getHandle(scheduleIdOf(name)).trigger('BUFFER_ONE');
}

/** Deletes the schedule; its runs stay (they are ordinary runs), and a running firing finishes. */
export async function deleteSchedule(client: Client, name: string): Promise<void> {
  await describeOrRefuse(client, name);
  await client.schedule.getHandle(scheduleIdOf(name)).delete();
}

/** Every run of the schedule from visibility, as score against checkpoint (oldest checkpoint first). */
export async function scheduleBoard(client: Client, name: string, limit = 1000): Promise<CheckpointBoard> {
  return checkpointBoard(await listRuns(client, limit, { idPrefix: scheduleRunPrefix(name) }));
}
