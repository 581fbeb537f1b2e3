// JobWorkflow: one task of a run, end to end: claim a host, ensure the image, run the container,
// harvest the result, all on the claimed host. A host that stops answering is noticed by the
// schedule-to-start timeout of its queue; the job then claims another host and starts over there.
// Every ending is a JobResult: a failed job never throws to its run.
//
// Since the patch JOB_ON_ONE_HOST_ACTIVITY, the host is claimed by a local activity (the worker that
// runs the job's workflow task is a live one polling the shared queue, as the answerer of the old
// shared-queue activity was) and the three host steps are one activity, runJobOnHost: two workflow
// tasks and one activity per job instead of five and four. Histories recorded before it replay
// through the old path, kept whole below.

import {
  ActivityCancellationType,
  ActivityFailure,
  CancellationScope,
  defineQuery,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
} from '@temporalio/workflow';
import type { HostActivities, SharedActivities } from '../activities/index.js';
import type { ContainerOutcome } from '../activities/run-task-container.js';
import { FAILURE_TYPES } from '../runs/failure-types.js';
import type { ClaimedHost } from '../runs/host-queues.js';
import type { FailureReason, JobResult, JobSpec, JobState } from '../runs/run-spec.js';
import { afterHostLost, failureReasonOf, hostLostMessage, isHostLost } from './host-failover.js';
import { holdRewards } from './job-rewards.js';

export interface JobProgress {
  state: JobState;
  /** The host the job is on now (the last one claimed). */
  host?: string;
}

export const jobStateQuery = defineQuery<JobProgress>('state');

const { claimHost } = proxyActivities<SharedActivities>({ startToCloseTimeout: '30s' });
const { claimHost: claimHostLocally } = proxyLocalActivities<SharedActivities>({ startToCloseTimeout: '30s' });

/** Patch id: the host claimed by a local activity, and image, container and harvest as one host activity. */
export const JOB_ON_ONE_HOST_ACTIVITY = 'job-on-one-host-activity';

/** How long an image may take to build, inside runJobOnHost's start-to-close timeout (ensureImage's own timeout before). */
const IMAGE_SECONDS = 3600;
/** How long harvesting may take, inside the same timeout. */
const HARVEST_SECONDS = 120;

/** The job's one activity on the claimed host's queue. */
function jobOnHostActivity(host: ClaimedHost, job: JobSpec) {
  return proxyActivities<HostActivities>({
    taskQueue: host.taskQueue,
    scheduleToStartTimeout: `${job.options.hostTimeoutSeconds}s`,
    startToCloseTimeout: `${IMAGE_SECONDS + job.task.timeoutSeconds + 300 + HARVEST_SECONDS}s`,
    heartbeatTimeout: `${job.options.heartbeatTimeoutSeconds}s`,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // As runTaskContainer's: infrastructure faults retry with backoff, and the retry reattaches to the
    // job's container or harvests its saved outcome. A broken Dockerfile and a missing key are final;
    // a build that keeps failing for the daemon's reasons is made final by the activity after 3 attempts.
    retry: {
      maximumAttempts: 10,
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumInterval: '30s',
      nonRetryableErrorTypes: [FAILURE_TYPES.missingOnHost, FAILURE_TYPES.imageProblem],
    },
  }).runJobOnHost;
}

