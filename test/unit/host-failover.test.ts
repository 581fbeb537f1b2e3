// The job's failover decision (workflows/host-failover.ts): which failure means the claimed host is gone,
// and when the job claims another host or gives up. The workflow around it is exercised against the dev
// server in test/job-failover.test.ts and by the replayed failover history.

import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { afterFirstAttempt, afterHostLost, failureReasonOf, hostLostMessage, isHostLost } from '../../workflows/host-failover.js';
import { namingHost } from '../../activities/run-job-on-host.js';

const activityFailure = (cause: Error) => new ActivityFailure('activity failed', 'ensureImage', '2', RetryState.NON_RETRYABLE_FAILURE, undefined, cause);

describe('isHostLost', () => {
  it('is true only for an activity that timed out before any worker of its host queue started it', () => {
    expect(isHostLost(activityFailure(new TimeoutFailure(undefined, undefined, TimeoutType.SCHEDULE_TO_START)))).toBe(true);
  });

  it('is false for timeouts of an activity a worker did start: the host answered', () => {
    for (const timeoutType of [TimeoutType.START_TO_CLOSE, TimeoutType.HEARTBEAT, TimeoutType.SCHEDULE_TO_CLOSE]) {
      expect(isHostLost(activityFailure(new TimeoutFailure(undefined, undefined, timeoutType))), timeoutType).toBe(false);
    }
  });

  it("is false for the activity's own failures and for errors that are not activity failures", () => {
    expect(isHostLost(activityFailure(ApplicationFailure.nonRetryable('no Dockerfile', 'ImageProblem')))).toBe(false);
    expect(isHostLost(new TimeoutFailure(undefined, undefined, TimeoutType.SCHEDULE_TO_START))).toBe(false);
    expect(isHostLost(new Error('schedule-to-start'))).toBe(false);
    expect(isHostLost(undefined)).toBe(false);
  });
});

describe('afterHostLost', () => {
  const lost = hostLostMessage('host-b', 120);

  it('names the host and how long the job waited for it', () => {
    expect(lost).toBe('host host-b did not pick up the job within 120s');
  });

  it('claims another host while fewer than maxHosts were tried', () => {
    expect(afterHostLost(lost, ['host-b'], 3)).toEqual({ action: 'claim-another-host' });
    expect(afterHostLost(lost, ['host-a', 'host-b'], 3)).toEqual({ action: 'claim-another-host' });
  });

  it('gives up once maxHosts were tried, naming every host in the order tried', () => {
    expect(afterHostLost(lost, ['host-a', 'host-c', 'host-b'], 3)).toEqual({
      action: 'give-up',
      message: 'host host-b did not pick up the job within 120s; gave up after 3 hosts (host-a, host-c, host-b)',
    });
  });

  it('gives up at once with maxHosts 1, and counts a host claimed twice as two tries', () => {
    expect(afterHostLost(lost, ['host-b'], 1)).toEqual({ action: 'give-up', message: `${lost}; gave up after 1 hosts (host-b)` });
    expect(afterHostLost(lost, ['host-b', 'host-b'], 2)).toEqual({ action: 'give-up', message: `${lost}; gave up after 2 hosts (host-b, host-b)` });
  });
});

describe('failureReasonOf', () => {
  it('is IMAGE_BUILD for a Dockerfile the host could not build, and for a build that kept failing', () => {
    expect(failureReasonOf(activityFailure(ApplicationFailure.nonRetryable('no Dockerfile', 'ImageProblem')))).toBe('IMAGE_BUILD');
    expect(failureReasonOf(activityFailure(ApplicationFailure.nonRetryable('daemon refused the build', 'ImageBuildError')))).toBe('IMAGE_BUILD');
  });

  it('is INFRASTRUCTURE for every other failure of the host activity', () => {
    expect(failureReasonOf(activityFailure(ApplicationFailure.nonRetryable('$KEY is not set', 'MissingSecret')))).toBe('INFRASTRUCTURE');
    expect(failureReasonOf(activityFailure(ApplicationFailure.retryable('container inspect: connect ENOENT')))).toBe('INFRASTRUCTURE');
    expect(failureReasonOf(activityFailure(new TimeoutFailure(undefined, undefined, TimeoutType.HEARTBEAT)))).toBe('INFRASTRUCTURE');
    expect(failureReasonOf(new Error('ImageProblem'))).toBe('INFRASTRUCTURE');
  });
});

