// Replays every recorded workflow history (test/fixtures/workflow-histories, made by record-histories.ts)
// against the current workflow code: a change that would break runs already in flight fails here.
// Needs the workflow bundle, not the dev server. docs/workflow-versioning.md says what to do when it fails.

import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import type { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type WorkflowBundle } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { JobSpec, RunResult, RunSpec } from '../../runs/run-spec.js';
import type { SuiteResult } from '../../workflows/suite-workflow.js';
import { workflowsPath } from '../../workers/start-worker.js';

type History = temporal.api.history.v1.IHistory;

const historiesDir = fileURLToPath(new URL('../fixtures/workflow-histories', import.meta.url));
// batches/ holds the runs that continue as new (every execution of each chain).
const fixtures = readdirSync(historiesDir, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.json'))
  .sort();

/** A fixture as the JSON that Temporal's tools write (`temporal workflow show --output json` reads the same). */
function historyJson(file: string): { events: Array<Record<string, unknown>> } {
  return JSON.parse(readFileSync(path.join(historiesDir, file), 'utf8')) as { events: Array<Record<string, unknown>> };
}

function history(file: string): History {
  return historyFromJSON(historyJson(file));
}

/** The value a workflow returned, from its WorkflowExecutionCompleted event (plain JSON payloads: no codec). */
function resultOf<T>(file: string): T {
  const completed = history(file).events?.find((e) => e.workflowExecutionCompletedEventAttributes)?.workflowExecutionCompletedEventAttributes;
  const data = completed?.result?.payloads?.[0]?.data;
  if (!data) throw new Error(`${file}: expected a completed workflow with a result, found none`);
  return JSON.parse(Buffer.from(data).toString('utf8')) as T;
}

/** The names of a history's markers: `core_patch` for a patch(), `core_local_activity` for a local activity. */
function markerNames(file: string): string[] {
  return (history(file).events ?? []).flatMap((e) => (e.markerRecordedEventAttributes?.markerName ? [e.markerRecordedEventAttributes.markerName] : []));
}

/** The task queue of each scheduled activity, in order. */
function scheduledQueues(file: string): string[] {
  return (history(file).events ?? []).flatMap((e) =>
    e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.taskQueue?.name ?? ''] : [],
  );
}

function activityTypes(file: string): string[] {
  return (history(file).events ?? []).flatMap((e) =>
    e.activityTaskScheduledEventAttributes?.activityType?.name ? [e.activityTaskScheduledEventAttributes.activityType.name] : [],
  );
}

/** The input a workflow was started with. */
function inputOf<T>(file: string): T {
  const data = history(file).events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  if (!data) throw new Error(`${file}: expected a started workflow with an input, found none`);
  return JSON.parse(Buffer.from(data).toString('utf8')) as T;
}

let workflowBundle: WorkflowBundle;

beforeAll(async () => {
  // One runtime per test file (vitest runs each file in its own process): quiet unless something is wrong.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  workflowBundle = await bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') });
});

describe('recorded workflow histories', () => {
  it.each(fixtures)('%s replays against the current workflow code without non-determinism', async (file) => {
    await expect(Worker.runReplayHistory({ workflowBundle }, history(file), file)).resolves.toBeUndefined();
  });

  it('fail to replay when the code schedules a different activity than the history recorded', async () => {
    // The control that proves the replay above can fail: the same job history with its first activity renamed.
    const tampered = historyJson('completed.job-0.json');
    const scheduled = tampered.events.find((e) => e.activityTaskScheduledEventAttributes) as {
      activityTaskScheduledEventAttributes: { activityType: { name: string } };
    };
    expect(scheduled.activityTaskScheduledEventAttributes.activityType.name).toBe('runJobOnHost');
    scheduled.activityTaskScheduledEventAttributes.activityType.name = 'runTaskContainer';
    await expect(Worker.runReplayHistory({ workflowBundle }, historyFromJSON(tampered), 'tampered')).rejects.toMatchObject({
      name: 'DeterminismViolationError',
    });
  });
});

