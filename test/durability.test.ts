// Durability with real processes: kill -9 a worker, lose a host for good, restart the Temporal
// server, retry failed jobs, sweep orphans. Real dev server, real `br worker` processes, real Docker.

import { Client, Connection } from '@temporalio/client';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { connectClient, createRunSpec, followRun, submitRun } from '../client/runs.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import type { RunOptionsInput } from '../runs/run-options.js';
import { settingsFrom, type Settings } from '../config/settings.js';
import { br, containersOfRun, dockerLines, fixturesDir, releaseSleepers, sleepersOf } from './support/harness.js';
import { DockerEngine } from '../activities/docker-engine.js';
import { sweepOrphans } from '../workers/sweep-orphans.js';
import { freePort } from '../embedded/embedded-services.js';
import {
  devServer,
  runningContainersOf,
  spawnWorker,
  waitFor,
  waitForAttemptsSince,
  waitForRunningOn,
  watchContainerStarts,
  type WorkerProcess,
} from './support/processes.js';

const sleepers = loadBenchmark(path.join(fixturesDir, 'benchmarks', 'sleepers'));
const FAST_FAILURE: Partial<RunOptionsInput> = { heartbeatTimeout: 3, hostTimeout: 4 };

interface Stack {
  env: Record<string, string>;
  settings: Settings;
  client: Client;
}

let scratch: string;
const workers: WorkerProcess[] = [];

async function stack(name: string, temporalAddress = inject('temporalAddress')): Promise<Stack> {
  const env = {
    BENCHROUTER_HOME: path.join(scratch, name),
    TEMPORAL_ADDRESS: temporalAddress,
    BENCHROUTER_TASK_QUEUE: `dur-${name}-${randomBytes(3).toString('hex')}`,
  };
  const settings = settingsFrom(env, os.homedir());
  return { env, settings, client: await connectClient(settings) };
}

async function worker(s: Stack, hostId: string, extraEnv: Record<string, string> = {}): Promise<WorkerProcess> {
  const w = await spawnWorker({ ...s.env, ...extraEnv }, hostId);
  workers.push(w);
  return w;
}

function submit(s: Stack, options: Partial<RunOptionsInput>, model = { model: 'm', endpoint: 'http://127.0.0.1:9/v1', preflight: false }) {
  return submitRun(s.client, s.settings, createRunSpec(sleepers, { ...model, ...options }));
}

beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-durability-'));
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('a worker killed with kill -9 while 4 jobs run', () => {
  it('comes back on the same host, reattaches to the running containers and starts each exactly once', async () => {
    const s = await stack('kill');
    let w = await worker(s, 'host-kill');
    // Reattaching is the point here, not losing the host: a host timeout that a worker restarting on
    // a loaded machine meets with room to spare.
    const handle = await submit(s, { ...FAST_FAILURE, hostTimeout: 60 });
    const starts = watchContainerStarts(handle.workflowId);
    try {
      await waitFor('4 running containers', () => runningContainersOf(handle.workflowId).length === 4);
      await w.kill9();
      await new Promise((r) => setTimeout(r, 1000));
      w = await worker(s, 'host-kill');

      const run = await followRun(handle);
      expect(run.status).toBe('COMPLETED');
      expect(run.jobs.map((j) => j.hostsTried)).toEqual([['host-kill'], ['host-kill'], ['host-kill'], ['host-kill']]);
      // Each job's container was started exactly once, as an outside observer saw it.
      const names = starts.names();
      expect(names).toHaveLength(4);
      expect(new Set(names).size).toBe(4);
      expect(containersOfRun(handle.workflowId)).toEqual([]);
    } finally {
      starts.stop();
      await s.client.connection.close();
    }
  });
});