describe('afterFirstAttempt', () => {
  const failed = (cause: Error) => new ActivityFailure('activity failed', 'runJobOnHost', '1', RetryState.MAXIMUM_ATTEMPTS_REACHED, undefined, cause);

  it("pins the retry to the host a failure's first detail names, as the activity's errors carry it", () => {
    const error = failed(namingHost(new Error('connect ENOENT /var/run/docker.sock'), 'gpu-7') as Error);
    expect(afterFirstAttempt(error)).toEqual({ action: 'retry', host: 'gpu-7' });
  });

  it('fails the job on a final failure type or a non-retryable failure, still naming its host', () => {
    for (const cause of [
      ApplicationFailure.create({ type: 'ImageProblem', message: 'no Dockerfile', details: [{ host: 'a' }] }),
      ApplicationFailure.create({ type: 'MissingSecret', message: '$KEY is not set', details: [{ host: 'a' }] }),
      ApplicationFailure.create({ type: 'ImageBuildError', nonRetryable: true, message: 'build failed 3 times', details: [{ host: 'a' }] }),
    ]) {
      expect(afterFirstAttempt(failed(cause)), cause.type ?? '').toEqual({ action: 'fail', host: 'a' });
    }
  });

  it('pins to the host of the last heartbeat after a timeout (a worker killed mid-job), handing that heartbeat on', () => {
    const heartbeat = { host: 'b', containerId: 'c1', records: { offset: 120, line: 3 } };
    expect(afterFirstAttempt(failed(new TimeoutFailure(undefined, heartbeat, TimeoutType.HEARTBEAT)))).toEqual({ action: 'retry', host: 'b', heartbeat });
  });

  it("looks the host up in the job's history after a timeout that names none: the attempt started somewhere, and its container may run there", () => {
    // A host starved before its first heartbeat reached the server: the timeout failure names no worker.
    expect(afterFirstAttempt(failed(new TimeoutFailure(undefined, undefined, TimeoutType.HEARTBEAT)))).toEqual({ action: 'retry', lookUpHost: true });
    expect(afterFirstAttempt(failed(new TimeoutFailure(undefined, { step: 'building' }, TimeoutType.START_TO_CLOSE)))).toEqual({
      action: 'retry',
      lookUpHost: true,
      heartbeat: { step: 'building' },
    });
  });

  it('retries with no host when a failure names none (the job then claims one), and never looks one up for a failure of its own', () => {
    expect(afterFirstAttempt(failed(ApplicationFailure.create({ message: 'payload could not be decoded', details: [{ host: 7 }] })))).toEqual({
      action: 'retry',
    });
    expect(afterFirstAttempt(new Error('not an activity failure'))).toEqual({ action: 'retry' });
  });
});

describe('namingHost', () => {
  it("keeps an ApplicationFailure's type, message, retryability and details after the host", () => {
    const original = ApplicationFailure.create({ type: 'ImageBuildError', nonRetryable: true, message: 'step 3 failed', details: [{ step: 3 }] });
    const named = namingHost(original, 'h1') as ApplicationFailure;
    expect(named).toBeInstanceOf(ApplicationFailure);
    expect([named.type, named.message, named.nonRetryable, named.details]).toEqual(['ImageBuildError', 'step 3 failed', true, [{ host: 'h1' }, { step: 3 }]]);
    expect(named.stack).toBe(original.stack);
  });

  it("turns a plain error into a retryable failure typed by the error's name", () => {
    const named = namingHost(new RangeError('bad size'), 'h1') as ApplicationFailure;
    expect([named.type, named.message, named.nonRetryable, named.details]).toEqual(['RangeError', 'bad size', false, [{ host: 'h1' }]]);
  });

  it('passes cancellations and non-errors through as they are', () => {
    const aborted = new DOMException('aborted', 'AbortError');
    expect(namingHost(aborted, 'h1')).toBe(aborted);
    expect(namingHost('text', 'h1')).toBe('text');
  });
});