/** Activities pinned to the claimed host's queue. */
function hostActivities(host: ClaimedHost, job: JobSpec) {
  const onHost = { taskQueue: host.taskQueue, scheduleToStartTimeout: `${job.options.hostTimeoutSeconds}s` } as const;
  const { ensureImage } = proxyActivities<HostActivities>({
    ...onHost,
    startToCloseTimeout: '60 minutes',
    heartbeatTimeout: '60s',
    retry: { maximumAttempts: 3, initialInterval: '2s', backoffCoefficient: 2, nonRetryableErrorTypes: [FAILURE_TYPES.imageProblem] },
  });
  const { runTaskContainer } = proxyActivities<HostActivities>({
    ...onHost,
    startToCloseTimeout: `${job.task.timeoutSeconds + 300}s`,
    heartbeatTimeout: `${job.options.heartbeatTimeoutSeconds}s`,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // Infrastructure faults (daemon unreachable, a worker killed mid-run) retry with backoff; the
    // retry finds the job's container by name and reattaches. Benchmark outcomes are return values.
    retry: { maximumAttempts: 10, initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', nonRetryableErrorTypes: [FAILURE_TYPES.missingOnHost] },
  });
  const { harvestResult } = proxyActivities<HostActivities>({ ...onHost, startToCloseTimeout: '2 minutes', retry: { maximumAttempts: 5 } });
  return { ensureImage, runTaskContainer, harvestResult };
}

class HostLost extends Error {}

export async function jobWorkflow(job: JobSpec): Promise<JobResult> {
  const rewards = holdRewards(job);
  const result = await runJob(job);
  rewards.close();
  // Runs in batches read their jobs' results from visibility, a page of memos at a time, not from
  // the run's own history. Decided by the input, so histories recorded without it replay unchanged.
  if (job.resultInMemo) upsertMemo({ result: { ...result, repeat: job.repeat.index, ...(job.repeat.seed !== undefined ? { seed: job.repeat.seed } : {}) } });
  return result;
}

async function runJob(job: JobSpec): Promise<JobResult> {
  const oneHostActivity = patched(JOB_ON_ONE_HOST_ACTIVITY);
  const queuedAt = new Date().toISOString();
  const progress: JobProgress = { state: 'pending' };
  setHandler(jobStateQuery, () => progress);

  const hostsTried: string[] = [];
  const partial: Partial<JobResult> = {};
  const finish = (fields: Pick<JobResult, 'status'> & Partial<JobResult>): JobResult => {
    const { timings, ...rest } = { ...partial, ...fields };
    return {
      jobId: job.jobId,
      task: job.task.name,
      ...rest,
      hostsTried,
      timings: timings ?? { queuedAt, finishedAt: new Date().toISOString(), containerSeconds: 0 },
    };
  };
  const failed = (reason: FailureReason, error: unknown) => finish({ status: 'FAILED', reason, message: messageOf(error) });
  /** What the finished container did, for the job's result: both job shapes record it alike. */
  const recordContainer = (outcome: ContainerOutcome) => {
    partial.exitCode = outcome.exitCode;
    partial.runtime = outcome.runtime;
    if (outcome.preload) partial.preload = outcome.preload;
    if (outcome.usage) partial.usage = outcome.usage;
    partial.timings = {
      queuedAt,
      startedAt: outcome.startedAt,
      finishedAt: outcome.finishedAt,
      containerSeconds: (Date.parse(outcome.finishedAt) - Date.parse(outcome.startedAt)) / 1000,
    };
  };

  /** One attempt on one host, as one activity. Throws HostLost when the host stops answering. */
  const runOnHostInOneActivity = async (host: ClaimedHost): Promise<JobResult> => {
    progress.state = 'running';
    let ran;
    try {
      ran = await jobOnHostActivity(host, job)({ job });
    } catch (error) {
      if (isCancellation(error)) throw error;
      if (isHostLost(error)) throw new HostLost(hostLostMessage(host.hostId, job.options.hostTimeoutSeconds));
      return failed(failureReasonOf(error), error);
    }
    partial.image = ran.image;
    partial.imageBuilt = ran.imageBuilt;
    recordContainer(ran.outcome);
    return finish(ran.harvest);
  };

  /** One attempt on one host, as the three activities of jobs started before JOB_ON_ONE_HOST_ACTIVITY. */
  const runOnHost = async (host: ClaimedHost): Promise<JobResult> => {
    const activities = hostActivities(host, job);
    const step = async <T>(call: () => Promise<T>, reason: FailureReason): Promise<T | JobResult> => {
      try {
        return await call();
      } catch (error) {
        if (isCancellation(error)) throw error;
        if (isHostLost(error)) throw new HostLost(hostLostMessage(host.hostId, job.options.hostTimeoutSeconds));
        return failed(reason, error);
      }
    };
    const isResult = (value: unknown): value is JobResult => typeof value === 'object' && value !== null && 'status' in value && 'jobId' in value;

    const ensured = await step(
      () =>
        activities.ensureImage({
          benchmarkName: job.benchmark.name,
          benchmarkDir: job.benchmark.dir,
          environment: job.task.environment,
          ...(job.task.docker ? { dind: { images: job.task.dockerImages } } : {}),
        }),
      'IMAGE_BUILD',
    );
    if (isResult(ensured)) return ensured;
    partial.image = ensured.image;
    partial.imageBuilt = ensured.built;

    progress.state = 'running';
    const outcome = await step(() => activities.runTaskContainer({ job, image: ensured.image, archives: ensured.archives }), 'INFRASTRUCTURE');
    if (isResult(outcome)) return outcome;
    recordContainer(outcome);

    const harvested = await step(() => activities.harvestResult({ job, outcome }), 'INFRASTRUCTURE');
    return isResult(harvested) ? harvested : finish(harvested);
  };

  try {
    for (;;) {
      const host = oneHostActivity ? await claimHostLocally() : await claimHost();
      hostsTried.push(host.hostId);
      partial.host = host.hostId;
      progress.host = host.hostId;
      progress.state = 'pending';
      // In the memo, the current host is readable without a worker (a restarting worker's sweep needs it).
      upsertMemo({ host: host.hostId });
      try {
        return await (oneHostActivity ? runOnHostInOneActivity(host) : runOnHost(host));
      } catch (error) {
        if (!(error instanceof HostLost)) throw error;
        const decision = afterHostLost(error.message, hostsTried, job.options.maxHosts);
        if (decision.action === 'give-up') return failed('INFRASTRUCTURE', new Error(decision.message));
      }
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
