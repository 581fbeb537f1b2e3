// perf/failover: time from a kill -9 until 4 running jobs run again, (1) when a worker restarts on
// the same host and reattaches to the containers, (2) when the host is gone for good and the jobs
// move to another host, where they start over, and (3) when the Temporal server is killed, stays
// down past the heartbeat timeout and restarts on the same database: the containers must run on,
// one start per job. The figures follow from the run's --heartbeat-timeout and --host-timeout,
// which this script sets and prints.
//
//   npm run perf:failover [-- worker|host|server ...]   (all three by default)

import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { optionalTsToMs } from '@temporalio/common/lib/time.js';
import { connectClient, createRunSpec, submitRun } from '../client/runs.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { jobIdFor } from '../runs/job-specs.js';
import { settingsFrom } from '../config/settings.js';
import { repoRoot, startStack, startWorkerProcess } from './perf-support.js';
import { attemptsStartedSince, releaseSleepers, sleepersOf } from '../test/support/sleepers.js';
import { setTimeout as sleep } from 'node:timers/promises';

/** A job's one activity on its host (workflows/job-workflow.ts): image, container and harvest. */
const HOST_ACTIVITY = 'runJobOnHost';
const HEARTBEAT_TIMEOUT = 3;
const HOST_TIMEOUT = 5;
/** Past the heartbeat timeout: every running attempt times out on the server while it is down. */
const SERVER_DOWN_SECONDS = HEARTBEAT_TIMEOUT + 2;
/** Cases 1 and 3's jobs outlast the kill, the restart and the reattach. */
const LONG_SLEEP_SECONDS = 40;

