// What Temporal knows about a run that is not moving: no worker polling a queue the run needs,
// workflow tasks that keep failing or timing out (a wedged worker, a broken deployment), activities
// stuck in retry. Waiting commands ask this every few seconds and print each new finding once.

import type { Client } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { Settings } from '../config/settings.js';
import { hostQueueName } from '../runs/host-queues.js';
import type { RunProgress } from '../runs/run-spec.js';
import { currentHostOf } from './job-host.js';

export interface HealthFinding {
  /** Stable per cause, so a waiting command prints each finding once. */
  key: string;
  message: string;
  /** The command that shows more. */
  hint: string;
}

const { TaskQueueType } = proto.temporal.api.enums.v1;
type PollerInfo = proto.temporal.api.taskqueue.v1.IPollerInfo;
type DescribeWorkflowResponse = proto.temporal.api.workflowservice.v1.IDescribeWorkflowExecutionResponse;

/** A live poller re-polls within a minute (long polls last about 60 s); older entries are gone workers. */
const POLLER_FRESH_MS = 90_000;
/** Tasks waiting longer than this on a queue mean nobody is taking them (a healthy worker takes them in milliseconds). */
const STALLED_BACKLOG_MS = 10_000;
/** With no poller at all, a shorter wait already tells: a worker that is starting up polls within seconds. */
const UNPOLLED_BACKLOG_MS = 3_000;
/** At most this many running jobs are described per check: the check must stay cheap on big runs. */
const JOBS_PER_CHECK = 16;

export interface QueueState {
  /** Pollers seen within POLLER_FRESH_MS: a killed worker stays listed for a while, so this alone proves little. */
  pollers: PollerInfo[];
  backlogCount: number;
  /** How long the oldest waiting task has waited; the sure sign that nobody picks tasks up. */
  backlogAgeMs: number;
}

export async function queueState(client: Client, namespace: string, queue: string, type: 'workflow' | 'activity', now = Date.now()): Promise<QueueState> {
  const { pollers, stats } = await client.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: queue },
    taskQueueType: type === 'workflow' ? TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW : TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    reportStats: true,
  });
  const age = stats?.approximateBacklogAge;
  return {
    pollers: (pollers ?? []).filter((p) => now - (optionalTsToMs(p.lastAccessTime) ?? 0) < POLLER_FRESH_MS),
    backlogCount: Number(stats?.approximateBacklogCount ?? 0),
    backlogAgeMs: age ? Number(age.seconds ?? 0) * 1000 + (age.nanos ?? 0) / 1e6 : 0,
  };
}

export function stalledQueueFinding(queue: string, type: 'workflow' | 'activity', state: QueueState, hint: string): HealthFinding | undefined {
  const stalled =
    state.backlogCount > 0 && (state.backlogAgeMs > STALLED_BACKLOG_MS || (state.pollers.length === 0 && state.backlogAgeMs > UNPOLLED_BACKLOG_MS));
  if (!stalled) return undefined;
  const waited = state.backlogAgeMs > 0 ? ` for ${Math.round(state.backlogAgeMs / 1000)} s` : '';
  const seen =
    state.pollers.length === 0
      ? 'no worker polls it'
      : `${state.pollers.length} worker(s) seen polling in the last ${POLLER_FRESH_MS / 1000} s (${state.pollers.map((p) => p.identity).join(', ')}), none taking tasks`;
  return { key: `stalled:${type}:${queue}`, message: `${state.backlogCount} ${type} task(s) have waited${waited} on queue "${queue}": ${seen}`, hint };
}

export function workflowTaskFinding(id: string, what: string, raw: DescribeWorkflowResponse, lastWorker?: string): HealthFinding | undefined {
  const attempt = raw.pendingWorkflowTask?.attempt ?? 0;
  if (attempt < 2) return undefined;
  const who = lastWorker ? `the worker ${lastWorker} took it last` : 'a worker polls the queue';
  return {
    key: `wft:${id}`,
    message: `${what}'s workflow task has failed or timed out ${attempt - 1} time(s): ${who} but cannot complete it (a wedged worker, or workflow code that changed under a running run)`,
    hint: 'br doctor; the worker log ($BENCHROUTER_HOME/worker.log for the embedded worker)',
  };
}

