// The job workflow's retry rules (workflows/job-workflow.ts, host-failover.ts) with a fake engine on the
// time-skipping test server: how many attempts a fault gets, which faults get none, and where each attempt
// runs. The backoff between attempts (minutes of workflow time) passes at once.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunOptions } from '../../runs/run-options.js';
import type { JobResult, JobSpec } from '../../runs/run-spec.js';
import { final, jobSpec, PolicyEnv, ran, retryable, type Scenario } from '../support/policy-env.js';

let p: PolicyEnv;
beforeAll(async () => {
  p = await PolicyEnv.start('retries');
});
afterAll(async () => {
  await p?.close();
});

async function runJob(scenario: Partial<Scenario>, options: Partial<RunOptions> = {}): Promise<JobResult> {
  p.set(scenario);
  const job = jobSpec(`${p.nextId('retries')}.000-t`, options);
  return p.env.client.workflow.execute<(job: JobSpec) => Promise<JobResult>>('jobWorkflow', { taskQueue: p.sharedQueue, workflowId: job.jobId, args: [job] });
}

/** Seconds of workflow time from the job's start to its end (a failed job's timings are the workflow's clock). */
const workflowSeconds = (result: JobResult) => (Date.parse(result.timings.finishedAt) - Date.parse(result.timings.queuedAt)) / 1000;

describe('a job that succeeds', () => {
  it('runs once, where its first attempt landed, and claims no host', async () => {
    const result = await runJob({ engine: async (call) => ran(call, 0.5) });
    expect(result).toMatchObject({ status: 'SUCCEEDED', host: 'h1', hostsTried: ['h1'], result: { overall: 0.5 }, exitCode: 0 });
    expect(p.trail()).toEqual(['h1@shared#1']);
    expect(p.claimed).toBe(0);
  });
});

describe('a retryable fault', () => {
  it('is retried on the host of the first attempt, pinned to its queue, until it succeeds', async () => {
    const result = await runJob({ engine: async (call) => (call.jobAttempt < 3 ? Promise.reject(retryable()) : ran(call)) });
    expect(result).toMatchObject({ status: 'SUCCEEDED', host: 'h1', hostsTried: ['h1'] });
    expect(p.trail()).toEqual(['h1@shared#1', 'h1@h1#2', 'h1@h1#3']);
    // The pinned activity counts the first attempt: its attempts 1 and 2 are the job's 2 and 3.
    expect(p.attempts.map((a) => [a.activityAttempt, a.earlier])).toEqual([
      [1, undefined],
      [1, { attempts: 1 }],
      [2, { attempts: 1 }],
    ]);
    expect(p.claimed).toBe(0);
  });

  it('gets 1 + 10 attempts in all, all on its host, minutes of backoff apart, then fails INFRASTRUCTURE with its last message', async () => {
    const result = await runJob({ engine: async (call) => Promise.reject(retryable(`daemon did not answer (attempt ${call.jobAttempt})`)) });
    expect(result).toMatchObject({ status: 'FAILED', reason: 'INFRASTRUCTURE', message: 'daemon did not answer (attempt 11)', hostsTried: ['h1'] });
    expect(p.trail()).toEqual(['h1@shared#1', ...Array.from({ length: 10 }, (_, i) => `h1@h1#${i + 2}`)]);
    // Backoff 1, 2, 4, 8, 16, then 30 s (the cap) four times between the pinned activity's 10 attempts.
    expect(workflowSeconds(result)).toBeGreaterThanOrEqual(151);
    expect(p.claimed).toBe(0);
  });

  it('that kills the container from outside (a stopping daemon) is retried on the same host, whose next attempt restarts it', async () => {
    const result = await runJob({
      engine: async (call) =>
        call.jobAttempt === 1 ? Promise.reject(retryable('container was killed from outside BenchRouter (exit 137)', 'ContainerKilled')) : ran(call),
    });
    expect(result).toMatchObject({ status: 'SUCCEEDED', host: 'h1', hostsTried: ['h1'] });
    expect(p.trail()).toEqual(['h1@shared#1', 'h1@h1#2']);
  });
});