describe('the recorded histories cover every kind of run, each in the one current shape', () => {
  it('no history records a patch: before a release, every workflow has one shape (docs/workflow-versioning.md)', () => {
    for (const file of fixtures) expect(patchIds(file), file).toEqual([]);
  });

  it('a COMPLETED run with two repeats: its jobs inline in its result, each one host activity on the shared queue, and the per-host repeat counts', () => {
    const run = resultOf<RunResult>('completed.run.json');
    expect([run.status, run.jobsIn, run.jobs.map((j) => [j.status, j.repeat])]).toEqual([
      'COMPLETED',
      undefined,
      [
        ['SUCCEEDED', 0],
        ['SUCCEEDED', 1],
      ],
    ]);
    expect(activityTypes('completed.run.json')).toEqual(['repeatCounts']);
    // The first attempt claims the host: no claim, no marker, no memo; the one attempt on the shared queue.
    expect(markerNames('completed.job-0.json')).toEqual([]);
    expect(activityTypes('completed.job-0.json')).toEqual(['runJobOnHost']);
    expect(scheduledQueues('completed.job-0.json')).toEqual(['record']);
    expect(history('completed.job-0.json').events?.some((e) => e.workflowPropertiesModifiedEventAttributes)).toBe(false);
  });

  it('a PARTIAL run: one job succeeded, one failed with a non-zero exit', () => {
    const run = resultOf<RunResult>('partial.run.json');
    expect(run.status).toBe('PARTIAL');
    expect(
      ['partial.job-0.json', 'partial.job-1.json'].map((file) => resultOf<RunResult['jobs'][number]>(file)).map((j) => [j.task, j.status, j.reason]),
    ).toEqual([
      ['scores-half', 'SUCCEEDED', undefined],
      ['exits-nonzero', 'FAILED', 'NON_ZERO_EXIT'],
    ]);
  });

  it('a retry that carries the succeeded job over and reruns only the failed one', () => {
    const partial = resultOf<RunResult>('partial.run.json');
    const retry = resultOf<RunResult>('retry.run.json');
    expect([retry.retryOf, retry.jobCount]).toEqual([partial.runId, 2]);
    expect(inputOf<RunSpec>('retry.run.json').retryOf?.carried.map((j) => [j.task, j.status])).toEqual([['scores-half', 'SUCCEEDED']]);
    expect(resultOf<RunResult['jobs'][number]>('retry.job-0.json').task).toBe('exits-nonzero');
  });

  it('a job that failed over: its first attempt named a host that then let the pinned attempt time out before start, a claimed one ran it', () => {
    const job = resultOf<RunResult['jobs'][number]>('failover.job-0.json');
    expect(job.status).toBe('SUCCEEDED');
    expect(job.hostsTried).toEqual(['host-silent', 'host-a']);
    expect(activityTypes('failover.job-0.json')).toEqual(['runJobOnHost', 'runJobOnHost', 'runJobOnHost']);
    expect(scheduledQueues('failover.job-0.json')).toEqual(['record', 'record@host-silent', 'record@host-a']);
    expect(markerNames('failover.job-0.json')).toEqual(['core_local_activity']);
    const timedOut = history('failover.job-0.json').events?.find((e) => e.activityTaskTimedOutEventAttributes)?.activityTaskTimedOutEventAttributes;
    expect(timedOut?.failure?.timeoutFailureInfo?.timeoutType).toBe(2); // TIMEOUT_TYPE_SCHEDULE_TO_START
  });

  it('a CANCELLED run whose running job was cancelled through its host activity', () => {
    expect(resultOf<RunResult>('cancel.run.json').status).toBe('CANCELLED');
    const job = resultOf<RunResult['jobs'][number]>('cancel.job-0.json');
    expect(job.status).toBe('CANCELLED');
    expect(history('cancel.job-0.json').events?.some((e) => e.activityTaskCancelRequestedEventAttributes)).toBe(true);
  });

  it('a COMPLETED suite of two child runs', () => {
    const suite = resultOf<SuiteResult>('suite.suite.json');
    expect(suite.status).toBe('COMPLETED');
    expect(suite.runs.map((r) => [r.benchmark, r.status])).toEqual([
      ['outcomes', 'COMPLETED'],
      ['seeded', 'COMPLETED'],
    ]);
  });

  it('a run in batches (continue-as-new) with its definitions in its input: two executions, pass@k counted per batch, a page of results each', () => {
    expect(activityTypes('batches/inline.run-0.json')).toEqual(['repeatCounts']);
    expect(lastEventType('batches/inline.run-0.json')).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW');
    const run = resultOf<RunResult>('batches/inline.run-1.json');
    expect([run.status, run.jobsIn, run.jobCount, run.jobs, run.resultPages]).toEqual([
      'COMPLETED',
      'result-pages',
      2,
      [],
      [`${run.runId}.results-0-0`, `${run.runId}.results-1-0`],
    ]);
  });

  it('a run in batches with its definitions by reference: each execution loads its page and writes a page of results, the last releases the holder', () => {
    for (const file of ['batches/by-reference.run-0.json', 'batches/by-reference.run-1.json'])
      expect(activityTypes(file)).toEqual(['loadTaskDefinitions', 'repeatCounts']);
    const input = startedInput<RunSpec>('batches/by-reference.run-0.json');
    expect([input.tasks, input.definitions?.names, input.definitions?.pages.map((p) => [p.first, p.count])]).toEqual([[], ['scores-half'], [[0, 1]]]);
    expect(jobInputs('batches/by-reference.run-0.json').map((job) => job.task.name)).toEqual(['scores-half']);
    expect(signalledWorkflowIds('batches/by-reference.run-0.json')).toEqual([]);
    expect(signalledWorkflowIds('batches/by-reference.run-1.json')).toEqual([`${input.runId}.definitions-0`]);
    // The second execution carries the first one's page on and names both in the result.
    expect(startedInput<RunSpec>('batches/by-reference.run-1.json').continuation?.resultPages).toEqual([`${input.runId}.results-0-0`]);
    const run = resultOf<RunResult>('batches/by-reference.run-1.json');
    expect([run.status, run.resultPages]).toEqual(['COMPLETED', [`${input.runId}.results-0-0`, `${input.runId}.results-1-0`]]);
    expect(lastEventType('batches/by-reference.definitions-0.json')).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
    // Each page holds its execution's job result.
    for (const [i, file] of ['batches/by-reference.results-0.json', 'batches/by-reference.results-1.json'].entries()) {
      expect(startedInput<RunResult['jobs']>(file).map((j) => [j.task, j.repeat, j.status])).toEqual([['scores-half', i, 'SUCCEEDED']]);
      expect(lastEventType(file)).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
    }
  });
});

