// The attempt runner's decisions (activities/run-task-container.ts), on an engine in memory
// (test/support/fake-task-engine.ts) instead of Docker: an exit code is the outcome, a task past its deadline
// is killed and timed out, out-of-memory kills are counted, a kill from outside BenchRouter is left for the
// next attempt, which starts the task again, once. Run as an activity would be, in an activity context of
// its own with no workflow behind it (no gateway, no records to signal).

import { asyncLocalStorage, type Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { containerNameFor, taskSpec } from '../../activities/container-spec.js';
import { OUTAGE_RESTART_LABEL } from '../../activities/outage-restart.js';
import { runTaskContainer, type ContainerDeps, type ContainerOutcome } from '../../activities/run-task-container.js';
import type { TaskDefinition } from '../../contract/benchmark.js';
import { FAILURE_TYPES } from '../../runs/failure-types.js';
import { jobArtifactsDir, jobResultsDir } from '../../runs/job-artifacts.js';
import type { JobSpec } from '../../runs/run-spec.js';
import { FakeTaskEngine, KILLED, type FakeRun } from '../support/fake-task-engine.js';
import { sampleJob } from '../support/sample-job.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'br-attempt-runner-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const HOST = 'host-1';
let jobs = 0;

function newJob(task: Partial<TaskDefinition> = {}): JobSpec {
  return sampleJob(`run-1.${String(++jobs).padStart(3, '0')}-addition`, task);
}

/** An activity context of attempt `attempt`, outside any workflow: what runTaskContainer reads of it. */
function activityContext(attempt: number): Context {
  const log = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined, trace: () => undefined };
  return {
    info: { attempt, activityId: 'a1', heartbeatDetails: undefined, workflowExecution: undefined },
    heartbeat: () => undefined,
    log,
    cancellationSignal: new AbortController().signal,
    cancellationDetails: undefined,
    cancelled: new Promise<never>(() => undefined),
  } as unknown as Context;
}

function attempt(engine: FakeTaskEngine, job: JobSpec, number = 1): Promise<ContainerOutcome> {
  const deps: ContainerDeps = { hostId: HOST, artifactsRoot: root, engine };
  return asyncLocalStorage.run(activityContext(number), () => runTaskContainer(deps, { job, image: 'benchrouter/arith-python:0123abcd' }));
}

const engineRunning = (run: FakeRun) => new FakeTaskEngine(() => run);

describe('the attempt runner on an engine in memory', () => {
  it("reports the task's own exit code as the outcome, and removes the task", async () => {
    const engine = engineRunning({ exitCode: 3, output: 'first line\nlast words\n' });
    const job = newJob();
    const outcome = await attempt(engine, job);
    expect(outcome).toMatchObject({ kind: 'exited', exitCode: 3, oomKilled: false, oomKills: 0, reattached: false, lastLogLine: 'last words' });
    const name = containerNameFor(job.jobId, HOST);
    // A first attempt looks for nothing: it starts at once.
    expect(engine.calls).toEqual([`start ${name}`, `remove ${name}`]);
    expect(readFileSync(path.join(jobArtifactsDir(root, job), 'container.log'), 'utf8')).toBe('first line\nlast words\n');
  });

  it('hands the engine a spec, not a container: its command, limits, labels and the results mount', async () => {
    const engine = engineRunning({ exitCode: 0 });
    const job = newJob({ command: 'python3 eval.py', resources: { memory: '512m', cpus: 2, pids: 64 } });
    await attempt(engine, job);
    const { spec } = engine.started[0]!;
    expect(spec).toMatchObject({ image: 'benchrouter/arith-python:0123abcd', command: 'python3 eval.py', network: 'isolated', docker: false });
    expect(spec.resources).toEqual({ memoryBytes: 512 * 1024 ** 2, cpus: 2, pids: 64 });
    expect(spec.labels).toMatchObject({ 'benchrouter.job': job.jobId, 'benchrouter.host': HOST });
    expect(spec.labels).not.toHaveProperty(OUTAGE_RESTART_LABEL);
    expect(spec.mounts).toContainEqual({ source: path.join(jobArtifactsDir(root, job), 'results'), target: '/app/results', readOnly: false });
  });

  it('kills a task still running at its deadline and reports it timed out', async () => {
    const engine = engineRunning({});
    const job = newJob({ timeoutSeconds: 1 });
    const outcome = await attempt(engine, job);
    expect(outcome).toMatchObject({ kind: 'timed_out', exitCode: KILLED });
    const name = containerNameFor(job.jobId, HOST);
    expect(engine.calls).toEqual([`start ${name}`, `kill ${name}`, `remove ${name}`]);
  });

  it("counts out-of-memory kills the engine saw, even when the task's main process exited 0", async () => {
    expect(await attempt(engineRunning({ exitCode: 0, oomKills: 2 }), newJob())).toMatchObject({ kind: 'exited', exitCode: 0, oomKilled: true, oomKills: 2 });
    // A main process killed for memory is one kill, when the engine's count missed it.
    expect(await attempt(engineRunning({ exitCode: KILLED, oomKilled: true }), newJob())).toMatchObject({ exitCode: KILLED, oomKilled: true, oomKills: 1 });
  });

  it("reports a kill the engine did not record (the benchmark's own child, say) as the task's exit", async () => {
    expect(await attempt(engineRunning({ exitCode: KILLED }), newJob())).toMatchObject({ kind: 'exited', exitCode: KILLED, oomKilled: false });
  });

  it('leaves a task killed from outside BenchRouter for the next attempt, which starts it again, once', async () => {
    const engine = engineRunning({ exitCode: KILLED, killedFromOutside: true });
    const job = newJob();
    const name = containerNameFor(job.jobId, HOST);
    const failure = await attempt(engine, job).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: FAILURE_TYPES.containerKilled, nonRetryable: false });
    // Kept, stopped, for the next attempt to judge.
    expect(engine.calls).toEqual([`start ${name}`]);
    expect((await engine.tasks.get(name)!.handle().state())?.running).toBe(false);

    // The next attempt finds it killed before its deadline and starts it afresh, labelled as the one restart.
    // That one is killed from outside too: it is not restarted twice, and its exit is the outcome.
    const outcome = await attempt(engine, job, 2);
    expect(engine.calls).toEqual([`start ${name}`, `find ${name}`, `remove ${name}`, `start ${name}`, `remove ${name}`]);
    expect(engine.started[1]!.spec.labels[OUTAGE_RESTART_LABEL]).toBe('true');
    expect(outcome).toMatchObject({ kind: 'exited', exitCode: KILLED, reattached: false });
    expect(readFileSync(path.join(jobArtifactsDir(root, job), 'container-killed-by-outage.log'), 'utf8')).toBe('');
  });

  it('reattaches to a task still running when a later attempt finds it, and follows it to its end', async () => {
    const engine = engineRunning({ exitCode: 5, exitAfterMs: 300 });
    const job = newJob();
    const name = containerNameFor(job.jobId, HOST);
    // As an attempt that stepped aside left it running.
    const resultsDir = jobResultsDir(root, job);
    mkdirSync(resultsDir, { recursive: true });
    const spec = taskSpec({ job, image: 'i', hostId: HOST, resultsDir }, 'k');
    await engine.start(spec, { job, image: 'i', name, archives: [], ctx: activityContext(1), beatingWhile: (_details, work) => work });
    const outcome = await attempt(engine, job, 2);
    expect(outcome).toMatchObject({ kind: 'exited', exitCode: 5, reattached: true });
    expect(engine.calls).toEqual([`start ${name}`, `find ${name}`, `remove ${name}`]);
  });
});
