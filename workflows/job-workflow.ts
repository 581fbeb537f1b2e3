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
//
// Jobs whose input says `hostByFirstAttempt` (every run since) claim no host before their first
// attempt: the activity is scheduled on the workflow's own (shared) queue, and the server hands it
// straight back to the worker completing this workflow task (eager dispatch), or to any worker with a
// free slot; that worker's host is the job's host. Later attempts are pinned to it, as before. A
// first workflow task with one command instead of a local activity, a marker and a memo upsert.

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
  workflowInfo,
} from '@temporalio/workflow';
import type { HostActivities, SharedActivities } from '../activities/index.js';
import type { EarlierAttempts, JobOnHostOutput } from '../activities/run-job-on-host.js';
import type { ContainerOutcome } from '../activities/run-task-container.js';
import { FAILURE_TYPES } from '../runs/failure-types.js';
import { hostQueueName, type ClaimedHost } from '../runs/host-queues.js';
import type { FailureReason, JobResult, JobSpec, JobState } from '../runs/run-spec.js';
import { afterFirstAttempt, afterHostLost, failureReasonOf, FINAL_HOST_FAILURES, hostLostMessage, isHostLost } from './host-failover.js';
import { holdRewards } from './job-rewards.js';
import type { RewardBatch } from '../runs/rewards.js';

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

/** How long the job's host activity may take, whichever queue it is on. */
function hostActivityTimeouts(job: JobSpec) {
  return {
    startToCloseTimeout: `${IMAGE_SECONDS + job.task.timeoutSeconds + 300 + HARVEST_SECONDS}s`,
    heartbeatTimeout: `${job.options.heartbeatTimeoutSeconds}s`,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  } as const;
}

/** The job's one activity on the claimed host's queue. */
function jobOnHostActivity(host: ClaimedHost, job: JobSpec) {
  return proxyActivities<HostActivities>({
    taskQueue: host.taskQueue,
    scheduleToStartTimeout: `${job.options.hostTimeoutSeconds}s`,
    ...hostActivityTimeouts(job),
    // As runTaskContainer's: infrastructure faults retry with backoff, and the retry reattaches to the
    // job's container or harvests its saved outcome. A broken Dockerfile and a missing key are final;
    // a build that keeps failing for the daemon's reasons is made final by the activity after 3 attempts.
    retry: {
      maximumAttempts: 10,
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumInterval: '30s',
      nonRetryableErrorTypes: [...FINAL_HOST_FAILURES],
    },
  }).runJobOnHost;
}

/**
 * A `hostByFirstAttempt` job's first attempt: on the workflow's own queue, so that the server can hand
 * it to the worker completing this workflow task; one attempt, whose failure the workflow turns into
 * attempts pinned to the host that made it.
 */
function firstAttemptActivity(job: JobSpec) {
  return proxyActivities<HostActivities>({ ...hostActivityTimeouts(job), retry: { maximumAttempts: 1 } }).runJobOnHost;
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
  const result = await runJob(job, rewards.add);
  rewards.close();
  // Runs in batches read their jobs' results from visibility, a page of memos at a time, not from
  // the run's own history. Decided by the input, so histories recorded without it replay unchanged.
  if (job.resultInMemo) upsertMemo({ result: { ...result, repeat: job.repeat.index, ...(job.repeat.seed !== undefined ? { seed: job.repeat.seed } : {}) } });
  return result;
}

async function runJob(job: JobSpec, addRewards: (batch: RewardBatch) => void): Promise<JobResult> {
  // Checked first: a job that claims its host by its first attempt records no patch marker.
  const oneHostActivity = job.hostByFirstAttempt === true || patched(JOB_ON_ONE_HOST_ACTIVITY);
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
    // The last page of rewards rides on the outcome (records-follower.ts); none in outcomes recorded before.
    if (outcome.rewards) addRewards(outcome.rewards);
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

  /** The job's result from its host activity's output. */
  const finishRan = (ran: JobOnHostOutput): JobResult => {
    partial.image = ran.image;
    partial.imageBuilt = ran.imageBuilt;
    recordContainer(ran.outcome);
    return finish(ran.harvest);
  };
  /** The host the job is on, once known. */
  const noteHost = (hostId: string) => {
    hostsTried.push(hostId);
    partial.host = hostId;
    progress.host = hostId;
  };

  /** One attempt on one host, as one activity. Throws HostLost when the host stops answering. */
  const runOnHostInOneActivity = async (host: ClaimedHost, earlier: EarlierAttempts | undefined): Promise<JobResult> => {
    progress.state = 'running';
    let ran;
    try {
      ran = await jobOnHostActivity(host, job)(earlier ? { job, earlier } : { job });
    } catch (error) {
      if (isCancellation(error)) throw error;
      if (isHostLost(error)) throw new HostLost(hostLostMessage(host.hostId, job.options.hostTimeoutSeconds));
      return failed(failureReasonOf(error), error);
    }
    return finishRan(ran);
  };

  /**
   * A `hostByFirstAttempt` job's first attempt, on whichever worker the server hands it to: its
   * result, or the host (when known) and heartbeat the pinned attempts after it go on from.
   */
  const runFirstAttempt = async (): Promise<{ result: JobResult } | { pinTo?: string; earlier: EarlierAttempts }> => {
    progress.state = 'running';
    try {
      const ran = await firstAttemptActivity(job)({ job });
      noteHost(ran.host);
      return { result: finishRan(ran) };
    } catch (error) {
      if (isCancellation(error)) throw error;
      const next = afterFirstAttempt(error);
      if (next.host) noteHost(next.host);
      if (next.action === 'fail') return { result: failed(failureReasonOf(error), error) };
      return { ...(next.host ? { pinTo: next.host } : {}), earlier: { attempts: 1, ...(next.heartbeat !== undefined ? { heartbeat: next.heartbeat } : {}) } };
    }
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
    let pinTo: string | undefined;
    let earlier: EarlierAttempts | undefined;
    if (job.hostByFirstAttempt) {
      const first = await runFirstAttempt();
      if ('result' in first) return first.result;
      ({ pinTo, earlier } = first);
    }
    for (;;) {
      let host: ClaimedHost;
      if (pinTo) {
        // Back to the host the first attempt ran on (already among hostsTried): its container may run on there.
        host = { hostId: pinTo, taskQueue: hostQueueName(workflowInfo().taskQueue, pinTo) };
        pinTo = undefined;
      } else {
        host = oneHostActivity ? await claimHostLocally() : await claimHost();
        noteHost(host.hostId);
      }
      progress.state = 'pending';
      // In the memo, the current host is readable without a worker (a restarting worker's sweep needs
      // it). Jobs that claim by their first attempt leave that to their activities' worker identities.
      if (!job.hostByFirstAttempt) upsertMemo({ host: host.hostId });
      try {
        return await (oneHostActivity ? runOnHostInOneActivity(host, earlier) : runOnHost(host));
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
