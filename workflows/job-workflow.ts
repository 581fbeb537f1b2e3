// JobWorkflow: one task of a run, end to end: claim a host, ensure the image, run the container,
// harvest the result. Every ending is a JobResult; a failed job never throws to its run.

import { ActivityCancellationType, ActivityFailure, CancellationScope, defineQuery, isCancellation, proxyActivities, setHandler } from '@temporalio/workflow';
import type { HostActivities, SharedActivities } from '../activities/index.js';
import type { ClaimedHost } from '../contract/host.js';
import type { FailureReason, JobResult, JobSpec, JobState } from '../contract/run-spec.js';

export const jobStateQuery = defineQuery<JobState>('state');

const { claimHost } = proxyActivities<SharedActivities>({ startToCloseTimeout: '30s' });

/** Activities pinned to the claimed host's queue. The schedule-to-start timeout notices a host that is gone. */
function hostActivities(host: ClaimedHost, job: JobSpec) {
  const onHost = { taskQueue: host.taskQueue, scheduleToStartTimeout: '10 minutes' } as const;
  const { ensureImage } = proxyActivities<HostActivities>({
    ...onHost,
    startToCloseTimeout: '60 minutes',
    heartbeatTimeout: '60s',
    retry: { maximumAttempts: 3, initialInterval: '2s', backoffCoefficient: 2 },
  });
  const { runTaskContainer } = proxyActivities<HostActivities>({
    ...onHost,
    startToCloseTimeout: `${job.task.timeoutSeconds + 300}s`,
    heartbeatTimeout: '30s',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { maximumAttempts: 5, initialInterval: '1s', backoffCoefficient: 2, nonRetryableErrorTypes: ['MissingSecret'] },
  });
  const { harvestResult } = proxyActivities<HostActivities>({ ...onHost, startToCloseTimeout: '2 minutes', retry: { maximumAttempts: 5 } });
  return { ensureImage, runTaskContainer, harvestResult };
}

export async function jobWorkflow(job: JobSpec): Promise<JobResult> {
  const queuedAt = new Date().toISOString();
  let state: JobState = 'pending';
  setHandler(jobStateQuery, () => state);

  const partial: Partial<JobResult> = {};
  const finish = (fields: Pick<JobResult, 'status'> & Partial<JobResult>): JobResult => {
    const { timings, ...rest } = { ...partial, ...fields };
    return {
      jobId: job.jobId,
      task: job.task.name,
      ...rest,
      timings: timings ?? { queuedAt, finishedAt: new Date().toISOString(), containerSeconds: 0 },
    };
  };
  const failed = (reason: FailureReason, error: unknown) => finish({ status: 'FAILED', reason, message: messageOf(error) });

  try {
    const host = await claimHost();
    partial.host = host.hostId;
    const activities = hostActivities(host, job);

    let image: string;
    let archives: string[];
    try {
      const ensured = await activities.ensureImage({
        benchmarkName: job.benchmark.name,
        benchmarkDir: job.benchmark.dir,
        environment: job.task.environment,
        ...(job.task.docker ? { dind: { images: job.task.dockerImages } } : {}),
      });
      image = ensured.image;
      archives = ensured.archives;
      partial.image = ensured.image;
      partial.imageBuilt = ensured.built;
    } catch (error) {
      if (isCancellation(error)) throw error;
      return failed('IMAGE_BUILD', error);
    }

    state = 'running';
    let outcome;
    try {
      outcome = await activities.runTaskContainer({ job, image, archives });
    } catch (error) {
      if (isCancellation(error)) throw error;
      return failed('INFRASTRUCTURE', error);
    }
    partial.exitCode = outcome.exitCode;
    partial.runtime = outcome.runtime;
    partial.timings = {
      queuedAt,
      startedAt: outcome.startedAt,
      finishedAt: outcome.finishedAt,
      containerSeconds: (Date.parse(outcome.finishedAt) - Date.parse(outcome.startedAt)) / 1000,
    };

    try {
      const harvested = await activities.harvestResult({ job, outcome });
      return finish(harvested);
    } catch (error) {
      if (isCancellation(error)) throw error;
      return failed('INFRASTRUCTURE', error);
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
    // Cancelled: the container activity waited for its container to be killed; report what we know.
    return CancellationScope.nonCancellable(async () => finish({ status: 'CANCELLED', message: 'run cancelled' }));
  }
}

function messageOf(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}
