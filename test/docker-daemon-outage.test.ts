// Docker daemon outages: a private dockerd (never the machine's shared one) stopped for 20 s in the
// middle of a run and started again, with and without --live-restore. Real Temporal, real workers.
// The two cases run at once: each has its own daemon (root, socket, network namespace), worker and queue,
// and most of each is waiting (the file took 270 s with them one after the other).

import type { Client } from '@temporalio/client';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import { connectClient, createRunSpec, followRun, submitRun } from '../client/runs.js';
import { settingsFrom } from '../config/settings.js';
import { jobSpecsOf } from '../runs/job-specs.js';
import type { jobWorkflow } from '../workflows/job-workflow.js';
import { releaseSleepers, sleepersOf } from './support/harness.js';
import { privateDaemonUnavailable, privateDockerDaemon, type PrivateDockerDaemon } from './support/private-docker-daemon.js';
import { spawnWorker, waitFor, type WorkerProcess } from './support/processes.js';

const OUTAGE_MS = 20_000;
/** The retries' backoff (at most 30 s apart) and a reattach or restart of each job, on a loaded machine. */
const RECOVERY_MS = 150_000;
/** The sleepers' ceiling: past RECOVERY_MS, so that restarted containers still run when they are counted. */
const SLEEP_S = 300;
/** Far past RECOVERY_MS and the test's own timeout. */
const TASK_TIMEOUT_S = 900;
const unavailable = privateDaemonUnavailable();
let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-dockerd-outage-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }));

