// Submitting and following a suite: one parent workflow, a child run per benchmark.

import type { Client, WorkflowHandle } from '@temporalio/client';
import { withJobs } from './run-jobs.js';
import { summarizeProgress } from '../runs/run-outcome.js';
import type { RunProgress } from '../runs/run-spec.js';
import type { Settings } from '../config/settings.js';
import { SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import type { SuiteProgress, SuiteResult, SuiteSpec, suiteWorkflow } from '../workflows/suite-workflow.js';
import { newWorkflowId, queryProgress, refuseOversizedInput, runHandle, whilePolling } from './runs.js';
import { pinDefinitions, storePages } from './task-definitions.js';
import { listInstancesOnWorker, planRun } from './run-plan.js';
import { preflightEndpoints } from './endpoint-preflight.js';

export type SuiteHandle = WorkflowHandle<typeof suiteWorkflow>;

export function newSuiteId(suite: string, now = new Date()): string {
  return newWorkflowId(`br-suite-${suite}`, now);
}

export async function submitSuite(client: Client, settings: Settings, unplanned: SuiteSpec): Promise<SuiteHandle> {
  // Every run's endpoints checked first (each endpoint asked once: a passed one is not asked again).
  for (const run of unplanned.runs) await preflightEndpoints(client, settings, run.runId, run.options);
  // Each run's instances resolved and its shards planned, as a lone run's are (client/run-plan.ts).
  const spec = { ...unplanned, runs: await Promise.all(unplanned.runs.map((run) => planRun(run, listInstancesOnWorker(client, settings, run.runId)))) };
  // Each run's definitions travel as a lone run's do: large ones in page holders, the suite's input holding names and digests.
  const byReference = spec.runs.map((run) => pinDefinitions(run));
  const input: SuiteSpec = { ...spec, runs: byReference.map((run) => run.input) };
  refuseOversizedInput(input, `suite ${spec.suite}`, `the suite's definition (${spec.runs.length} benchmarks)`);
  for (const [i, run] of byReference.entries()) await storePages(client.workflow, settings.sharedQueue, spec.runs[i]!.runId, run.pages);
  return client.workflow.start<typeof suiteWorkflow>('suiteWorkflow', {
    workflowId: spec.suiteId,
    taskQueue: settings.sharedQueue,
    args: [input],
    memo: { suite: spec.suite, model: spec.model, benchmarks: spec.runs.map((r) => r.benchmark.name) },
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTES.model, value: spec.model },
      { key: SEARCH_ATTRIBUTES.benchmark, value: `suite:${spec.suite}` },
      { key: SEARCH_ATTRIBUTES.status, value: 'RUNNING' },
    ],
  });
}

/** One progress view over the suite: its runs' job counts added up (runs not started count as pending). */
export async function suiteProgress(client: Client, handle: SuiteHandle): Promise<RunProgress> {
  const suite = await handle.query<SuiteProgress>('suiteProgress');
  const jobs: RunProgress['jobs'] = [];
  for (const run of suite.runs) {
    const progress = run.state === 'pending' ? undefined : await queryProgress(runHandle(client, run.runId)).catch(() => undefined);
    // One push per job: spreading a run of many thousand jobs into push() overflows the stack.
    if (progress) for (const job of progress.jobs) jobs.push(job);
    else for (let i = 0; i < run.tasks; i++) jobs.push({ jobId: `${run.runId}.${i}`, task: run.benchmark, state: 'pending' as const });
  }
  return summarizeProgress(jobs);
}

export async function followSuite(client: Client, handle: SuiteHandle, onProgress: (p: RunProgress) => void, intervalMs = 1000): Promise<SuiteResult> {
  return whilePolling(
    handle.result().then(async (suite) => ({ ...suite, runs: await Promise.all(suite.runs.map((run) => withJobs(client.workflow, run))) })),
    () => suiteProgress(client, handle),
    onProgress,
    intervalMs,
  );
}
