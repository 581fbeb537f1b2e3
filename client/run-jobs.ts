// A run's per-job results. A finished run holds them itself when they fit one page, else in the result
// pages its executions wrote (runs/result-pages.ts), one history call each; a run still going has its
// finished jobs' results in their own workflows' histories.

import type { WorkflowClient, WorkflowExecutionInfo } from '@temporalio/client';
import pMap from 'p-map';
import { jobSpecsOf, repeatFields } from '../runs/job-specs.js';
import type { JobResult, JobSpec, RunResult, RunSpec } from '../runs/run-spec.js';
import type { jobWorkflow } from '../workflows/job-workflow.js';
import type { runWorkflow } from '../workflows/run-workflow.js';
import { runInputOf, startInputOf } from './runs.js';
import { tasksByName } from '../runs/task-definition-pages.js';
import { inShardOrder } from '../runs/job-groups.js';

const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** The visibility query for the job workflows a run started (job ids are `<runId>.<index>-<task>`). */
export function runJobsQuery(runId: string): string {
  return `WorkflowType = 'jobWorkflow' AND WorkflowId STARTS_WITH ${quote(`${runId}.`)}`;
}

/** How many job workflows' histories `listedJobs` reads at once. */
const HISTORY_READS_AT_ONCE = 16;

/**
 * A finished job workflow's result: a completed one's from its own history, with the repeat fields its
 * run adds; one that ended otherwise never had a result: what its execution says. Undefined while it runs.
 */
async function resultOfExecution(workflows: WorkflowClient, info: WorkflowExecutionInfo): Promise<JobResult | undefined> {
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

/** The jobs of a run still going that have finished so far, by job id, read from their own workflows. */
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
  const pages = await pMap(pageIds, (id) => startInputOf<JobResult[]>(workflows, id, 'results page'), { concurrency: HISTORY_READS_AT_ONCE });
  return new Map(pages.flat().map((job) => [job.jobId, job]));
}

/**
 * `result` with its `jobs` filled in, in the run's job order: carried ones first (a carried shard with the others
 * of its task), then every job it started, then (for a cancelled run) the ones it never started. A result that holds its jobs itself
 * comes back as it is.
 */
export async function withJobs(workflows: WorkflowClient, result: RunResult): Promise<RunResult> {
  if (result.jobsIn !== 'result-pages') return result;
  // The pages hold every job the run started, in order; only carried and never-started jobs are not in them.
  const paged = await pagedJobs(workflows, result.resultPages ?? []);
  if (!result.retryOf && paged.size === result.jobCount) return { ...result, jobs: [...paged.values()] };
  return withUnlistedJobs(workflows, result, paged);
}

/** `result` with its jobs: `listed` in the run's job order, and the ones not listed (carried, never started) known from its definition. */
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
  // A retry's carried shards join those it ran, in shard order: its records then read in instance order.
  return { ...result, jobs: inShardOrder([...(spec.retryOf?.carried ?? []), ...jobs]) };
}
