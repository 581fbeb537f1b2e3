// The job's failover decision, apart from the workflow so it can be tested without a server: which
// activity failure means the claimed host is gone, and whether the job then claims another host or gives up.

import { ActivityFailure, ApplicationFailure, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { FAILURE_TYPES } from '../runs/failure-types.js';
import type { FailureReason } from '../runs/run-spec.js';

/** The host's queue went unanswered: its worker is gone. Any other failure is the job's own. */
export function isHostLost(error: unknown): boolean {
  return error instanceof ActivityFailure && error.cause instanceof TimeoutFailure && error.cause.timeoutType === TimeoutType.SCHEDULE_TO_START;
}

export function hostLostMessage(hostId: string, hostTimeoutSeconds: number): string {
  return `host ${hostId} did not pick up the job within ${hostTimeoutSeconds}s`;
}

export type FailoverDecision = { action: 'claim-another-host' } | { action: 'give-up'; message: string };

/** After a lost host: claim another while fewer than `maxHosts` were tried, else fail naming every host tried. */
export function afterHostLost(lostMessage: string, hostsTried: ReadonlyArray<string>, maxHosts: number): FailoverDecision {
  if (hostsTried.length < maxHosts) return { action: 'claim-another-host' };
  return { action: 'give-up', message: `${lostMessage}; gave up after ${hostsTried.length} hosts (${hostsTried.join(', ')})` };
}

const IMAGE_FAILURES: ReadonlyArray<string> = [FAILURE_TYPES.imageProblem, FAILURE_TYPES.imageBuild];

/** The reason a failed host activity gives its job (the host answered): an image it could not build, or infrastructure. */
export function failureReasonOf(error: unknown): FailureReason {
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  return cause instanceof ApplicationFailure && cause.type !== undefined && cause.type !== null && IMAGE_FAILURES.includes(cause.type)
    ? 'IMAGE_BUILD'
    : 'INFRASTRUCTURE';
}

/** Failure types after which no host tries the job again: the pinned host activity's non-retryable ones. */
export const FINAL_HOST_FAILURES: ReadonlyArray<string> = [FAILURE_TYPES.missingOnHost, FAILURE_TYPES.imageProblem];

/**
 * After a job's first attempt (on the shared queue) failed: `fail` when its failure is final, else
 * `retry`, pinned to the host that ran it when a failure detail or its last heartbeat names one
 * (the container may still run there), with that heartbeat for the next attempt to resume from.
 */
export type AfterFirstAttempt =
  | { action: 'fail'; host?: string }
  /**
   * `lookUpHost`: the attempt ran somewhere (it timed out after it started) but neither a heartbeat nor a
   * failure detail named the host, as when the host was starved before its first heartbeat reached the
   * server; the server's timeout failure names no worker. The job's history does (its started event):
   * the container may run there, so the next attempt goes there too, not to whichever host claims it.
   */
  | { action: 'retry'; host?: string; heartbeat?: unknown; lookUpHost?: true };

export function afterFirstAttempt(error: unknown): AfterFirstAttempt {
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  if (cause instanceof ApplicationFailure) {
    const host = hostNamedBy(cause.details?.[0]);
    const final = cause.nonRetryable === true || (typeof cause.type === 'string' && FINAL_HOST_FAILURES.includes(cause.type));
    return { action: final ? 'fail' : 'retry', ...(host ? { host } : {}) };
  }
  if (cause instanceof TimeoutFailure) {
    const heartbeat = cause.lastHeartbeatDetails;
    const host = hostNamedBy(heartbeat);
    return {
      action: 'retry',
      ...(host ? { host } : { lookUpHost: true }),
      ...(heartbeat !== undefined && heartbeat !== null ? { heartbeat } : {}),
    };
  }
  return { action: 'retry' };
}

function hostNamedBy(details: unknown): string | undefined {
  const host = (details as { host?: unknown } | null | undefined)?.host;
  return typeof host === 'string' && host !== '' ? host : undefined;
}