/** Container start events of a run, as `docker events` sees them, by container name. */
function watchStarts(runId: string): { names: string[]; stop(): void } {
  const names: string[] = [];
  const events = spawn(
    'docker',
    ['events', '--filter', `label=benchrouter.run=${runId}`, '--filter', 'event=start', '--format', '{{.Actor.Attributes.name}}'],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  events.stdout.on('data', (d: Buffer) => names.push(...d.toString().split('\n').filter(Boolean)));
  return { names, stop: () => events.kill() };
}

function containersOn(runId: string, host: string): string[] {
  return execFileSync('docker', ['ps', '-q', '--filter', `label=benchrouter.run=${runId}`, '--filter', `label=benchrouter.host=${host}`], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(100);
  }
}

async function kill9(worker: ChildProcess): Promise<number> {
  const exited = new Promise((r) => worker.once('exit', r));
  const t0 = performance.now();
  worker.kill('SIGKILL');
  await exited;
  return t0;
}

async function main(): Promise<void> {
  const stack = await startStack('failover');
  const settings = settingsFrom(stack.env, '/root');
  const client = await connectClient(settings);
  const sleepers = loadBenchmark(path.join(repoRoot, 'test', 'fixtures', 'benchmarks', 'sleepers'));
  const long = sleepersOf(stack.home, LONG_SLEEP_SECONDS);
  const jobs = long.tasks.map((t) => t.name);
  const options = { heartbeatTimeout: HEARTBEAT_TIMEOUT, hostTimeout: HOST_TIMEOUT };
  const only = new Set(process.argv.slice(2));
  const want = (name: 'worker' | 'host' | 'server') => only.size === 0 || only.has(name);
  try {
    // Warm-up: the image exists before anything is timed.
    await (
      await submitRun(client, settings, createRunSpec(sleepers, { model: 'm', endpoint: 'http://127.0.0.1:9/v1', preflight: false, ...options, tasks: ['s1'] }))
    ).result();
    // The host whose worker is alive when the server case starts: host-b once the jobs failed over to it.
    const liveHost = want('host') ? 'perf-failover-b' : 'perf-failover';

    console.log(`settings: --heartbeat-timeout ${HEARTBEAT_TIMEOUT}s, --host-timeout ${HOST_TIMEOUT}s, 4 running jobs`);
    if (want('worker')) {
      // 1. Same host: kill -9, restart at once; "running again" = every job's host activity has an attempt
      //    started after the kill, by the new worker (it reattaches, so no container starts).
      // Sleepers that outlast the kill, the restart and the reattach, released once they are measured.
      const first = await submitRun(client, settings, createRunSpec(long, { model: 'm', endpoint: 'http://127.0.0.1:9/v1', preflight: false, ...options }));
      await until(() => containersOn(first.workflowId, 'perf-failover').length === 4);
      const killedAt = Date.now();
      const t0 = await kill9(stack.workers[0]!);
      stack.workers[0] = await startWorkerProcess(stack.env, 'perf-failover');
      const restarted = performance.now();
      await until(() =>
        attemptsStartedSince(
          client,
          jobs.map((job, i) => jobIdFor(first.workflowId, i, job)),
          killedAt,
        ),
      );
      const sameHost = (performance.now() - t0) / 1000;
      releaseSleepers(first.workflowId);
      await first.result();

      console.log(
        `kill -9 -> jobs running again, same host restarted:  ${sameHost.toFixed(2)} s (worker back after ${((restarted - t0) / 1000).toFixed(2)} s; reattached, no container restarted)`,
      );
    }

    if (want('host')) {
      // 2. Another host: kill -9 the worker and its containers (the machine is gone); "running again" =
      //    4 new containers running on the other host.
      const second = await submitRun(
        client,
        settings,
        createRunSpec(sleepers, { model: 'm', endpoint: 'http://127.0.0.1:9/v1', preflight: false, ...options }),
      );
      await until(() => containersOn(second.workflowId, 'perf-failover').length === 4);
      stack.workers.push(await startWorkerProcess(stack.env, 'perf-failover-b'));
      const startsOnB = new Set<string>();
      const events = spawn(
        'docker',
        [
          'events',
          '--filter',
          `label=benchrouter.run=${second.workflowId}`,
          '--filter',
          'label=benchrouter.host=perf-failover-b',
          '--filter',
          'event=start',
          '--format',
          '{{.Actor.Attributes.name}}',
        ],
        { stdio: ['ignore', 'pipe', 'ignore'] },
      );
      events.stdout.on('data', (d: Buffer) =>
        d
          .toString()
          .split('\n')
          .filter(Boolean)
          .forEach((name) => startsOnB.add(name)),
      );
      await sleep(300); // let `docker events` subscribe before anything happens
      const t1 = await kill9(stack.workers[0]!);
      execFileSync('sh', ['-c', `docker ps -q --filter label=benchrouter.host=perf-failover | xargs -r docker rm -f >/dev/null`]);
      // Started containers, not running ones: a job that moved early may finish before the last one moves.
      await until(() => startsOnB.size === 4);
      const otherHost = (performance.now() - t1) / 1000;
      events.kill();
      await second.result();

      console.log(`kill -9 -> jobs running again, failover to a new host: ${otherHost.toFixed(2)} s (containers started afresh on the new host)`);
    }

    if (want('server')) {
      // 3. The Temporal server: kill -9, down past the heartbeat timeout, restarted on the same database;
      //    "running again" = the restarted server has recorded a heartbeat from every job's container activity.
      const third = await submitRun(client, settings, createRunSpec(long, { model: 'm', endpoint: 'http://127.0.0.1:9/v1', preflight: false, ...options }));
      const startsOfThird = watchStarts(third.workflowId);
      await until(() => containersOn(third.workflowId, liveHost).length === 4);
      await sleep(300); // let `docker events` subscribe before anything happens
      const t2 = performance.now();
      await stack.killServer();
      await sleep(SERVER_DOWN_SECONDS * 1000);
      await stack.startServer();
      const serverBackAt = Date.now();
      const serverBack = (performance.now() - t2) / 1000;
      await until(async () => {
        const described = await Promise.all(long.tasks.map((t, i) => client.workflow.getHandle(jobIdFor(third.workflowId, i, t.name)).describe()));
        return described.every((d) =>
          d.raw.pendingActivities?.some((a) => a.activityType?.name === HOST_ACTIVITY && (optionalTsToMs(a.lastHeartbeatTime) ?? 0) >= serverBackAt),
        );
      });
      const serverRestart = (performance.now() - t2) / 1000;
      releaseSleepers(third.workflowId);
      const thirdResult = await third.result();
      await sleep(500);
      startsOfThird.stop();

      console.log(
        `kill -9 of the Temporal server -> jobs running again: ${serverRestart.toFixed(2)} s (server down ${SERVER_DOWN_SECONDS} s, back after ${serverBack.toFixed(2)} s); run ${thirdResult.status}, container starts per job: ${(startsOfThird.names.length / long.tasks.length).toFixed(2)} (${startsOfThird.names.length} for ${long.tasks.length} jobs)`,
      );
    }
  } finally {
    await client.connection.close();
    await stack.stop();
  }
}

await main();
