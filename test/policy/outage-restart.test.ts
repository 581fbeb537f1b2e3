// Outage restarts (activities/outage-restart.ts) through the job workflow's retries, on the time-skipping
// test server: a container killed from outside (a Docker daemon stopping without --live-restore) fails its
// attempt; the job's next attempt, pinned to the same host, finds it stopped and starts it again, once,
// labelled; a second kill is then the task's own exit. The fake engine keeps a container per job and host
// and takes each step in runTaskContainer's order, deciding with the real killedByOutage and
// killedFromOutside; test/docker-daemon-outage.test.ts does the same with a real daemon, in minutes.

import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContainerState } from '../../activities/docker-engine.js';
import { killedByOutage, killedFromOutside, OUTAGE_RESTART_LABEL } from '../../activities/outage-restart.js';
import type { RunResult, RunSpec } from '../../runs/run-spec.js';
import { PolicyEnv, ran, runSpec, taskDefinition, type Engine } from '../support/policy-env.js';

let p: PolicyEnv;
beforeAll(async () => {
  p = await PolicyEnv.start('outage');
});
afterAll(async () => {
  await p?.close();
});

const TIMEOUT_SECONDS = 600;

/** A fleet whose daemon kills a task's container `kills[task]` times, each time while an attempt follows it. */
function outageEngine(kills: Record<string, number>) {
  const containers = new Map<string, ContainerState>();
  const started: string[] = [];
  let ids = 0;
  const engine: Engine = async (call) => {
    const name = `${call.jobId}@${call.host}`;
    // A retry looks for the job's container; one killed while no attempt watched it is removed and started again.
    let found = call.jobAttempt === 1 ? undefined : containers.get(name);
    const restart = found !== undefined && killedByOutage(found, TIMEOUT_SECONDS);
    if (restart) found = undefined;
    if (!found) {
      found = {
        id: `c${++ids}`,
        running: true,
        exitCode: 0,
        startedAt: new Date().toISOString(),
        finishedAt: '',
        oomKilled: false,
        labels: restart ? { [OUTAGE_RESTART_LABEL]: 'true' } : {},
      };
      containers.set(name, found);
      started.push(`${call.task}${restart ? ' (restart)' : ''}`);
    }
    if ((kills[call.task] ?? 0) === 0) return ran(call, 1);
    kills[call.task]! -= 1;
    // The daemon goes down and SIGKILLs it, and says so in its events.
    const final: ContainerState = { ...found, running: false, exitCode: 137, finishedAt: new Date(Date.now() + 1000).toISOString() };
    containers.set(name, final);
    if (await killedFromOutside({ endEvents: async () => ({ kills: ['9'], died: true }) }, final, TIMEOUT_SECONDS, false)) {
      throw ApplicationFailure.retryable(`container ${name} was killed from outside BenchRouter (exit 137)`, 'ContainerKilled');
    }
    return ran(call, { status: 'FAILED', reason: 'NON_ZERO_EXIT', message: 'exit code 137' }, { exitCode: 137 });
  };
  return { engine, started };
}

async function run(tasks: string[], kills: Record<string, number>): Promise<{ result: RunResult; started: string[] }> {
  const { engine, started } = outageEngine(kills);
  p.set({ engine });
  const spec = runSpec(
    p.nextId('outage'),
    tasks.map((name) => taskDefinition(name, { timeoutSeconds: TIMEOUT_SECONDS })),
  );
  const result = await p.env.client.workflow.execute<(spec: RunSpec) => Promise<RunResult>>('runWorkflow', {
    taskQueue: p.sharedQueue,
    workflowId: spec.runId,
    args: [spec],
  });
  return { result, started };
}

describe('a container an outage killed', () => {
  it('is started again once, on the same host, and its job scores as if nothing happened', async () => {
    const { result, started } = await run(['once'], { once: 1 });
    expect(result.status).toBe('COMPLETED');
    expect(result.jobs.map((j) => [j.task, j.status, j.hostsTried])).toEqual([['once', 'SUCCEEDED', ['h1']]]);
    expect(started).toEqual(['once', 'once (restart)']);
    expect(p.trail()).toEqual(['h1@shared#1', 'h1@h1#2']);
  });

  it('killed again after its restart: that exit is the task’s own (FAILED NON_ZERO_EXIT, 137), no third start; the run is PARTIAL', async () => {
    const { result, started } = await run(['twice', 'fine'], { twice: 2 });
    expect(result.status).toBe('PARTIAL');
    expect(result.jobs.map((j) => [j.task, j.status, j.reason ?? null, j.exitCode])).toEqual([
      ['twice', 'FAILED', 'NON_ZERO_EXIT', 137],
      ['fine', 'SUCCEEDED', null, 0],
    ]);
    expect(started.filter((s) => s.startsWith('twice'))).toEqual(['twice', 'twice (restart)']);
    expect(started.filter((s) => s.startsWith('fine'))).toEqual(['fine']);
    expect(p.attempts.filter((a) => a.task === 'twice').map((a) => `${a.host}@${a.queue}#${a.jobAttempt}`)).toEqual(['h1@shared#1', 'h1@h1#2']);
  });
});