describe('a final fault is not retried', () => {
  it('a non-retryable failure of the first attempt: FAILED INFRASTRUCTURE after one attempt', async () => {
    const result = await runJob({ engine: async () => Promise.reject(final('the model endpoint refused the key', 'EndpointRefused')) });
    expect(result).toMatchObject({ status: 'FAILED', reason: 'INFRASTRUCTURE', message: 'the model endpoint refused the key', hostsTried: ['h1'] });
    expect(p.trail()).toEqual(['h1@shared#1']);
  });

  it('an ImageProblem, final by its type alone: FAILED IMAGE_BUILD after one attempt, no other host claimed', async () => {
    const { ApplicationFailure } = await import('@temporalio/common');
    const result = await runJob({
      claims: ['h2'],
      engine: async () => Promise.reject(ApplicationFailure.create({ type: 'ImageProblem', message: 'environments/shell: no Dockerfile' })),
    });
    expect(result).toMatchObject({ status: 'FAILED', reason: 'IMAGE_BUILD', message: 'environments/shell: no Dockerfile', hostsTried: ['h1'] });
    expect(p.trail()).toEqual(['h1@shared#1']);
    expect(p.claimed).toBe(0);
  });

  it('a missing secret on the pinned host (MissingSecret, final by type): no attempt after it', async () => {
    const { ApplicationFailure } = await import('@temporalio/common');
    const result = await runJob({
      engine: async (call) =>
        call.jobAttempt === 1
          ? Promise.reject(retryable())
          : Promise.reject(ApplicationFailure.create({ type: 'MissingSecret', message: 'OPENAI_API_KEY is not set on host h1' })),
    });
    expect(result).toMatchObject({ status: 'FAILED', reason: 'INFRASTRUCTURE', message: 'OPENAI_API_KEY is not set on host h1', hostsTried: ['h1'] });
    expect(p.trail()).toEqual(['h1@shared#1', 'h1@h1#2']);
  });

  it('an image build the daemon keeps failing: retried until the activity makes it final (its 3rd attempt), then FAILED IMAGE_BUILD', async () => {
    // runJobOnHost turns a retryable ImageBuildError into a non-retryable one from the job's 3rd attempt on (IMAGE_BUILD_ATTEMPTS).
    const { IMAGE_BUILD_ATTEMPTS } = await import('../../activities/run-job-on-host.js');
    const result = await runJob({
      engine: async (call) =>
        Promise.reject(
          call.jobAttempt >= IMAGE_BUILD_ATTEMPTS
            ? final('build failed: network unreachable', 'ImageBuildError')
            : retryable('build failed: network unreachable', 'ImageBuildError'),
        ),
    });
    expect(result).toMatchObject({ status: 'FAILED', reason: 'IMAGE_BUILD', message: 'build failed: network unreachable', hostsTried: ['h1'] });
    expect(p.trail()).toEqual(['h1@shared#1', 'h1@h1#2', 'h1@h1#3']);
  });

  it("the benchmark's own failure (a non-zero exit) is an outcome, not a fault: one attempt", async () => {
    const result = await runJob({
      engine: async (call) => ran(call, { status: 'FAILED', reason: 'NON_ZERO_EXIT', message: 'exit code 3' }, { exitCode: 3 }),
    });
    expect(result).toMatchObject({ status: 'FAILED', reason: 'NON_ZERO_EXIT', message: 'exit code 3', exitCode: 3, hostsTried: ['h1'] });
    expect(p.trail()).toEqual(['h1@shared#1']);
  });

  it('a task that ran past its timeout: TIMED_OUT after one attempt', async () => {
    const result = await runJob({
      engine: async (call) => ran(call, { status: 'TIMED_OUT', message: 'killed after 600s' }, { kind: 'timed_out', exitCode: 137 }),
    });
    expect(result).toMatchObject({ status: 'TIMED_OUT', message: 'killed after 600s', hostsTried: ['h1'] });
    expect(p.trail()).toEqual(['h1@shared#1']);
  });
});