export async function checkRunHealth(client: Client, settings: Settings, runId: string, progress?: RunProgress, now = Date.now()): Promise<HealthFinding[]> {
  const namespace = settings.temporalNamespace;
  const findings: HealthFinding[] = [];
  const sharedHint = settings.embedded
    ? 'br doctor; br up starts the embedded worker (br down first if it is wedged)'
    : 'br doctor; start `br worker` on an evaluation host';
  for (const type of ['workflow', 'activity'] as const) {
    const stalled = stalledQueueFinding(settings.sharedQueue, type, await queueState(client, namespace, settings.sharedQueue, type, now), sharedHint);
    if (stalled) findings.push(stalled);
  }
  const run = await client.workflow.getHandle(runId).describe();
  const stuck = (run.raw.pendingWorkflowTask?.attempt ?? 0) >= 2;
  const runTask = workflowTaskFinding(
    runId,
    `run ${runId}`,
    run.raw,
    stuck ? await lastWorkflowTaskWorker(client, namespace, runId, run.runId).catch(() => undefined) : undefined,
  );
  if (runTask) findings.push(runTask);

  const hostsChecked = new Set<string>();
  const running = (progress?.jobs ?? []).filter((job) => job.state === 'running').slice(0, JOBS_PER_CHECK);
  for (const job of running) {
    let described;
    try {
      described = await client.workflow.getHandle(job.jobId).describe();
    } catch {
      continue; // not started yet, or just closed
    }
    const jobTask = workflowTaskFinding(job.jobId, `job ${job.jobId}`, described.raw);
    if (jobTask) findings.push(jobTask);
    const host = currentHostOf(described, settings.sharedQueue);
    for (const activity of described.raw.pendingActivities ?? []) {
      const name = activity.activityType?.name ?? 'activity';
      if ((activity.attempt ?? 1) >= 2 && activity.lastFailure?.message) {
        findings.push({
          key: `retry:${job.jobId}:${name}`,
          message: `job ${job.jobId}: ${name} is being retried (attempt ${activity.attempt}): ${activity.lastFailure.message.split('\n')[0]}`,
          hint: `br status ${runId}; the Temporal Web UI shows the job's history`,
        });
      }
    }
    if (host && !hostsChecked.has(host)) {
      hostsChecked.add(host);
      const queue = hostQueueName(settings.sharedQueue, host);
      const stalled = stalledQueueFinding(
        queue,
        'activity',
        await queueState(client, namespace, queue, 'activity', now),
        `the worker of host ${host} is down or wedged (the job moves to another host after its host timeout); br doctor`,
      );
      if (stalled) findings.push(stalled);
    }
  }
  return findings;
}

/** The identity of the worker that last started a workflow task of the execution (the one that never finished it). */
export async function lastWorkflowTaskWorker(client: Client, namespace: string, workflowId: string, runId: string): Promise<string | undefined> {
  const { history } = await client.workflowService.getWorkflowExecutionHistoryReverse({ namespace, execution: { workflowId, runId }, maximumPageSize: 20 });
  // Newest first: the latest worker that started a workflow task is the one that never finished it.
  return history?.events?.find((event) => event.workflowTaskStartedEventAttributes?.identity)?.workflowTaskStartedEventAttributes?.identity ?? undefined;
}

/** Calls `check` every `intervalMs` and hands each finding not seen before to `report`; stop() ends it. */
export function watchHealth(check: () => Promise<HealthFinding[]>, report: (finding: HealthFinding) => void, intervalMs = 5_000): { stop(): void } {
  const seen = new Set<string>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    try {
      for (const finding of await check()) {
        if (seen.has(finding.key) || stopped) continue;
        seen.add(finding.key);
        report(finding);
      }
    } catch {
      // Temporal itself unreachable: the waiting command's own calls say so.
    }
    if (!stopped) timer = setTimeout(() => void tick(), intervalMs);
  };
  timer = setTimeout(() => void tick(), intervalMs);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
