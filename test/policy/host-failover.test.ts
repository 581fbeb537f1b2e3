// The job workflow's host failover (workflows/job-workflow.ts, host-failover.ts) with a fake engine on the
// time-skipping test server: a host that stops heartbeating, a host whose queue nobody answers, and how the
// job then picks the host of its next attempt. Hosts h1-h3 have live workers; any other host id is gone.
//
// The test server does not skip time while an activity is pending (it locks its clock from the schedule to
// the activity's end or timeout): heartbeat and schedule-to-start timeouts pass in real time, so these jobs
// set both at 1 s, the options' least. Retry backoff and timers still pass at once.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunOptions } from '../../runs/run-options.js';
import type { JobResult, JobSpec } from '../../runs/run-spec.js';
import { hostDies, jobSpec, PolicyEnv, ran, retryable, type Scenario } from '../support/policy-env.js';

let p: PolicyEnv;
beforeAll(async () => {
  p = await PolicyEnv.start('failover');
});
afterAll(async () => {
  await p?.close();
});

async function runJob(scenario: Partial<Scenario>, options: Partial<RunOptions> = {}): Promise<JobResult> {
  p.set(scenario);
  const job = jobSpec(`${p.nextId('failover')}.000-t`, { hostTimeout: 1, heartbeatTimeout: 1, ...options });
  return p.env.client.workflow.execute<(job: JobSpec) => Promise<JobResult>>('jobWorkflow', { taskQueue: p.sharedQueue, workflowId: job.jobId, args: [job] });
}

/** The engine of a fleet where host `gone` dies under whatever it runs and every live host succeeds. */
const goneDies: Scenario['engine'] = async (call, ctx) => (call.host === 'gone' ? hostDies(ctx) : ran(call));

describe('a host that stops heartbeating under a job', () => {
  it('pins the next attempt to it (the container may run on there); when its queue goes unanswered, the job claims a live host and finishes there', async () => {
    const result = await runJob({ firstHost: 'gone', claims: ['h2'], engine: goneDies });
    expect(result).toMatchObject({ status: 'SUCCEEDED', host: 'h2', hostsTried: ['gone', 'h2'] });
    expect(p.trail()).toEqual(['gone@shared#1', 'h2@h2#2']);
    // The attempt on h2 goes on from the dead host's last heartbeat.
    expect(p.attempts[1]!.earlier).toEqual({ attempts: 1, heartbeat: { host: 'gone' } });
    expect(p.claimed).toBe(1);
  });

  it('fails INFRASTRUCTURE once maxHosts hosts went unanswered, naming each', async () => {
    const result = await runJob({ firstHost: 'gone', claims: ['gone-too', 'h2'], engine: goneDies }, { maxHosts: 2 });
    expect(result).toMatchObject({
      status: 'FAILED',
      reason: 'INFRASTRUCTURE',
      message: 'host gone-too did not pick up the job within 1s; gave up after 2 hosts (gone, gone-too)',
      hostsTried: ['gone', 'gone-too'],
    });
    expect(p.trail()).toEqual(['gone@shared#1']);
    expect(p.claimed).toBe(1);
  });

  it('with maxHosts 1, gives up on the first host without claiming another', async () => {
    const result = await runJob({ firstHost: 'gone', claims: ['h2'], engine: goneDies }, { maxHosts: 1 });
    expect(result).toMatchObject({
      status: 'FAILED',
      reason: 'INFRASTRUCTURE',
      message: 'host gone did not pick up the job within 1s; gave up after 1 hosts (gone)',
      hostsTried: ['gone'],
    });
    expect(p.claimed).toBe(0);
  });

  it('starved before its first heartbeat reached the server: the job finds the host in its history, goes back there first', async () => {
    const result = await runJob({ firstHost: 'gone', historyHost: 'gone', claims: ['h3'], beatsFirst: (call) => call.host !== 'gone', engine: goneDies });
    expect(result).toMatchObject({ status: 'SUCCEEDED', host: 'h3', hostsTried: ['gone', 'h3'] });
    expect(p.trail()).toEqual(['gone@shared#1', 'h3@h3#2']);
    // No heartbeat to go on from: the next attempt knows only that one came before it.
    expect(p.attempts[1]!.earlier).toEqual({ attempts: 1 });
  });

  it('starved before its first heartbeat, and its history names no host: the job claims one at once', async () => {
    const result = await runJob({ firstHost: 'gone', claims: ['h2'], beatsFirst: (call) => call.host !== 'gone', engine: goneDies });
    expect(result).toMatchObject({ status: 'SUCCEEDED', host: 'h2', hostsTried: ['h2'] });
    expect(p.trail()).toEqual(['gone@shared#1', 'h2@h2#2']);
  });

  it('a pinned attempt whose heartbeat stops on a host that still answers is retried on that host, from its last heartbeat: no failover', async () => {
    const result = await runJob({
      engine: async (call, ctx) => {
        if (call.jobAttempt === 1) throw retryable();
        if (call.jobAttempt === 2) {
          ctx.heartbeat({ host: call.host, records: 7 });
          return hostDies(ctx);
        }
        return ran(call);
      },
    });
    expect(result).toMatchObject({ status: 'SUCCEEDED', host: 'h1', hostsTried: ['h1'] });
    expect(p.trail()).toEqual(['h1@shared#1', 'h1@h1#2', 'h1@h1#3']);
    expect(p.attempts[2]!.heartbeatDetails).toEqual({ host: 'h1', records: 7 });
    expect(p.claimed).toBe(0);
  });
});

describe('a first attempt that fails on a host that is gone by the retry', () => {
  it('names its host; the job pins there, finds the queue unanswered and moves on to a claimed host', async () => {
    const result = await runJob({
      firstHost: 'gone',
      claims: ['h3'],
      engine: async (call) => (call.host === 'gone' ? Promise.reject(retryable('worker shutting down', 'AttemptAborted')) : ran(call)),
    });
    expect(result).toMatchObject({ status: 'SUCCEEDED', host: 'h3', hostsTried: ['gone', 'h3'] });
    expect(p.trail()).toEqual(['gone@shared#1', 'h3@h3#2']);
    expect(p.attempts[1]!.earlier).toEqual({ attempts: 1 });
  });
});