describe('a host lost for good mid-run', () => {
  it('moves its jobs to another live host, where they run from the start, and the run is COMPLETED', async () => {
    const s = await stack('loss');
    const a = await worker(s, 'host-a');
    const handle = await submit(s, FAST_FAILURE);
    try {
      await waitForRunningOn(handle.workflowId, 'host-a', 4);
      // The machine vanishes: its worker and its containers with it. host-b comes up only after, so
      // that no job can finish on host-a while host-b is still starting.
      await a.kill9();
      execFileSync('sh', [
        '-c',
        `docker ps -q --filter label=benchrouter.host=host-a --filter label=benchrouter.run=${handle.workflowId} | xargs -r docker rm -f`,
      ]);
      await worker(s, 'host-b');

      const run = await followRun(handle);
      expect(run.status).toBe('COMPLETED');
      for (const job of run.jobs) {
        expect(job).toMatchObject({ status: 'SUCCEEDED', host: 'host-b', hostsTried: ['host-a', 'host-b'] });
      }
      expect(containersOfRun(handle.workflowId)).toEqual([]);
    } finally {
      await s.client.connection.close();
    }
  });
});

describe('the Temporal server stopped mid-run and started again on the same database', () => {
  it('lets the run complete', async () => {
    const port = 17000 + Math.floor(Math.random() * 2000);
    const server = devServer(port, path.join(scratch, 'restart.db'));
    await server.start();
    const s = await stack('restart', server.address);
    try {
      await worker(s, 'host-restart');
      const handle = await submit(s, {});
      await waitFor('running containers', () => runningContainersOf(handle.workflowId).length === 4);
      await server.stop();
      await new Promise((r) => setTimeout(r, 2000));
      await server.start();

      const client = await connectClient(s.settings);
      const run = await followRun(client.workflow.getHandle(handle.workflowId));
      expect(run.status).toBe('COMPLETED');
      expect(run.jobs.every((j) => j.result?.overall === 1)).toBe(true);
      await client.connection.close();
    } finally {
      await Promise.all(workers.splice(0).map((w) => w.stop()));
      await s.client.connection.close().catch(() => undefined);
      await server.stop();
    }
  });
});

describe('the Temporal server killed with kill -9 for longer than the heartbeat timeout, then restarted on the same database', () => {
  it('leaves every running container alone: 8 jobs on 2 hosts start one container each and the run is COMPLETED', { timeout: 360_000 }, async () => {
    const heartbeatTimeout = 5;
    const server = devServer(await freePort(), path.join(scratch, 'server-kill.db'));
    await server.start();
    const s = await stack('server-kill', server.address);
    let client: Client | undefined;
    const spec = createRunSpec(sleepersOf(path.join(scratch, 'server-kill-benchmark'), 45), {
      model: 'm',
      endpoint: 'http://127.0.0.1:9/v1',
      preflight: false,
      heartbeatTimeout,
      // The pinned retries wait this long for their host: after the server's restart a worker's pollers
      // reconnect with backoff, which on a loaded machine has taken over 10 s and moved a job needlessly.
      hostTimeout: 30,
      repeats: 2,
      concurrency: 8,
    });
    const starts = watchContainerStarts(spec.runId);
    try {
      await worker(s, 'host-sk-a');
      await worker(s, 'host-sk-b');
      const handle = await submitRun(s.client, s.settings, spec);
      await waitFor('8 running containers', () => runningContainersOf(handle.workflowId).length === 8, 120_000);
      await server.kill9();
      // Long enough that every running attempt's heartbeat timeout expires while the server is down.
      await new Promise((r) => setTimeout(r, (heartbeatTimeout * 2 + 2) * 1000));
      expect(runningContainersOf(handle.workflowId)).toHaveLength(8);
      const back = Date.now();
      await server.start();

      client = await connectClient(s.settings);
      // Each container followed again after the restart: what is left is the sleep itself.
      await waitForAttemptsSince(client, handle.workflowId, back);
      releaseSleepers(handle.workflowId);
      const run = await followRun(client.workflow.getHandle(handle.workflowId));
      expect(run.status).toBe('COMPLETED');
      expect(run.jobs).toHaveLength(8);
      expect(run.jobs.every((j) => j.status === 'SUCCEEDED' && j.hostsTried?.length === 1)).toBe(true);
      // One container start per job, as `docker events` saw them: none was killed and started over.
      const names = starts.names();
      expect(names).toHaveLength(8);
      expect(new Set(names).size).toBe(8);
      expect(containersOfRun(handle.workflowId)).toEqual([]);
    } finally {
      starts.stop();
      await Promise.all(workers.splice(0).map((w) => w.stop()));
      await client?.connection.close();
      await s.client.connection.close().catch(() => undefined);
      await server.stop();
    }
  });
});

