// A job's rewards read from its workflow's history: the `rewards` signals the records follower sent,
// and the last page, on the outcome its container activity returned (`rewards`), taken with the
// workflow's own rule (takeNewRewards), with a history long poll (`waitNewEvent`). The
// server answers as soon as the job's history grows, and no worker is asked anything: a query costs
// a workflow task on a worker each time, and polling every job of every stream with one every 250 ms
// capped how many rewards a worker could deliver per second.

import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { JobOnHostOutput } from '../activities/run-job-on-host.js';
import type { ContainerOutcome } from '../activities/run-task-container.js';
import { fromStoredPayload } from '../client/runs.js';
import { carriedBatch, REWARDS_SIGNAL, takeNewRewards, type Reward, type RewardBatch, type RewardsTaken } from '../runs/rewards.js';
import type { JobSpec } from '../runs/run-spec.js';

/** The activities whose result holds a container outcome: runJobOnHost's (`outcome`) and, in jobs before it, runTaskContainer's. */
const CONTAINER_ACTIVITIES = new Set(['runJobOnHost', 'runTaskContainer']);

/** gRPC NOT_FOUND: the job's workflow has not been started (yet). */
const NOT_FOUND = 5;

export type HistoryRead = { kind: 'not-started' } | { kind: 'read'; rewards: Reward[]; closed: boolean };

/** Reads one job's reward signals from the start of its history, each call the events after the last. */
export class JobRewardsHistory {
  private nextPageToken: Uint8Array | undefined;
  private readonly taken: RewardsTaken = { throughLine: 0 };
  private closed = false;
  /** The container activities scheduled so far (event id), whose results may carry the last page. */
  private readonly containerActivities = new Set<string>();

  constructor(
    private readonly client: Client,
    private readonly workflowId: string,
  ) {}

  /**
   * The rewards in the events after the last call's, waiting (up to the server's long-poll timeout,
   * about 20 s) for the history to grow when it has nothing new. `closed`: the job has ended and
   * nothing more will come. Throws what the server answered, except NOT_FOUND.
   */
  async next(abort: AbortSignal): Promise<HistoryRead> {
    if (this.closed) return { kind: 'read', rewards: [], closed: true };
    let response: temporal.api.workflowservice.v1.IGetWorkflowExecutionHistoryResponse;
    try {
      response = await this.client.connection.withAbortSignal(abort, () =>
        this.client.workflowService.getWorkflowExecutionHistory({
          namespace: this.client.options.namespace,
          execution: { workflowId: this.workflowId },
          ...(this.nextPageToken ? { nextPageToken: this.nextPageToken } : {}),
          waitNewEvent: true,
        }),
      );
    } catch (error) {
      if (!this.nextPageToken && (error as { code?: unknown }).code === NOT_FOUND) return { kind: 'not-started' };
      throw error;
    }
    const rewards: Reward[] = [];
    for (const event of response.history?.events ?? []) {
      // A retried job's first rewards are the instances its original scored, in its input (workflows/job-rewards.ts).
      const started = event.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
      if (started) {
        const job = await fromStoredPayload<JobSpec>(started);
        if (job.carried) rewards.push(...takeNewRewards(this.taken, carriedBatch(job.carried.rewards)));
      }
      const signal = event.workflowExecutionSignaledEventAttributes;
      if (signal?.signalName === REWARDS_SIGNAL) {
        const payload = signal.input?.payloads?.[0];
        if (payload) rewards.push(...takeNewRewards(this.taken, await fromStoredPayload<RewardBatch>(payload)));
      }
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled && CONTAINER_ACTIVITIES.has(scheduled.activityType?.name ?? '')) this.containerActivities.add(String(event.eventId));
      const completed = event.activityTaskCompletedEventAttributes;
      const payload = completed?.result?.payloads?.[0];
      if (payload && this.containerActivities.has(String(completed!.scheduledEventId))) {
        // runJobOnHost's output holds the outcome; runTaskContainer's is the outcome.
        const output = await fromStoredPayload<JobOnHostOutput | ContainerOutcome>(payload);
        const batch = 'outcome' in output ? output.outcome.rewards : output.rewards;
        if (batch) rewards.push(...takeNewRewards(this.taken, batch));
      }
      if (
        event.workflowExecutionCompletedEventAttributes ||
        event.workflowExecutionFailedEventAttributes ||
        event.workflowExecutionTimedOutEventAttributes ||
        event.workflowExecutionCanceledEventAttributes ||
        event.workflowExecutionTerminatedEventAttributes ||
        event.workflowExecutionContinuedAsNewEventAttributes
      )
        this.closed = true;
    }
    const token = response.nextPageToken;
    // No token: the history of a closed workflow was read to its end.
    if (!token || token.length === 0) this.closed = true;
    else this.nextPageToken = token;
    return { kind: 'read', rewards, closed: this.closed };
  }
}