/** Container start events of a run on one daemon; `docker events` ends with its daemon, so it is re-armed after a restart. */
function startsOn(daemon: PrivateDockerDaemon, runId: string) {
  const names: string[] = [];
  let watcher: ReturnType<typeof spawn> | undefined;
  const watch = (sinceSeconds: number) => {
    watcher = spawn(
      'docker',
      [
        'events',
        '--since',
        String(sinceSeconds),
        '--filter',
        `label=benchrouter.run=${runId}`,
        '--filter',
        'event=start',
        '--format',
        '{{.Actor.Attributes.name}}',
      ],
      { env: { ...process.env, ...daemon.env }, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    watcher.stdout!.on('data', (d: Buffer) => names.push(...d.toString().split('\n').filter(Boolean)));
  };
  return {
    names,
    /** Starts (or, after the daemon came back, restarts) watching; the new daemon replays what it saw since `sinceSeconds`. */
    watch,
    stop: () => watcher?.kill(),
  };
}

function runningOf(daemon: PrivateDockerDaemon, runId: string): string[] {
  return daemon
    .docker(['ps', '--filter', `label=benchrouter.run=${runId}`, '--format', '{{.Names}}'])
    .split('\n')
    .filter(Boolean);
}

/**
 * How many attempts the job's host activities made in all (a first attempt on the shared queue, then
 * those pinned to its host), and the last failure an attempt saw before the one that finished.
 */
async function containerAttempt(client: Client, jobId: string): Promise<{ attempt: number; lastFailure?: string }> {
  const events = (await client.workflow.getHandle(jobId).fetchHistory()).events ?? [];
  const scheduled = new Set(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runJobOnHost').map((e) => String(e.eventId)));
  const lastStartOf = new Map<string, NonNullable<(typeof events)[number]['activityTaskStartedEventAttributes']>>();
  for (const e of events) {
    const started = e.activityTaskStartedEventAttributes;
    if (started && scheduled.has(String(started.scheduledEventId))) lastStartOf.set(String(started.scheduledEventId), started);
  }
  const starts = [...lastStartOf.values()];
  const failures = events.filter((e) => e.activityTaskFailedEventAttributes).map((e) => e.activityTaskFailedEventAttributes!.failure?.message ?? '');
  const lastFailure = starts.at(-1)?.lastFailure?.message || failures.at(-1);
  return { attempt: starts.reduce((sum, started) => sum + (started.attempt ?? 0), 0), ...(lastFailure ? { lastFailure } : {}) };
}

/**
 * A run of 4 sleepers on a private daemon, stopped for OUTAGE_MS while they run. Within RECOVERY_MS of the
 * daemon's return, `startsInAll` container starts (the first 4 and the restarts the case expects) are
 * expected; then the sleepers are released, what is left being their sleep. The tasks'
 * timeout is far beyond: an attempt that noticed the outage only at its task's deadline fails here.
 */
async function outageRun(name: string, liveRestore: boolean, startsInAll: number, duringOutage: (pids: Map<string, number>) => void) {
  const daemon = privateDockerDaemon(path.join(scratch, name), { liveRestore });
  const workers: WorkerProcess[] = [];
  const env = {
    BENCHROUTER_HOME: path.join(scratch, `${name}-home`),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    BENCHROUTER_TASK_QUEUE: `outage-${name}-${randomBytes(3).toString('hex')}`,
    ...daemon.env,
  };
  const settings = settingsFrom(env, os.homedir());
  const client = await connectClient(settings);
  try {
    await daemon.start();
    execFileSync('sh', ['-c', `docker save benchrouter/base:bookworm | DOCKER_HOST=${daemon.host} docker load`], { stdio: 'ignore' });
    workers.push(await spawnWorker(env, `host-${name}`));
    const spec = createRunSpec(sleepersOf(path.join(scratch, `${name}-benchmark`), SLEEP_S, TASK_TIMEOUT_S), {
      model: 'm',
      endpoint: 'http://127.0.0.1:9/v1',
      preflight: false,
      heartbeatTimeout: 5,
      hostTimeout: 60,
    });
    const starts = startsOn(daemon, spec.runId);
    starts.watch(Math.floor(Date.now() / 1000) - 1);
    const handle = await submitRun(client, settings, spec);
    await waitFor('4 running containers', () => runningOf(daemon, spec.runId).length === 4, 120_000);
    const pids = new Map(
      runningOf(daemon, spec.runId).map((container) => [container, Number(daemon.docker(['inspect', '--format', '{{.State.Pid}}', container]).trim())]),
    );
    await new Promise((r) => setTimeout(r, 3000));

    await daemon.stop();
    duringOutage(pids);
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    const back = Math.floor(Date.now() / 1000) - 1;
    await daemon.start();
    starts.watch(back);
    await waitFor(`${startsInAll} container starts after the daemon came back`, () => starts.names.length >= startsInAll, RECOVERY_MS).catch(
      async (error: Error) => {
        // What the worker said of its attempts (warnings and failures), so that a job left unstarted can be told apart.
        const said = workers
          .flatMap((w) => w.output().split('\n'))
          .filter((line) => /WARN|ERROR|fail|attempt/i.test(line))
          .slice(-60);
        // What the daemon and the server say of the run's containers and jobs; a question that fails says so instead.
        const asked = async (what: () => Promise<string>) => what().catch((failed: Error) => `(could not ask: ${failed.message})`);
        const containers = await asked(async () =>
          daemon.docker(['ps', '--all', '--filter', `label=benchrouter.run=${spec.runId}`, '--format', '{{.Names}} {{.Status}}']).trim(),
        );
        // Each job, and its host activity's attempts so far (or, once closed, its result).
        const jobs = await Promise.all(
          jobSpecsOf(spec).map(({ jobId }) =>
            asked(async () => {
              const job = client.workflow.getHandle<typeof jobWorkflow>(jobId);
              const { raw, status } = await job.describe();
              if (status.name !== 'RUNNING') {
                const result = await job.result().catch((failed: Error) => ({ status: 'no result', message: failed.message, reason: undefined }));
                return `${jobId} ${status.name}: ${result.status} ${result.reason ?? ''} ${result.message ?? ''}`;
              }
              const pending = (raw.pendingActivities ?? []).map(
                (a) => `attempt ${a.attempt}, state ${a.state}, last failure: ${a.lastFailure?.message ?? 'none'}`,
              );
              return `${jobId} ${status.name}: ${pending.join('; ') || 'no pending activity'}`;
            }),
          ),
        );
        throw new Error(
          `${error.message}; starts seen: ${JSON.stringify(starts.names)}; containers:\n${containers}\njobs:\n${jobs.join('\n')}\nthe worker said:\n${said.join('\n')}`,
        );
      },
    );
    releaseSleepers(spec.runId, { docker: (args) => daemon.docker(args) });

    const run = await followRun(handle);
    const attempts = await Promise.all(run.jobs.map((job) => containerAttempt(client, job.jobId)));
    await new Promise((r) => setTimeout(r, 500)); // the last start events reach the watcher
    starts.stop();
    return { run, attempts, starts: starts.names, containers: [...pids.keys()] };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await client.connection.close();
    await daemon.destroy();
  }
}

/** How many times each container name was started. */
function countsOf(names: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of names) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}

describe.concurrent('the Docker daemon stopped for 20 s in the middle of a run and started again', () => {
  it(
    'with --live-restore: surviving containers are reattached, not restarted; one killed during the outage is restarted once; the run is COMPLETED',
    { timeout: 480_000 },
    async ({ skip, expect }) => {
      if (unavailable) skip(`no private Docker daemon here: ${unavailable}`);
      let victim = '';
      const { run, attempts, starts, containers } = await outageRun('live', true, 5, (pids) => {
        // The daemon is down, the containers run on: one of them dies meanwhile, as if its process crashed.
        victim = [...pids.keys()][0]!;
        process.kill(pids.get(victim)!, 'SIGKILL');
      });
      expect(run.status).toBe('COMPLETED');
      expect(run.jobs.every((j) => j.status === 'SUCCEEDED')).toBe(true);
      expect(countsOf(starts)).toEqual(Object.fromEntries(containers.map((name) => [name, name === victim ? 2 : 1])));
      // The outage is in each job's history as further attempts of its host activity, not as a failure of the job.
      for (const attempt of attempts) {
        expect(attempt.attempt).toBeGreaterThan(1);
        expect(attempt.lastFailure).toMatch(/docker/i);
      }
    },
  );

  it(
    'without --live-restore: stopping the daemon kills every container, and each is restarted exactly once; the run is COMPLETED',
    { timeout: 480_000 },
    async ({ skip, expect }) => {
      if (unavailable) skip(`no private Docker daemon here: ${unavailable}`);
      const { run, attempts, starts, containers } = await outageRun('no-live', false, 8, () => undefined);
      expect(run.status).toBe('COMPLETED');
      expect(run.jobs.every((j) => j.status === 'SUCCEEDED')).toBe(true);
      expect(countsOf(starts)).toEqual(Object.fromEntries(containers.map((name) => [name, 2])));
      for (const attempt of attempts) expect(attempt.attempt).toBeGreaterThan(1);
    },
  );
});