describe('br retry', () => {
  it('reruns only the jobs that did not succeed and carries the succeeded result over, citing the original run', async () => {
    const s = await stack('retry');
    await worker(s, 'host-retry');
    const outcomes = loadBenchmark(path.join(fixturesDir, 'benchmarks', 'outcomes'));
    const original = await followRun(
      await submitRun(s.client, s.settings, createRunSpec(outcomes, { model: 'm', endpoint: 'http://127.0.0.1:9/v1', preflight: false })),
    );
    expect(original.status).toBe('PARTIAL');

    const retried = await br(['retry', original.runId, '--json'], s.env);
    expect(retried.code).toBe(3); // the same three tasks fail again: still PARTIAL
    const run = JSON.parse(retried.stdout);
    expect(run.retryOf).toBe(original.runId);
    const carried = run.jobs.filter((j: { carriedFrom?: string }) => j.carriedFrom);
    expect(carried).toHaveLength(1);
    expect(carried[0]).toMatchObject({ task: 'scores-half', carriedFrom: original.runId, result: { overall: 0.5 } });
    const rerun = run.jobs.filter((j: { carriedFrom?: string }) => !j.carriedFrom);
    expect(rerun.map((j: { task: string }) => j.task).sort()).toEqual(['exits-nonzero', 'non-numeric', 'writes-nothing']);
    expect(rerun.every((j: { jobId: string }) => j.jobId.startsWith(run.runId))).toBe(true);
    expect(run.overall).toBe(0.5);
    await s.client.connection.close();
  });
});

describe('a worker starting up', () => {
  it('removes orphaned BenchRouter containers and DinD storage of its host, and leaves other hosts alone', async () => {
    const s = await stack('sweep');
    const name = `br-host-sweep-orphan-${randomBytes(3).toString('hex')}`;
    const other = `br-host-other-${randomBytes(3).toString('hex')}`;
    const labels = (host: string) => ['--label', 'benchrouter.managed=true', '--label', `benchrouter.host=${host}`, '--label', 'benchrouter.job=br-gone.000-x'];
    execFileSync('docker', ['run', '-d', '--name', name, ...labels('host-sweep'), '--entrypoint', 'sleep', 'benchrouter/base:bookworm', '600']);
    execFileSync('docker', ['run', '-d', '--name', other, ...labels('host-other'), '--entrypoint', 'sleep', 'benchrouter/base:bookworm', '600']);
    const storage = path.join(s.settings.dindStorageRoot, name);
    mkdirSync(path.join(storage, 'overlay2'), { recursive: true });
    try {
      const w = await worker(s, 'host-sweep');
      expect(w.output()).toContain(`removed orphaned container ${name}`);
      expect(execFileSync('docker', ['ps', '-aq', '--filter', `name=^${name}$`], { encoding: 'utf8' }).trim()).toBe('');
      expect(existsSync(storage)).toBe(false);
      expect(execFileSync('docker', ['ps', '-q', '--filter', `name=^${other}$`], { encoding: 'utf8' }).trim()).not.toBe('');
    } finally {
      execFileSync('docker', ['rm', '-f', name, other], { stdio: 'ignore' });
      await s.client.connection.close();
    }
  });
});