/** The patch ids a history's markers record, in order. */
function patchIds(file: string): string[] {
  return historyJson(file).events.flatMap((e) => {
    const marker = e.markerRecordedEventAttributes as { details?: Record<string, { payloads: Array<{ data: string }> }> } | undefined;
    const data = marker?.details?.['patch-data']?.payloads[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { id: string }).id] : [];
  });
}

function lastEventType(file: string): unknown {
  return historyJson(file).events.at(-1)?.eventType;
}

/** The workflow's input, from its WorkflowExecutionStarted event (plain JSON payloads: no codec). */
function startedInput<T>(file: string): T {
  const data = history(file).events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  if (!data) throw new Error(`${file}: expected a started event with an input`);
  return JSON.parse(Buffer.from(data).toString('utf8')) as T;
}

/** The inputs of the job workflows a history started, in order (plain JSON payloads: no codec). */
function jobInputs(file: string): JobSpec[] {
  return (history(file).events ?? []).flatMap((e) => {
    const started = e.startChildWorkflowExecutionInitiatedEventAttributes;
    const data = started?.workflowType?.name === 'jobWorkflow' ? started.input?.payloads?.[0]?.data : undefined;
    return data ? [JSON.parse(Buffer.from(data).toString('utf8')) as JobSpec] : [];
  });
}

function signalledWorkflowIds(file: string): string[] {
  return (history(file).events ?? []).flatMap((e) => {
    const id = e.signalExternalWorkflowExecutionInitiatedEventAttributes?.workflowExecution?.workflowId;
    return id ? [id] : [];
  });
}
