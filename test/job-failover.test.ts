// The job workflow's failover on the real dev server: the job's first attempt claims its host; a host
// whose queue goes unanswered makes the job claim another, up to maxHosts; a failure on a live host does not. Hosts are stand-in activity workers
// (the Docker side is test/durability.test.ts's). The same rules are checked in seconds on the SDK's time-skipping
// test server (test/policy/host-failover.test.ts); this file keeps them on the dev server users run, whose
// schedule-to-start and heartbeat timeouts are the real ones, with waits of 1 s.

import { ApplicationFailure } from '@temporalio/common';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { JobOnHostInput, JobOnHostOutput } from '../activities/run-job-on-host.js';
import { Context } from '@temporalio/activity';
import { lastHostInHistory } from '../client/job-host.js';
import { hostQueueName, type ClaimedHost } from '../runs/host-queues.js';
import { workerIdentity } from '../runs/worker-identity.js';
import { runOptions } from '../runs/run-options.js';
import type { JobResult, JobSpec } from '../runs/run-spec.js';

const sharedQueue = `test-failover-${randomBytes(3).toString('hex')}`;
const host = (hostId: string): ClaimedHost => ({ hostId, taskQueue: hostQueueName(sharedQueue, hostId) });
const live = host('live');

/** The hosts claimHost hands out, in order; each test sets its own. */
let claims: ClaimedHost[] = [];
let claimed = 0;
let imageFails = false;
/** What the stand-in for a first attempt (on the shared queue) does; each test of that shape sets it. */
let firstAttempt: () => Promise<JobOnHostOutput> = async () => ranOn('live');
let firstAttempts = 0;

function ranOn(hostId: string): JobOnHostOutput {
  return {
    host: hostId,
    image: 'stand-in:latest',
    imageBuilt: false,
    outcome: {
      kind: 'exited',
      exitCode: 0,
      oomKilled: false,
      oomKills: 0,
      startedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: '2026-01-01T00:00:02.000Z',
      lastLogLine: '',
      reattached: false,
      runtime: 'simple',
    },
    harvest: { status: 'SUCCEEDED', result: { overall: 0.5, raw_metrics: {} } },
  };
}

/** What the live host's queue was handed, since the last first attempt. */
const pinnedInputs: JobOnHostInput[] = [];

let connection: NativeConnection;
let client: Client;
let workers: Worker[];
let running: Promise<unknown>;

beforeAll(async () => {
  // This file's process has its own runtime: workers log only what goes wrong.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }) });
  const shared = await Worker.create({
    connection,
    taskQueue: sharedQueue,
    // As a `br worker` of host 'live' names itself: the job's history then says which host took an attempt.
    identity: workerIdentity('live', process.pid),
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities: {
      claimHost: async (): Promise<ClaimedHost> => claims[claimed++] ?? live,
      // As the worker's own: the host that took the first attempt, from the job's history.
      hostOfFirstAttempt: async (): Promise<string | undefined> =>
        lastHostInHistory((await client.workflow.getHandle(Context.current().info.workflowExecution!.workflowId).fetchHistory()).events ?? [], sharedQueue),
      runJobOnHost: async (input: JobOnHostInput): Promise<JobOnHostOutput> => {
        firstAttempts += 1;
        pinnedInputs.length = 0;
        expect(input.earlier).toBeUndefined();
        return firstAttempt();
      },
    },
  });
  const onLiveHost = await Worker.create({
    connection,
    taskQueue: live.taskQueue,
    activities: {
      runJobOnHost: async (input: JobOnHostInput): Promise<JobOnHostOutput> => {
        pinnedInputs.push(input);
        if (imageFails) throw ApplicationFailure.create({ type: 'ImageProblem', nonRetryable: true, message: 'environments/shell: no Dockerfile' });
        return ranOn('live');
      },
    },
  });
  workers = [shared, onLiveHost];
  running = Promise.all(workers.map((w) => w.run()));
});

afterAll(async () => {
  for (const worker of workers ?? []) worker.shutdown();
  await running;
  await client?.connection.close();
  await connection?.close();
});

function runJob(options: { hosts: ClaimedHost[]; maxHosts: number; imageFails?: boolean; heartbeatTimeout?: number }): Promise<JobResult> {
  claims = options.hosts;
  claimed = 0;
  firstAttempts = 0;
  pinnedInputs.length = 0;
  imageFails = options.imageFails ?? false;
  const jobId = `${sharedQueue}.${randomBytes(3).toString('hex')}`;
  const job: JobSpec = {
    runId: sharedQueue,
    jobId,
    benchmark: { name: 'outcomes', dir: '/nonexistent/outcomes', digest: 'd' },
    task: {
      name: 'scores-half',
      environment: 'shell',
      command: 'true',
      timeoutSeconds: 60,
      resultMapping: {},
      docker: false,
      dockerImages: [],
      extraEnv: {},
      resources: { memory: '1g', cpus: 1, pids: 256 },
      network: 'isolated',
    },
    options: runOptions({
      model: 'm',
      endpoint: 'http://127.0.0.1:9/v1',
      preflight: false,
      hostTimeout: 1,
      heartbeatTimeout: options.heartbeatTimeout ?? 30,
      maxHosts: options.maxHosts,
      gateway: false,
    }),
    resolved: { prices: {} },
    cacheFrom: [],
    repeat: { index: 0 },
  };
  return client.workflow.execute<(job: JobSpec) => Promise<JobResult>>('jobWorkflow', { taskQueue: sharedQueue, workflowId: jobId, args: [job] });
}

