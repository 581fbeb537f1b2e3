// Which host a running job is on, from its workflow's description, for readers without a worker: a
// restarting worker's orphan sweep and the health findings of waiting commands.

import type { WorkflowExecutionDescription } from '@temporalio/client';
import { hostOfWorkerIdentity } from '../runs/worker-identity.js';

/**
 * The memo of jobs that claimed a host before their first attempt (they wrote it there), else the
 * worker that took the latest attempt of the job's pending host activity (later attempts of a host
 * activity are pinned to that worker's host). Undefined when no such attempt was taken yet.
 */
export function currentHostOf(described: Pick<WorkflowExecutionDescription, 'memo' | 'raw'>): string | undefined {
  if (typeof described.memo?.host === 'string') return described.memo.host;
  for (const activity of described.raw.pendingActivities ?? []) {
    if (activity.activityType?.name !== 'runJobOnHost' || !activity.lastWorkerIdentity) continue;
    const host = hostOfWorkerIdentity(activity.lastWorkerIdentity);
    if (host) return host;
  }
  return undefined;
}
