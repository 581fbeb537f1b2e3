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
