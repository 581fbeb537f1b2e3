// JobWorkflow: one task of a run, end to end on one host: ensure the image, run the container, harvest
// the result, as one host activity (runJobOnHost). Every ending is a JobResult: a failed job never throws
// to its run.
//
// The job claims its host by its first attempt: that attempt is scheduled on the workflow's own (shared)
// queue, and the server hands it straight back to the worker completing this workflow task (eager
// dispatch), or to any worker with a free slot; that worker's host is the job's host. Later attempts are
// pinned to the host's own queue. A host that stops answering is noticed by the schedule-to-start timeout
// of its queue; the job then claims a live worker's host (a local activity: the worker running this
// workflow task is one) and starts over there, at most `maxHosts` hosts in all.

import {
  ActivityCancellationType,
  ActivityFailure,
  CancellationScope,
  defineQuery,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { HostActivities, SharedActivities } from '../activities/index.js';
import type { EarlierAttempts, JobOnHostOutput } from '../activities/run-job-on-host.js';
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

const { claimHost, hostOfFirstAttempt } = proxyLocalActivities<SharedActivities>({ startToCloseTimeout: '30s' });

/** How long an image may take to build, inside runJobOnHost's start-to-close timeout (ensureImage's own timeout before). */
const IMAGE_SECONDS = 3600;
/** How long harvesting may take, inside the same timeout. */
const HARVEST_SECONDS = 120;

/** How long the job's host activity may take, whichever queue it is on. */
function hostActivityTimeouts(job: JobSpec) {
  return {
    startToCloseTimeout: `${IMAGE_SECONDS + job.task.timeoutSeconds + 300 + HARVEST_SECONDS}s`,
    heartbeatTimeout: `${job.options.heartbeatTimeout}s`,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  } as const;
}

/** The job's one activity on the claimed host's queue. */
function jobOnHostActivity(host: ClaimedHost, job: JobSpec) {
  return proxyActivities<HostActivities>({
    taskQueue: host.taskQueue,
    scheduleToStartTimeout: `${job.options.hostTimeout}s`,
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
 * The job's first attempt: on the workflow's own queue, so that the server can hand it to the worker
 * completing this workflow task; one attempt, whose failure the workflow turns into attempts pinned to
 * the host that made it.
 */
function firstAttemptActivity(job: JobSpec) {
  return proxyActivities<HostActivities>({ ...hostActivityTimeouts(job), retry: { maximumAttempts: 1 } }).runJobOnHost;
}

class HostLost extends Error {}

export async function jobWorkflow(job: JobSpec): Promise<JobResult> {
  const rewards = holdRewards(job);
  const result = await runJob(job, rewards.add);
  rewards.close();
  return result;
}

async function runJob(job: JobSpec, addRewards: (batch: RewardBatch) => void): Promise<JobResult> {
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
  /** The job's result from its host activity's output: image, container and harvest. */
  const finishRan = (ran: JobOnHostOutput): JobResult => {
    const { outcome } = ran;
    // The host that ran it, as it says: hostsTried ends with the runner, whoever claimed it.
    if (ran.host && hostsTried.at(-1) !== ran.host) noteHost(ran.host);
    partial.image = ran.image;
    if (ran.imageId) partial.imageId = ran.imageId;
    partial.imageBuilt = ran.imageBuilt;
    if (ran.dataset) partial.dataset = ran.dataset;
    // The last page of rewards rides on the outcome (records-follower.ts).
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
    const { carried, scored, ...harvest } = ran.harvest;
    // The run adds the shard's place; what the job knows is how many of its instances it carried over.
    if (carried && job.shard)
      partial.shard = {
        index: job.shard.index,
        count: job.shard.count,
        instances: job.shard.instances.length,
        carried,
        ...(scored !== undefined ? { scored } : {}),
      };
    return finish(harvest);
  };
  /** The host the job is on, once known. */
  const noteHost = (hostId: string) => {
    hostsTried.push(hostId);
    partial.host = hostId;
    progress.host = hostId;
  };

  /** One attempt on one host, pinned to its queue. Throws HostLost when the host stops answering. */
  const runOnHost = async (host: ClaimedHost, earlier: EarlierAttempts | undefined): Promise<JobResult> => {
    progress.state = 'running';
    let ran;
    try {
      ran = await jobOnHostActivity(host, job)(earlier ? { job, earlier } : { job });
    } catch (error) {
      if (isCancellation(error)) throw error;
      if (isHostLost(error)) throw new HostLost(hostLostMessage(host.hostId, job.options.hostTimeout));
      return failed(failureReasonOf(error), error);
    }
    return finishRan(ran);
  };

  /**
   * The job's first attempt, on whichever worker the server hands it to: its result, or the host (when
   * known) and heartbeat the pinned attempts after it go on from.
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
      const host = next.action === 'retry' && next.lookUpHost ? await hostOfFirstAttempt() : next.host;
      if (host) noteHost(host);
      if (next.action === 'fail') return { result: failed(failureReasonOf(error), error) };
      return { ...(host ? { pinTo: host } : {}), earlier: { attempts: 1, ...(next.heartbeat !== undefined ? { heartbeat: next.heartbeat } : {}) } };
    }
  };

  try {
    const first = await runFirstAttempt();
    if ('result' in first) return first.result;
    let { pinTo } = first;
    const { earlier } = first;
    for (;;) {
      let host: ClaimedHost;
      if (pinTo) {
        // Back to the host the first attempt ran on (already among hostsTried): its container may run on there.
        host = { hostId: pinTo, taskQueue: hostQueueName(workflowInfo().taskQueue, pinTo) };
        pinTo = undefined;
      } else {
        host = await claimHost();
        noteHost(host.hostId);
      }
      progress.state = 'pending';
      try {
        return await runOnHost(host, earlier);
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
