// Runs jobs as child JobWorkflows in `concurrency` lanes, in order, until they are done or the run is
// cancelled; a child that fails or is cancelled becomes a JobResult like any other. Once the run's
// budget is spent, the jobs not yet started end as BUDGET without starting.

import { CancellationScope, executeChild, isCancellation } from '@temporalio/workflow';
import { notStartedForBudget, type BudgetLedger } from '../runs/budgets.js';
import { repeatFields } from '../runs/job-specs.js';
import { stateOfStatus } from '../runs/run-outcome.js';
import type { JobResult, JobSpec, RunProgress } from '../runs/run-spec.js';
import { jobWorkflow } from './job-workflow.js';

/**
 * Results by job index; undefined for a job the run's cancel kept from starting. `progress` is updated as
 * jobs run, and `budget` told which jobs run and what they spent.
 */
export async function runJobsInLanes(
  jobs: JobSpec[],
  concurrency: number,
  startedAt: string,
  progress: RunProgress['jobs'],
  budget?: BudgetLedger,
): Promise<Array<JobResult | undefined>> {
  const cancelled = () => CancellationScope.current().consideredCancelled;
  const results: Array<JobResult | undefined> = jobs.map(() => undefined);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < jobs.length && !cancelled()) {
      const index = next++;
      const job = jobs[index]!;
      const spent = budget?.exhausted();
      if (spent) {
        results[index] = { ...notStartedForBudget({ jobId: job.jobId, task: job.task.name }, spent, new Date().toISOString()), ...repeatFields(job) };
        progress[index]!.state = 'failed';
        continue;
      }
      progress[index]!.state = 'running';
      budget?.started(job.jobId);
      let result: JobResult;
      try {
        // The job's own shard figures (instances it carried over) go over the ones its spec gives.
        const ran = await executeChild(jobWorkflow, { workflowId: job.jobId, args: [job] });
        const fields = repeatFields(job);
        result = { ...ran, ...fields, ...(fields.shard ? { shard: { ...fields.shard, ...ran.shard } } : {}) };
      } catch (error) {
        result = {
          jobId: job.jobId,
          task: job.task.name,
          status: isCancellation(error) ? 'CANCELLED' : 'FAILED',
          ...(isCancellation(error) ? {} : { reason: 'INFRASTRUCTURE' as const }),
          message: error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error),
          timings: { queuedAt: startedAt, finishedAt: new Date().toISOString(), containerSeconds: 0 },
          ...repeatFields(job),
        };
      }
      results[index] = result;
      budget?.finished(result);
      progress[index]!.state = stateOfStatus(result.status);
      if (result.shard) progress[index]!.instances = result.shard.instances;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, jobs.length)) }, lane));
  return results;
}
