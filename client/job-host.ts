// Which host a running job is on, from its workflow's description, for readers without a worker: a
// restarting worker's orphan sweep and the health findings of waiting commands.

import type { WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { hostOfQueue } from '../runs/host-queues.js';
import { hostOfWorkerIdentity } from '../runs/worker-identity.js';

/**
 * The host whose queue the job's pending host activity is pinned to; else, for a first attempt (on the
 * shared queue), the host of the worker that took it. Undefined while no host is known (the first attempt
 * not taken yet, or the job between attempts).
 */
export function currentHostOf(described: Pick<WorkflowExecutionDescription, 'raw'>, sharedQueue: string): string | undefined {
  for (const activity of described.raw.pendingActivities ?? []) {
    if (activity.activityType?.name !== 'runJobOnHost') continue;
    const host =
      hostOfQueue(sharedQueue, activity.activityOptions?.taskQueue?.name ?? '') ??
      (activity.lastWorkerIdentity ? hostOfWorkerIdentity(activity.lastWorkerIdentity) : undefined);
    if (host) return host;
  }
  return undefined;
}

/**
 * The host of the job's latest host activity in its history: the host queue it was pinned to, or the
 * worker that took a first attempt. A job between attempts goes on there when that attempt's failure
 * named its host (workflows/host-failover.ts). Undefined when the history has no such activity.
 */
export function lastHostInHistory(events: ReadonlyArray<temporal.api.history.v1.IHistoryEvent>, sharedQueue: string): string | undefined {
  const hostActivities = new Map<string, string | undefined>();
  let last: string | undefined;
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'runJobOnHost') {
      const pinned = hostOfQueue(sharedQueue, scheduled.taskQueue?.name ?? '');
      hostActivities.set(String(event.eventId), pinned);
      last = pinned;
    }
    const started = event.activityTaskStartedEventAttributes;
    if (started && hostActivities.has(String(started.scheduledEventId))) {
      last = hostActivities.get(String(started.scheduledEventId)) ?? (started.identity ? hostOfWorkerIdentity(started.identity) : undefined);
    }
  }
  return last;
}

/** lastHostInHistory of the job workflow behind `handle`, its history fetched whole. */
export async function lastHostOfJob(handle: Pick<WorkflowHandle, 'fetchHistory'>, sharedQueue: string): Promise<string | undefined> {
  return lastHostInHistory((await handle.fetchHistory()).events ?? [], sharedQueue);
}
