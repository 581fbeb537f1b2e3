// A run's per-job results, for runs that keep them out of the run workflow's result (any run started
// since jobs run in batches): read from the pages its executions wrote (runs/result-pages.ts), one
// history call each, or, for a run started before pages, listed from the job workflows' memos, a
// visibility page of 1,000 at a time (and, for a run not completed, its finished jobs' own histories).

import type { WorkflowClient, WorkflowExecutionInfo } from '@temporalio/client';
import pMap from 'p-map';
import { jobSpecsOf, repeatFields } from '../runs/job-specs.js';
import type { JobResult, JobSpec, RunResult, RunSpec } from '../runs/run-spec.js';
import type { jobWorkflow } from '../workflows/job-workflow.js';
import type { runWorkflow } from '../workflows/run-workflow.js';
import { runInputOf, startInputOf } from './runs.js';
import { tasksByName } from '../runs/task-definition-pages.js';

const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** The visibility query for the job workflows a run started (job ids are `<runId>.<index>-<task>`). */
export function runJobsQuery(runId: string): string {
  return `WorkflowType = 'jobWorkflow' AND WorkflowId STARTS_WITH ${quote(`${runId}.`)}`;
}

/** How many job workflows' histories `listedJobs` reads at once, for jobs with no result in their memo. */
const HISTORY_READS_AT_ONCE = 16;

/**
 * A job workflow's result when its memo has none: a completed job of a run that keeps results out of
 * memos (the run's pages hold them) is read from its own history, with the repeat fields its run adds;
 * one that ended otherwise never had a result: what its execution says.
 */
async function resultOfExecution(workflows: WorkflowClient, info: WorkflowExecutionInfo): Promise<JobResult | undefined> {
  const memo = info.memo?.result as JobResult | undefined;
  if (memo) return memo;
  if (info.status.name === 'RUNNING') return undefined;
  if (info.status.name === 'COMPLETED') {
    const [job, result] = await Promise.all([
      startInputOf<JobSpec>(workflows, info.workflowId, 'job workflow'),
      workflows.getHandle<typeof jobWorkflow>(info.workflowId, info.runId).result(),
    ]);
    return { ...result, ...repeatFields(job) };
  }
  const [, task = ''] = /^\d+-(.*?)(\.r\d+)?$/.exec(info.workflowId.slice(info.workflowId.indexOf('.') + 1)) ?? [];
  return {
    jobId: info.workflowId,
    task,
    status: info.status.name === 'CANCELLED' ? 'CANCELLED' : 'FAILED',
    ...(info.status.name === 'CANCELLED' ? {} : { reason: 'INFRASTRUCTURE' as const }),
    message: `job workflow ended ${info.status.name} without a result`,
    timings: { queuedAt: info.startTime.toISOString(), finishedAt: (info.closeTime ?? info.startTime).toISOString(), containerSeconds: 0 },
  };
}

/**
 * The jobs of a run whose job workflows have a result so far (all of them once the run is over), by job
 * id: from their memos (runs begun before result pages), else from their own histories.
 */
export async function listedJobs(workflows: WorkflowClient, runId: string): Promise<Map<string, JobResult>> {
  const infos: WorkflowExecutionInfo[] = [];
  for await (const info of workflows.list({ query: runJobsQuery(runId), pageSize: 1000 })) infos.push(info);
  const results = await pMap(infos, (info) => resultOfExecution(workflows, info), { concurrency: HISTORY_READS_AT_ONCE });
  const jobs = new Map<string, JobResult>();
  infos.forEach((info, i) => {
    if (results[i]) jobs.set(info.workflowId, results[i]);
  });
  return jobs;
}

/** The jobs a run's result pages hold (each page the input of its page workflow), by job id, in job order. */
export async function pagedJobs(workflows: WorkflowClient, pageIds: readonly string[]): Promise<Map<string, JobResult>> {
  const pages = await Promise.all(pageIds.map((id) => startInputOf<JobResult[]>(workflows, id, 'results page')));
  return new Map(pages.flat().map((job) => [job.jobId, job]));
}

/**
 * `result` with its `jobs` filled in, in the run's job order: carried ones first, then every job it
 * started, then (for a cancelled run) the ones it never started. A result that holds its jobs itself
 * comes back as it is.
 */
export async function withJobs(workflows: WorkflowClient, result: RunResult): Promise<RunResult> {
  if (result.jobsIn !== 'job-workflows') return result;
  if (result.resultPages) {
    // The pages hold every job the run started, in order; only carried and never-started jobs are not in them.
    const paged = await pagedJobs(workflows, result.resultPages);
    if (!result.retryOf && paged.size === result.jobCount) return { ...result, jobs: [...paged.values()] };
    return withUnlistedJobs(workflows, result, paged);
  }
  let listed = await listedJobs(workflows, result.runId);
  // Visibility may trail the run's close by a moment on a cluster (Elasticsearch refreshes each second).
  for (let attempt = 0; attempt < 10 && listed.size < (result.jobCount ?? 0) && result.status !== 'CANCELLED' && !result.retryOf; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    listed = await listedJobs(workflows, result.runId);
  }
  if (!result.retryOf && listed.size === result.jobCount) {
    const order = (jobId: string) => Number(jobId.slice(result.runId.length + 1).split('-')[0]);
    const jobs = [...listed.values()].sort((a, b) => (a.repeat ?? 0) - (b.repeat ?? 0) || order(a.jobId) - order(b.jobId));
    return { ...result, jobs };
  }
  return withUnlistedJobs(workflows, result, listed);
}

/** `result` with its jobs: `listed` in the run's job order, and the ones not listed known from its definition. */
async function withUnlistedJobs(workflows: WorkflowClient, result: RunResult, listed: Map<string, JobResult>): Promise<RunResult> {
  // A retry's carried jobs, and the jobs a cancelled run never started, are known from its definition.
  // Task names are all it takes: the definitions themselves are not read.
  const spec: RunSpec = await runInputOf(workflows.getHandle<typeof runWorkflow>(result.runId));
  const finishedAt = result.finishedAt;
  const jobs = jobSpecsOf(spec.definitions ? { ...spec, tasks: tasksByName(spec.definitions.names) } : spec).map(
    (job): JobResult =>
      listed.get(job.jobId) ?? {
        jobId: job.jobId,
        task: job.task.name,
        status: 'CANCELLED',
        message: 'run cancelled before this job started',
        timings: { queuedAt: result.startedAt, finishedAt, containerSeconds: 0 },
        ...repeatFields(job),
      },
  );
  return { ...result, jobs: [...(spec.retryOf?.carried ?? []), ...jobs] };
}
