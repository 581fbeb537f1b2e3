// A run's fan-out (workflows/run-workflow.ts, job-lanes.ts) with a fake engine on the time-skipping test
// server: each task a child job workflow, at most `concurrency` at once; a job that fails is a result like
// any other, and the run's status says how many succeeded.

import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunOptions } from '../../runs/run-options.js';
import type { RunResult, RunSpec } from '../../runs/run-spec.js';
import { PolicyEnv, ran, retryable, runSpec, taskDefinition, type Scenario } from '../support/policy-env.js';

let p: PolicyEnv;
beforeAll(async () => {
  p = await PolicyEnv.start('fanout');
});
afterAll(async () => {
  await p?.close();
});

async function run(tasks: string[], scenario: Partial<Scenario>, options: Partial<RunOptions> = {}): Promise<RunResult> {
  p.set(scenario);
  const spec = runSpec(
    p.nextId('run'),
    tasks.map((name) => taskDefinition(name)),
    options,
  );
  return p.env.client.workflow.execute<(spec: RunSpec) => Promise<RunResult>>('runWorkflow', {
    taskQueue: p.sharedQueue,
    workflowId: spec.runId,
    args: [spec],
  });
}

const statuses = (result: RunResult) => result.jobs.map((job) => [job.task, job.status, job.reason ?? null, job.hostsTried]);

describe("a run's jobs", () => {
  it('all succeeding: COMPLETED, scored as the mean of its tasks', async () => {
    const result = await run(['a', 'b', 'c', 'd'], { engine: async (call) => ran(call, call.task === 'a' ? 0 : 1) }, { concurrency: 2 });
    expect(result.status).toBe('COMPLETED');
    expect(result.overall).toBe(0.75);
    expect(statuses(result)).toEqual([
      ['a', 'SUCCEEDED', null, ['h1']],
      ['b', 'SUCCEEDED', null, ['h1']],
      ['c', 'SUCCEEDED', null, ['h1']],
      ['d', 'SUCCEEDED', null, ['h1']],
    ]);
  });

  it('one failing for good (its image), one after every retry, the rest succeeding: PARTIAL, the failures kept as results', async () => {
    const result = await run(
      ['a', 'broken', 'flaky', 'd'],
      {
        engine: async (call) => {
          if (call.task === 'broken') throw ApplicationFailure.create({ type: 'ImageProblem', message: 'environments/shell: no Dockerfile' });
          if (call.task === 'flaky') throw retryable();
          return ran(call, 1);
        },
      },
      { concurrency: 2 },
    );
    expect(result.status).toBe('PARTIAL');
    expect(statuses(result)).toEqual([
      ['a', 'SUCCEEDED', null, ['h1']],
      ['broken', 'FAILED', 'IMAGE_BUILD', ['h1']],
      ['flaky', 'FAILED', 'INFRASTRUCTURE', ['h1']],
      ['d', 'SUCCEEDED', null, ['h1']],
    ]);
    expect(result.jobs[1]!.message).toBe('environments/shell: no Dockerfile');
    // The image fault got one attempt, the retryable one its 1 + 10; the others one each.
    const attemptsOf = (task: string) => p.attempts.filter((a) => a.task === task).length;
    expect(['a', 'broken', 'flaky', 'd'].map(attemptsOf)).toEqual([1, 1, 11, 1]);
    // A failed job scores nothing: its task has no mean, and the run's overall is over the tasks that have one.
    expect(result.overall).toBe(1);
    expect(result.tasks?.map((t) => [t.task, t.mean])).toEqual([
      ['a', 1],
      ['broken', null],
      ['flaky', null],
      ['d', 1],
    ]);
  });

  it('every job failing: FAILED', async () => {
    const result = await run(['a', 'b'], { engine: async (call) => ran(call, { status: 'FAILED', reason: 'NO_RESULT', message: 'no result.json' }) });
    expect(result.status).toBe('FAILED');
    expect(statuses(result)).toEqual([
      ['a', 'FAILED', 'NO_RESULT', ['h1']],
      ['b', 'FAILED', 'NO_RESULT', ['h1']],
    ]);
  });

  it('never more than `concurrency` jobs at once', async () => {
    let running = 0;
    let most = 0;
    const result = await run(
      ['a', 'b', 'c', 'd', 'e'],
      {
        engine: async (call) => {
          most = Math.max(most, ++running);
          await new Promise((r) => setTimeout(r, 50));
          running--;
          return ran(call);
        },
      },
      { concurrency: 2 },
    );
    expect(result.status).toBe('COMPLETED');
    expect(most).toBe(2);
  });
});
