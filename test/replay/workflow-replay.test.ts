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
// Subfolders hold histories kept from before a patch() (docs/workflow-versioning.md): they replay too.
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

/** The result a job workflow of a batched run put in its memo (with its repeat index), from its last memo upsert. */
function memoResultOf(file: string): RunResult['jobs'][number] {
  const upserts = (history(file).events ?? []).filter((e) => e.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields?.result);
  const data = upserts.at(-1)?.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields?.result?.data;
  if (!data) throw new Error(`${file}: expected a job that put its result in its memo, found none`);
  return JSON.parse(Buffer.from(data).toString('utf8')) as RunResult['jobs'][number];
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

describe('the recorded histories cover every kind of run', () => {
  it('a COMPLETED run with two repeats: its two jobs, each one host activity that claimed its host, and the per-host repeat counts', () => {
    const run = resultOf<RunResult>('completed.run.json');
    expect([run.status, run.jobsIn, run.jobCount]).toEqual(['COMPLETED', 'job-workflows', 2]);
    expect(['completed.job-0.json', 'completed.job-1.json'].map((file) => [memoResultOf(file).status, memoResultOf(file).repeat])).toEqual([
      ['SUCCEEDED', 0],
      ['SUCCEEDED', 1],
    ]);
    expect(activityTypes('completed.run.json')).toEqual(['repeatCounts']);
    // hostByFirstAttempt: no claim, no patch marker, no memo of the host; the one attempt on the shared queue.
    expect(inputOf<JobSpec>('completed.job-0.json').hostByFirstAttempt).toBe(true);
    expect(markerNames('completed.job-0.json')).toEqual([]);
    expect(activityTypes('completed.job-0.json')).toEqual(['runJobOnHost']);
    expect(scheduledQueues('completed.job-0.json')).toEqual(['record']);
  });

  it('a PARTIAL run: one job succeeded, one failed with a non-zero exit', () => {
    const run = resultOf<RunResult>('partial.run.json');
    expect([run.status, run.jobCount]).toEqual(['PARTIAL', 2]);
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
    expect(patchIds('batches/inline.run-0.json')).toEqual(['run-in-batches', 'job-results-by-run', 'run-results-in-pages']);
    // Its jobs keep no result memo: the pages hold the results.
    for (const file of ['batches/inline.run-0.json', 'batches/inline.run-1.json']) expect(jobInputs(file).map((job) => job.resultInMemo)).toEqual([undefined]);
    expect(lastEventType('batches/inline.run-0.json')).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW');
    const run = resultOf<RunResult>('batches/inline.run-1.json');
    expect([run.status, run.jobsIn, run.jobCount, run.jobs, run.resultPages]).toEqual([
      'COMPLETED',
      'job-workflows',
      2,
      [],
      [`${run.runId}.results-0-0`, `${run.runId}.results-1-0`],
    ]);
  });

  it('a run in batches with its definitions by reference: each execution loads its page and writes a page of results, the last releases the holder', () => {
    for (const file of ['batches/by-reference.run-0.json', 'batches/by-reference.run-1.json']) {
      expect(activityTypes(file)).toEqual(['loadTaskDefinitions', 'repeatCounts']);
      expect(patchIds(file)).toEqual(['run-in-batches', 'task-definitions-by-reference', 'job-results-by-run', 'run-results-in-pages']);
      expect(jobInputs(file).map((job) => job.resultInMemo)).toEqual([undefined]);
    }
    const input = startedInput<RunSpec>('batches/by-reference.run-0.json');
    expect([input.tasks, input.definitions?.names, input.definitions?.pages.map((p) => [p.first, p.count])]).toEqual([[], ['scores-half'], [[0, 1]]]);
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

describe('the histories from before the job-results-by-run patch still cover the runs in batches', () => {
  const before = (file: string) => `before-job-results-by-run/${file}`;
  it('runs in batches whose jobs put their results in their memos too, with their definitions inline and by reference', () => {
    expect(patchIds(before('batches/inline.run-0.json'))).toEqual(['run-in-batches', 'run-results-in-pages']);
    expect(patchIds(before('batches/by-reference.run-1.json'))).toEqual(['run-in-batches', 'task-definitions-by-reference', 'run-results-in-pages']);
    for (const file of ['batches/inline.run-0.json', 'batches/inline.run-1.json', 'batches/by-reference.run-0.json', 'batches/by-reference.run-1.json'])
      expect(jobInputs(before(file)).map((job) => job.resultInMemo)).toEqual([true]);
    const run = resultOf<RunResult>(before('batches/inline.run-1.json'));
    expect([run.status, run.resultPages?.length]).toEqual(['COMPLETED', 2]);
  });
});

describe('the histories from before jobs claimed their host by their first attempt still cover every kind of run', () => {
  const before = (file: string) => `before-host-by-first-attempt/${file}`;
  it('jobs claimed their host by a local activity (the job-on-one-host-activity patch), then ran one host activity pinned to it', () => {
    expect(inputOf<JobSpec>(before('completed.job-0.json')).hostByFirstAttempt).toBeUndefined();
    expect(markerNames(before('completed.job-0.json'))).toEqual(['core_patch', 'core_local_activity']);
    expect(activityTypes(before('completed.job-0.json'))).toEqual(['runJobOnHost']);
    expect(resultOf<RunResult>(before('partial.run.json')).status).toBe('PARTIAL');
    expect(resultOf<RunResult>(before('cancel.run.json')).status).toBe('CANCELLED');
    expect(resultOf<SuiteResult>(before('suite.suite.json')).status).toBe('COMPLETED');
  });

  it('a job that failed over: its first claimed host let its activity time out before start, the second ran it', () => {
    const job = resultOf<RunResult['jobs'][number]>(before('failover.job-0.json'));
    expect([job.status, job.hostsTried]).toEqual(['SUCCEEDED', ['host-silent', 'host-a']]);
    expect(activityTypes(before('failover.job-0.json'))).toEqual(['runJobOnHost', 'runJobOnHost']);
    expect(markerNames(before('failover.job-0.json'))).toEqual(['core_patch', 'core_local_activity', 'core_local_activity']);
  });

  it('runs in batches, with their definitions inline and by reference', () => {
    expect(patchIds(before('batches/by-reference.run-0.json'))).toEqual(['run-in-batches', 'task-definitions-by-reference', 'run-results-in-pages']);
    expect(resultOf<RunResult>(before('batches/inline.run-1.json')).status).toBe('COMPLETED');
  });
});

describe('the histories from before the run-results-in-pages patch still cover the runs in batches', () => {
  const before = (file: string) => `before-run-results-pages/${file}`;
  it('a run in batches (continue-as-new) with its definitions in its input: two executions, pass@k counted per batch', () => {
    expect(activityTypes(before('inline.run-0.json'))).toEqual(['repeatCounts']);
    expect(patchIds(before('inline.run-0.json'))).toEqual(['run-in-batches']);
    expect(lastEventType(before('inline.run-0.json'))).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW');
    const run = resultOf<RunResult>(before('inline.run-1.json'));
    expect([run.status, run.jobsIn, run.jobCount, run.jobs]).toEqual(['COMPLETED', 'job-workflows', 2, []]);
  });

  it('a run in batches with its definitions by reference: each execution loads its page, the last releases the holder', () => {
    for (const file of [before('by-reference.run-0.json'), before('by-reference.run-1.json')]) {
      expect(activityTypes(file)).toEqual(['loadTaskDefinitions', 'repeatCounts']);
      expect(patchIds(file)).toEqual(['run-in-batches', 'task-definitions-by-reference']);
    }
    const input = startedInput<RunSpec>(before('by-reference.run-0.json'));
    expect([input.tasks, input.definitions?.names, input.definitions?.pages.map((p) => [p.first, p.count])]).toEqual([[], ['scores-half'], [[0, 1]]]);
    expect(signalledWorkflowIds(before('by-reference.run-0.json'))).toEqual([]);
    expect(signalledWorkflowIds(before('by-reference.run-1.json'))).toEqual([`${input.runId}.definitions-0`]);
    expect(resultOf<RunResult>(before('by-reference.run-1.json')).status).toBe('COMPLETED');
    expect(lastEventType(before('by-reference.definitions-0.json'))).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
  });
});

describe('the histories from before the job-on-one-host-activity patch (and run-in-batches) still cover every kind of run', () => {
  const before = (file: string) => `before-job-on-one-host-activity/${file}`;
  it('a COMPLETED run with two repeats, its two jobs and the pass@k activity', () => {
    const run = resultOf<RunResult>(before('completed.run.json'));
    expect(run.status).toBe('COMPLETED');
    expect(run.jobs.map((j) => [j.status, j.repeat])).toEqual([
      ['SUCCEEDED', 0],
      ['SUCCEEDED', 1],
    ]);
    expect(activityTypes(before('completed.run.json'))).toEqual(['passAtK']);
    // Before the patch: a shared-queue claim, then three host activities, and no marker.
    expect(markerNames(before('completed.job-0.json'))).toEqual([]);
    expect(activityTypes(before('completed.job-0.json'))).toEqual(['claimHost', 'ensureImage', 'runTaskContainer', 'harvestResult']);
  });

  it('a PARTIAL run: one job succeeded, one failed with a non-zero exit', () => {
    const run = resultOf<RunResult>(before('partial.run.json'));
    expect(run.status).toBe('PARTIAL');
    expect(run.jobs.map((j) => [j.task, j.status, j.reason])).toEqual([
      ['scores-half', 'SUCCEEDED', undefined],
      ['exits-nonzero', 'FAILED', 'NON_ZERO_EXIT'],
    ]);
  });

  it('a retry that carries the succeeded job over and reruns only the failed one', () => {
    const partial = resultOf<RunResult>(before('partial.run.json'));
    const retry = resultOf<RunResult>(before('retry.run.json'));
    expect(retry.retryOf).toBe(partial.runId);
    expect(retry.jobs.map((j) => [j.task, j.carriedFrom])).toEqual([
      ['scores-half', partial.runId],
      ['exits-nonzero', undefined],
    ]);
  });

  it('a job that failed over: its first host let the image step time out before start, the second ran it', () => {
    const job = resultOf<RunResult['jobs'][number]>(before('failover.job-0.json'));
    expect(job.status).toBe('SUCCEEDED');
    expect(job.hostsTried).toEqual(['host-silent', 'host-a']);
    expect(activityTypes(before('failover.job-0.json'))).toEqual(['claimHost', 'ensureImage', 'claimHost', 'ensureImage', 'runTaskContainer', 'harvestResult']);
    const timedOut = history(before('failover.job-0.json')).events?.find((e) => e.activityTaskTimedOutEventAttributes)?.activityTaskTimedOutEventAttributes;
    expect(timedOut?.failure?.timeoutFailureInfo?.timeoutType).toBe(2); // TIMEOUT_TYPE_SCHEDULE_TO_START
  });

  it('a CANCELLED run whose running job was cancelled through its container activity', () => {
    expect(resultOf<RunResult>(before('cancel.run.json')).status).toBe('CANCELLED');
    const job = resultOf<RunResult['jobs'][number]>(before('cancel.job-0.json'));
    expect(job.status).toBe('CANCELLED');
    expect(history(before('cancel.job-0.json')).events?.some((e) => e.activityTaskCancelRequestedEventAttributes)).toBe(true);
  });

  it('a COMPLETED suite of two child runs', () => {
    const suite = resultOf<SuiteResult>(before('suite.suite.json'));
    expect(suite.status).toBe('COMPLETED');
    expect(suite.runs.map((r) => [r.benchmark, r.status])).toEqual([
      ['outcomes', 'COMPLETED'],
      ['seeded', 'COMPLETED'],
    ]);
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