describe('the orphan sweep when the Temporal server does not answer', () => {
  it('keeps a container and its DinD storage whose job it cannot ask about, and says why', async () => {
    const home = path.join(scratch, 'unreachable');
    const dindStorageRoot = path.join(home, 'dind');
    const name = `br-host-unreach-${randomBytes(3).toString('hex')}`;
    execFileSync('docker', [
      'run',
      '-d',
      '--name',
      name,
      '--label',
      'benchrouter.managed=true',
      '--label',
      'benchrouter.host=host-unreach',
      '--label',
      'benchrouter.job=br-live.000-x',
      '--entrypoint',
      'sleep',
      'benchrouter/base:bookworm',
      '600',
    ]);
    mkdirSync(path.join(dindStorageRoot, name, 'overlay2'), { recursive: true });
    // Nothing listens there: every describe fails with UNAVAILABLE after the client's own retries.
    const client = new Client({ connection: Connection.lazy({ address: `127.0.0.1:${await freePort()}` }) });
    const said: string[] = [];
    try {
      const removed = await sweepOrphans({
        docker: new DockerEngine(),
        client,
        hostId: 'host-unreach',
        sharedQueue: 'benchrouter',
        dindStorageRoot,
        say: (line) => said.push(line),
      });
      expect(removed).toEqual([]);
      expect(said.join('\n')).toContain(`kept container ${name}: cannot tell whether job br-live.000-x still runs on host-unreach`);
      expect(execFileSync('docker', ['ps', '-q', '--filter', `name=^${name}$`], { encoding: 'utf8' }).trim()).not.toBe('');
      expect(existsSync(path.join(dindStorageRoot, name))).toBe(true);
    } finally {
      execFileSync('docker', ['rm', '-f', name], { stdio: 'ignore' });
      await client.connection.close();
    }
  });

  it('a worker started while its server is down waits for it, then removes only the orphan and reattaches to its jobs', { timeout: 300_000 }, async () => {
    const server = devServer(await freePort(), path.join(scratch, 'boot.db'));
    await server.start();
    const s = await stack('boot', server.address);
    const orphan = `br-host-boot-orphan-${randomBytes(3).toString('hex')}`;
    // A host timeout that the restarted worker meets with room to spare: moving hosts is not the point here.
    const spec = createRunSpec(sleepersOf(path.join(scratch, 'boot-benchmark'), 40), {
      model: 'm',
      endpoint: 'http://127.0.0.1:9/v1',
      preflight: false,
      heartbeatTimeout: 5,
      hostTimeout: 60,
      tasks: ['s1', 's2'],
    });
    const starts = watchContainerStarts(spec.runId);
    let client: Client | undefined;
    try {
      const first = await worker(s, 'host-boot');
      const handle = await submitRun(s.client, s.settings, spec);
      await waitFor('2 running containers', () => runningContainersOf(handle.workflowId).length === 2, 120_000);
      // Made after the first worker's own sweep: a leftover whose job the server has never heard of.
      execFileSync('docker', [
        'run',
        '-d',
        '--name',
        orphan,
        '--label',
        'benchrouter.managed=true',
        '--label',
        'benchrouter.host=host-boot',
        '--label',
        'benchrouter.job=br-gone.000-x',
        '--entrypoint',
        'sleep',
        'benchrouter/base:bookworm',
        '600',
      ]);
      // The machine reboots: worker and server die; the worker comes back first.
      await first.kill9();
      await server.kill9();
      const second = await spawnWorker(s.env, 'host-boot', { untilPolling: false });
      workers.push(second);
      await second.printed('waiting for the Temporal server at');
      await new Promise((r) => setTimeout(r, 8000));
      expect(second.child.exitCode).toBeNull();
      expect(runningContainersOf(handle.workflowId)).toHaveLength(2);
      expect(execFileSync('docker', ['ps', '-q', '--filter', `name=^${orphan}$`], { encoding: 'utf8' }).trim()).not.toBe('');

      const back = Date.now();
      await server.start();
      await second.printed('polling');
      expect(second.output()).toContain(`removed orphaned container ${orphan}`);
      expect(second.output()).not.toContain('kept container');
      expect(execFileSync('docker', ['ps', '-aq', '--filter', `name=^${orphan}$`], { encoding: 'utf8' }).trim()).toBe('');

      client = await connectClient(s.settings);
      await waitForAttemptsSince(client, handle.workflowId, back);
      releaseSleepers(handle.workflowId);
      const run = await followRun(client.workflow.getHandle(handle.workflowId));
      expect(run.status).toBe('COMPLETED');
      const names = starts.names();
      expect(names).toHaveLength(2);
      expect(new Set(names).size).toBe(2);
    } finally {
      starts.stop();
      execFileSync('docker', ['rm', '-f', orphan], { stdio: 'ignore' });
      await Promise.all(workers.splice(0).map((w) => w.stop()));
      await client?.connection.close();
      await s.client.connection.close().catch(() => undefined);
      await server.stop();
    }
  });
});

