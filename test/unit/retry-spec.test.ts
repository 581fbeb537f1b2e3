// `br retry` and `br rerun` as run definitions (client/runs.ts): a retry reruns only the tasks that did
// not fully succeed and carries the rest over; both read the original's cached answers.

import { describe, expect, it } from 'vitest';
import { createRerunSpec, createRetrySpec } from '../../client/runs.js';
import type { TaskDefinition } from '../../contract/benchmark.js';
import { runOptions } from '../../runs/run-options.js';
import type { JobResult, JobStatus, RunResult, RunSpec } from '../../runs/run-spec.js';

const RUN_ID = /^br-\d{8}-\d{6}-[0-9a-f]{6}$/;

const task = (name: string): TaskDefinition => ({
  name,
  environment: 'shell',
  command: `run ${name}`,
  timeoutSeconds: 60,
  resultMapping: { overall: 'score' },
  docker: false,
  dockerImages: [],
  extraEnv: {},
  resources: { memory: '2g', cpus: 1, pids: 512 },
  network: 'isolated',
});

const original: RunSpec = {
  runId: 'br-20260101-000000-aaaaaa',
  benchmark: { name: 'arith', dir: '/b/arith', digest: 'd1' },
  tasks: [task('add'), task('mul'), task('div')],
  options: runOptions({ model: 'm', endpoint: 'http://m/v1', repeats: 2, gen: { temperature: 0 } }),
  resolved: { prices: {} },
  cacheFrom: ['br-older'],
  submittedAt: '2026-01-01T00:00:00.000Z',
};

const job = (taskName: string, repeat: number, status: JobStatus, carriedFrom?: string): JobResult => ({
  jobId: `${original.runId}.${taskName}.r${repeat}`,
  task: taskName,
  status,
  repeat,
  ...(status === 'SUCCEEDED' ? { result: { overall: 1, raw_metrics: {} } } : {}),
  ...(carriedFrom ? { carriedFrom } : {}),
  timings: { queuedAt: '', finishedAt: '', containerSeconds: 0 },
});

const result: RunResult = {
  runId: original.runId,
  benchmark: 'arith',
  model: 'm',
  status: 'PARTIAL',
  overall: 1,
  // add: both repeats succeeded; mul: one repeat failed; div: timed out.
  jobs: [
    job('add', 0, 'SUCCEEDED'),
    job('mul', 0, 'SUCCEEDED'),
    job('div', 0, 'TIMED_OUT'),
    job('add', 1, 'SUCCEEDED'),
    job('mul', 1, 'FAILED'),
    job('div', 1, 'SUCCEEDED'),
  ],
  startedAt: '',
  finishedAt: '',
};

describe('createRetrySpec', () => {
  const before = structuredClone(original);
  const retry = createRetrySpec(original, result);

  it('reruns every repeat of each task with a repeat that did not succeed, on the pinned definitions', () => {
    expect(retry.tasks).toEqual([task('mul'), task('div')]);
    expect(retry.options).toEqual(original.options);
    expect(retry.options).toEqual(original.options);
  });

  it('carries over the jobs of fully succeeded tasks, marked with the run they came from', () => {
    expect(retry.retryOf).toEqual({ runId: original.runId, carried: [job('add', 0, 'SUCCEEDED', original.runId), job('add', 1, 'SUCCEEDED', original.runId)] });
  });

  it('keeps the first origin of a job carried over twice (a retry of a retry)', () => {
    const again = createRetrySpec(retry, {
      ...result,
      runId: retry.runId,
      jobs: [...retry.retryOf!.carried, job('mul', 0, 'SUCCEEDED'), job('mul', 1, 'SUCCEEDED'), job('div', 0, 'FAILED'), job('div', 1, 'FAILED')],
    });
    expect(again.retryOf!.runId).toBe(retry.runId);
    expect(again.retryOf!.carried.map((j) => [j.task, j.carriedFrom])).toEqual([
      ['add', original.runId],
      ['add', original.runId],
      ['mul', retry.runId],
      ['mul', retry.runId],
    ]);
    expect(again.tasks.map((t) => t.name)).toEqual(['div']);
    expect(again.cacheFrom).toEqual(['br-older', original.runId, retry.runId]);
  });

  it("is a new run that reads the original's cached answers after the caches it already read", () => {
    expect(retry.runId).toMatch(RUN_ID);
    expect(retry.runId).not.toBe(original.runId);
    expect(retry.cacheFrom).toEqual(['br-older', original.runId]);
    expect(Date.parse(retry.submittedAt)).toBeGreaterThan(Date.parse(original.submittedAt));
  });

  it('leaves the original run definition as it was', () => {
    expect(original).toEqual(before);
  });
});

describe('createRerunSpec', () => {
  it("runs every task again as a new run reading the original's cache, with nothing carried", () => {
    const rerun = createRerunSpec({ ...original, retryOf: { runId: 'br-first', carried: [job('add', 0, 'SUCCEEDED', 'br-first')] } });
    expect(rerun.tasks).toEqual(original.tasks);
    expect(rerun.retryOf).toBeUndefined();
    expect(rerun.runId).toMatch(RUN_ID);
    expect(rerun.cacheFrom).toEqual(['br-older', original.runId]);
  });
});
