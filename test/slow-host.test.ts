// A host that is alive but slow keeps its jobs; one that stays away past its host timeout loses them,
// and removes their containers when it comes back. Real dev server, two real `br worker` processes as two
// hosts (each its own home and host id, one Docker engine), real containers; the slow host is a worker
// process stopped with SIGSTOP (its containers run on: the engine is not stopped) and resumed with SIGCONT.
//
// A hand trial on a loaded machine started one job's container on two hosts: a first attempt on a
// live-but-starved host missed its heartbeat timeout, the job moved, and the starved host's container ran
// on (workflows/job-workflow.ts, activities/job-attempts.ts). Container starts are counted by `docker
// events`, an observer outside BenchRouter.

import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import { connectClient, createRunSpec, followRun, submitRun } from '../client/runs.js';
import { settingsFrom, type Settings } from '../config/settings.js';
import type { RunOptionsInput } from '../runs/run-options.js';
import { containersOfRun, dockerLines, releaseSleepers, sleepersOf } from './support/harness.js';
import { runningContainersOf, spawnWorker, waitFor, waitForRunningOn, watchContainerStarts, type WorkerProcess } from './support/processes.js';

let scratch: string;

/** A test's submitter and its hosts: `br worker`s of their own homes on its queue, resumed and stopped when the test ends. */
interface Submitter {
  env: Record<string, string>;
  settings: Settings;
  client: Client;
  host(hostId: string): Promise<WorkerProcess>;
}

/** Stopped workers are resumed before they are stopped for good, whatever the test did. */
const stopped = new Set<WorkerProcess>();

async function submitter(name: string, onTestFinished: (cleanup: () => Promise<void>) => void): Promise<Submitter> {
  const env = {
    BENCHROUTER_HOME: path.join(scratch, `${name}-submitter`),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    BENCHROUTER_TASK_QUEUE: `slow-${name}-${randomBytes(3).toString('hex')}`,
  };
  const settings = settingsFrom(env, os.homedir());
  const client = await connectClient(settings);
  const workers: WorkerProcess[] = [];
  onTestFinished(async () => {
    for (const w of workers) if (stopped.has(w)) resume(w);
    await Promise.all(workers.map((w) => w.stop()));
    await client.connection.close();
  });
  return {
    env,
    settings,
    client,
    async host(hostId) {
      const w = await spawnWorker({ ...env, BENCHROUTER_HOME: path.join(scratch, hostId) }, hostId);
      workers.push(w);
      return w;
    },
  };
}

function pause(w: WorkerProcess): void {
  w.child.kill('SIGSTOP');
  stopped.add(w);
}

function resume(w: WorkerProcess): void {
  w.child.kill('SIGCONT');
  stopped.delete(w);
}

const { TimeoutType } = proto.temporal.api.enums.v1;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * How many of the job's host activity attempts the server gave up on for a missed heartbeat, and what its
 * activity events said (for the message when there were none).
 */
async function heartbeatTimeouts(client: Client, jobId: string): Promise<{ count: number; seen: string[] }> {
  const events = (await client.workflow.getHandle(jobId).fetchHistory()).events ?? [];
  let count = 0;
  const seen: string[] = [];
  // A timeout failure names its type at its top level or, wrapped, in its cause.
  type Failure = { timeoutFailureInfo?: { timeoutType?: number | string | null } | null; cause?: Failure | null } | null | undefined;
  const timeoutOf = (failure: Failure) => failure?.timeoutFailureInfo ?? failure?.cause?.timeoutFailureInfo;
  for (const event of events) {
    // A timed-out or failed attempt's own failure, or (a pinned attempt's retries: the server records only the
    // last) the failure before the attempt that started last. Whichever event holds it, the attempt it names
    // timed out.
    const started = event.activityTaskStartedEventAttributes;
    const failure = event.activityTaskTimedOutEventAttributes?.failure ?? event.activityTaskFailedEventAttributes?.failure ?? started?.lastFailure;
    if (!failure) continue;
    // The enum arrives as its number or, decoded from the server's JSON, its name.
    const type = timeoutOf(failure)?.timeoutType;
    if (type === TimeoutType.TIMEOUT_TYPE_HEARTBEAT || String(type) === 'TIMEOUT_TYPE_HEARTBEAT') count += 1;
    seen.push(
      `${jobId} event ${String(event.eventId)} (${String(event.eventType)}${started ? `, attempt ${String(started.attempt)}` : ''}): ${failure.message ?? ''} ${JSON.stringify(timeoutOf(failure)?.timeoutType ?? null)}`,
    );
  }
  return { count, seen };
}

beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-slow-host-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const options = (heartbeatTimeout: number, hostTimeout: number): RunOptionsInput => ({
  model: 'm',
  endpoint: 'http://127.0.0.1:9/v1',
  preflight: false,
  heartbeatTimeout,
  hostTimeout,
});

// The two cases run at once (each has its own queue, hosts and homes; most of each is waiting).
describe.concurrent('a host stopped, then resumed', () => {
  it(
    'for longer than its heartbeat timeout, keeps its jobs: each container starts once, on it, while another host stands by',
    { timeout: 300_000 },
    async ({ expect, onTestFinished }) => {
      const s = await submitter('keep', onTestFinished);
      const slow = await s.host('host-slow');
      // The heartbeat timeout of the hand trial (5 s) is missed; the host comes back well within its host timeout.
      const spec = createRunSpec(sleepersOf(path.join(scratch, 'keep-benchmark'), 30), options(5, 120));
      const starts = watchContainerStarts(spec.runId);
      try {
        const handle = await submitRun(s.client, s.settings, spec);
        await waitForRunningOn(spec.runId, 'host-slow', 4, 120_000);
        // Up only now, so that every job is on host-slow; the job workflows' tasks go to it while host-slow is stopped.
        await s.host('host-standby');
        pause(slow);
        await sleep(20_000); // four heartbeat timeouts
        resume(slow);

        const run = await followRun(handle);
        expect(run.status).toBe('COMPLETED');
        for (const job of run.jobs) expect(job).toMatchObject({ status: 'SUCCEEDED', host: 'host-slow', hostsTried: ['host-slow'] });
        // The scenario did what it says: attempts timed out while the host was stopped.
        const timeouts = await Promise.all(run.jobs.map((job) => heartbeatTimeouts(s.client, job.jobId)));
        expect(
          timeouts.reduce((a, b) => a + b.count, 0),
          `no heartbeat timeout in the jobs' histories; their activity failures: ${JSON.stringify(timeouts.flatMap((t) => t.seen))}`,
        ).toBeGreaterThanOrEqual(1);
        await sleep(500); // the last start events reach the watcher
        const names = starts.names();
        expect(names.sort()).toEqual(run.jobs.map((job) => `br-host-slow-${job.jobId}`.replace(/[^A-Za-z0-9_.-]/g, '-')).sort());
        expect(containersOfRun(spec.runId)).toEqual([]);
      } finally {
        starts.stop();
      }
    },
  );

  it(
    'for longer than its host timeout, loses its jobs to another host, and removes their containers when it comes back, before they finish',
    { timeout: 360_000 },
    async ({ expect, onTestFinished }) => {
      const s = await submitter('move', onTestFinished);
      const away = await s.host('host-away');
      const spec = createRunSpec(sleepersOf(path.join(scratch, 'move-benchmark'), 90), options(5, 5));
      const starts = watchContainerStarts(spec.runId);
      try {
        const handle = await submitRun(s.client, s.settings, spec);
        await waitForRunningOn(spec.runId, 'host-away', 4, 120_000);
        const taker = await s.host('host-taker');
        pause(away);
        await waitForRunningOn(spec.runId, 'host-taker', 4, 180_000);
        // host-away's containers ran on while its worker was stopped: the job started on two hosts, for now.
        expect(runningContainersOf(spec.runId).filter((c) => c.host === 'host-away')).toHaveLength(4);
        resume(away);

        // Back, host-away learns its attempts were given up on, asks where each job is, and removes its containers.
        // Gone, not only stopped: a loaded host takes a moment between a container's stop and its removal.
        await waitFor(
          'no container of the run on host-away, running or stopped',
          () =>
            dockerLines(['ps', '--all', '--quiet', '--filter', `label=benchrouter.run=${spec.runId}`, '--filter', 'label=benchrouter.host=host-away'])
              .length === 0,
          90_000,
        );
        // ... before their 90 s were up: host-taker's, started later, all still run.
        expect(runningContainersOf(spec.runId).filter((c) => c.host === 'host-taker')).toHaveLength(4);
        await away.printed('removed container', 5_000);
        expect(taker.output()).not.toContain('removed container');
        releaseSleepers(spec.runId, { host: 'host-taker' });

        const run = await followRun(handle);
        expect(run.status).toBe('COMPLETED');
        for (const job of run.jobs) expect(job).toMatchObject({ status: 'SUCCEEDED', host: 'host-taker', hostsTried: ['host-away', 'host-taker'] });
        await sleep(500);
        // Each container started once on each host: never a second time on the one that finished it.
        const names = starts.names();
        expect(names).toHaveLength(8);
        expect(new Set(names).size).toBe(8);
        expect(containersOfRun(spec.runId)).toEqual([]);
      } finally {
        starts.stop();
      }
    },
  );
});