describe('a lost host that comes back after its jobs moved to another host', () => {
  it('removes the containers and DinD storage those jobs left on it, and leaves the jobs running on their new host alone', { timeout: 300_000 }, async () => {
    const s = await stack('moved');
    // Each machine has its own home (and so its own dind/); host-a's is kept across its restart.
    const homeA = { BENCHROUTER_HOME: path.join(scratch, 'moved-host-a') };
    const a = await worker(s, 'host-mv-a', homeA);
    // host-a's containers must still run when host-a comes back, however long the move to host-b takes on a loaded
    // machine (with 30 s they exited first in CI, and the checks below had nothing left to find).
    const spec = createRunSpec(sleepersOf(path.join(scratch, 'moved-benchmark'), 90), {
      model: 'm',
      endpoint: 'http://127.0.0.1:9/v1',
      preflight: false,
      ...FAST_FAILURE,
    });
    let client: Client | undefined;
    try {
      const handle = await submitRun(s.client, s.settings, spec);
      await waitForRunningOn(handle.workflowId, 'host-mv-a', 4);
      const leftBehind = runningContainersOf(handle.workflowId).map((c) => c.name);
      // The sleepers are plain tasks; a storage directory per container stands in for a DinD task's.
      const storageDirs = leftBehind.map((name) => path.join(homeA.BENCHROUTER_HOME, 'dind', name));
      for (const dir of storageDirs) mkdirSync(path.join(dir, 'overlay2'), { recursive: true });
      await worker(s, 'host-mv-b');
      // host-a drops off the network: its worker is gone, its containers run on.
      await a.kill9();
      await waitForRunningOn(handle.workflowId, 'host-mv-b', 4, 90_000);
      expect(
        runningContainersOf(handle.workflowId)
          .filter((c) => c.host === 'host-mv-a')
          .map((c) => c.name)
          .sort(),
      ).toEqual([...leftBehind].sort());

      const back = await worker(s, 'host-mv-a', homeA);
      for (const name of leftBehind) expect(back.output()).toMatch(new RegExp(`removed orphaned container ${name} \\(job \\S+ moved to host-mv-b`));
      expect(dockerLines(['ps', '-aq', '--filter', `label=benchrouter.run=${handle.workflowId}`, '--filter', 'label=benchrouter.host=host-mv-a'])).toEqual([]);
      for (const dir of storageDirs) expect(existsSync(dir)).toBe(false);
      expect(runningContainersOf(handle.workflowId).filter((c) => c.host === 'host-mv-b')).toHaveLength(4);
      // Seen: what is left is the sleep itself.
      releaseSleepers(handle.workflowId, { host: 'host-mv-b' });

      client = await connectClient(s.settings);
      const run = await followRun(client.workflow.getHandle(handle.workflowId));
      expect(run.status).toBe('COMPLETED');
      for (const job of run.jobs) expect(job).toMatchObject({ status: 'SUCCEEDED', host: 'host-mv-b', hostsTried: ['host-mv-a', 'host-mv-b'] });
    } finally {
      await client?.connection.close();
      await s.client.connection.close();
    }
  });
});