/** A first attempt that dies on `hostId` the way a worker shutting down mid-attempt does: it names the host, the job pins the next attempt there. */
const diesOn = (hostId: string) => async (): Promise<JobOnHostOutput> => {
  throw ApplicationFailure.create({ type: 'AttemptAborted', message: 'worker shutting down', details: [{ host: hostId }] });
};

describe('a job claims its host by its first attempt', () => {
  it('and runs where the first attempt landed, with no host claimed before it', async () => {
    firstAttempt = async () => ranOn('live');
    const result = await runJob({ hosts: [host('silent')], maxHosts: 3 });
    expect(result).toMatchObject({
      status: 'SUCCEEDED',
      host: 'live',
      hostsTried: ['live'],
      result: { overall: 0.5 },
      image: 'stand-in:latest',
      imageBuilt: false,
      exitCode: 0,
      runtime: 'simple',
    });
    expect(result.timings.containerSeconds).toBe(2);
    expect([firstAttempts, claimed, pinnedInputs.length]).toEqual([1, 0, 0]);
  });

  it('retries on the host the failed first attempt names, counting that attempt', async () => {
    firstAttempt = async () => {
      throw ApplicationFailure.create({ type: 'DockerError', message: 'the Docker daemon did not answer', details: [{ host: 'live' }] });
    };
    const result = await runJob({ hosts: [host('silent')], maxHosts: 3 });
    expect(result).toMatchObject({ status: 'SUCCEEDED', host: 'live', hostsTried: ['live'] });
    expect([firstAttempts, claimed]).toEqual([1, 0]);
    expect(pinnedInputs.map((input) => input.earlier)).toEqual([{ attempts: 1 }]);
  });

  it('claims a host when the failure names none', async () => {
    firstAttempt = async () => {
      throw new Error('lost before it said where it ran');
    };
    const result = await runJob({ hosts: [live], maxHosts: 3 });
    expect(result).toMatchObject({ status: 'SUCCEEDED', host: 'live', hostsTried: ['live'] });
    expect([firstAttempts, claimed, pinnedInputs.length]).toEqual([1, 1, 1]);
  });

  it('goes on where a first attempt ran that timed out before any heartbeat named its host, and claims no other host', async () => {
    // A host starved before its first heartbeat reached the server: the timeout names no worker, the history does.
    firstAttempt = async () => {
      await new Promise((r) => setTimeout(r, 5000));
      return ranOn('live');
    };
    const result = await runJob({ hosts: [host('silent')], maxHosts: 3, heartbeatTimeout: 2 });
    expect(result).toMatchObject({ status: 'SUCCEEDED', host: 'live', hostsTried: ['live'] });
    expect([firstAttempts, claimed]).toEqual([1, 0]);
    expect(pinnedInputs.map((input) => input.earlier)).toEqual([{ attempts: 1 }]);
  });

  it('fails at once on a final failure, on the host that had it, and claims no other host', async () => {
    firstAttempt = async () => {
      throw ApplicationFailure.create({ type: 'ImageProblem', message: 'environments/shell: no Dockerfile', details: [{ host: 'live' }] });
    };
    const result = await runJob({ hosts: [host('spare')], maxHosts: 3 });
    expect(result).toMatchObject({ status: 'FAILED', reason: 'IMAGE_BUILD', message: 'environments/shell: no Dockerfile', hostsTried: ['live'] });
    expect([claimed, pinnedInputs.length]).toEqual([0, 0]);
  });
});

describe('job failover', () => {
  it('a job whose host never picks up its pinned attempt claims another host and finishes there', async () => {
    firstAttempt = diesOn('silent');
    const result = await runJob({ hosts: [live], maxHosts: 3 });
    expect(result).toMatchObject({ status: 'SUCCEEDED', host: 'live', hostsTried: ['silent', 'live'], result: { overall: 0.5 } });
    expect(claimed).toBe(1);
  });

  it('a job fails INFRASTRUCTURE after maxHosts hosts stopped answering, naming each host', async () => {
    firstAttempt = diesOn('silent-1');
    const result = await runJob({ hosts: [host('silent-2'), live], maxHosts: 2 });
    expect(result).toMatchObject({
      status: 'FAILED',
      reason: 'INFRASTRUCTURE',
      message: 'host silent-2 did not pick up the job within 1s; gave up after 2 hosts (silent-1, silent-2)',
      hostsTried: ['silent-1', 'silent-2'],
    });
    expect(claimed).toBe(1);
    const givenUp = await runJob({ hosts: [live], maxHosts: 1 });
    expect(givenUp).toMatchObject({
      status: 'FAILED',
      reason: 'INFRASTRUCTURE',
      message: 'host silent-1 did not pick up the job within 1s; gave up after 1 hosts (silent-1)',
    });
  });

  it('a job whose image fails on a live host it was pinned to fails IMAGE_BUILD there and claims no other host', async () => {
    firstAttempt = async () => {
      throw ApplicationFailure.create({ type: 'DockerError', message: 'the Docker daemon did not answer', details: [{ host: 'live' }] });
    };
    const result = await runJob({ hosts: [host('spare')], maxHosts: 3, imageFails: true });
    expect(result).toMatchObject({ status: 'FAILED', reason: 'IMAGE_BUILD', message: 'environments/shell: no Dockerfile', hostsTried: ['live'] });
    expect(claimed).toBe(0);
  });
});
