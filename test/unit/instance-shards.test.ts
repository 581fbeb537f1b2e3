// How a run splits tasks into shards and folds their results back (runs/instance-shards.ts, job-specs.ts,
// shard-fold.ts, run-tally.ts): selection, shard sizes, ids, the variables a container gets, the task's score
// summed in instance order whatever order its shards end in, and a retry that reruns only unfinished shards.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mergeCarriedRecords, withCarriedInstances } from '../../activities/harvest-result.js';
import { createRetrySpec } from '../../client/runs.js';
import type { TaskDefinition } from '../../contract/benchmark.js';
import { planTask, selectedInstances, shardEnvironment, shardOf, type TaskPlan } from '../../runs/instance-shards.js';
import { jobCountOf, jobSpecsOf, instanceCountOf } from '../../runs/job-specs.js';
import { runOptions } from '../../runs/run-options.js';
import type { JobResult, RunResult, RunSpec } from '../../runs/run-spec.js';
import { addJobs, emptyTally, tallyOutcome } from '../../runs/run-tally.js';
import { foldedResult, foldShard, newFold } from '../../runs/shard-fold.js';

const IDS = Array.from({ length: 10 }, (_, i) => `q${i}`);
const task = (name: string, extra: Partial<TaskDefinition> = {}): TaskDefinition => ({
  name,
  environment: 'shell',
  command: 'run',
  timeoutSeconds: 60,
  resultMapping: { overall: 'acc', correct: 'correct' },
  docker: false,
  dockerImages: [],
  extraEnv: {},
  resources: { memory: '2g', cpus: 1, pids: 512 },
  network: 'isolated',
  ...extra,
});
const split = task('split', { instances: IDS, aggregate: { overall: 'mean', correct: 'sum' }, shardSize: 4 });
const listedOnly = task('listed', { instances: IDS });
const opaque = task('opaque');
const options = (input: Record<string, unknown> = {}) => runOptions({ model: 'm', endpoint: 'http://m/v1', ...input });

describe('planning a task', () => {
  it('selects the listed instances in their own order, --instances first and --limit after', () => {
    expect(selectedInstances(split, options({ instances: ['q7', 'q2', 'q5'], limit: 2 }))).toEqual(['q2', 'q5']);
    expect(selectedInstances(opaque, options({ limit: 2 }))).toBeUndefined();
  });

  it("splits into the run's shard size, else the task's, and never a task that does not say its score is a mean", () => {
    const aggregate = { overall: 'mean', correct: 'sum' };
    expect(planTask(split, options())).toEqual({ selected: 10, shardSize: 4, aggregate });
    expect(planTask(split, options({ shardSize: 3, limit: 7 }))).toEqual({ selected: 7, shardSize: 3, aggregate });
    expect(planTask(split, options({ shardSize: 50 }))).toEqual({ selected: 10, shardSize: 10, aggregate });
    expect(planTask(listedOnly, options({ shardSize: 1 }))).toEqual({ selected: 10, shardSize: 10 });
    expect(planTask(opaque, options({ shardSize: 1 }))).toBeNull();
  });

  it("never makes a shard smaller than the task's min_shard_size: the size is raised, and a remainder below it joins the shard before", () => {
    const bfcl = task('bfcl', { instances: IDS.slice(0, 5), aggregate: { overall: 'mean' }, minShardSize: 2 });
    const plan = planTask(bfcl, options({ shardSize: 1 }))!;
    expect(plan).toEqual({ selected: 5, shardSize: 2, minShard: 2, aggregate: { overall: 'mean' } });
    expect([0, 1].map((i) => shardOf(bfcl, plan, i, IDS.slice(0, 5)).instances)).toEqual([IDS.slice(0, 2), IDS.slice(2, 5)]);
    expect(shardOf(bfcl, plan, 0, IDS.slice(0, 5)).count).toBe(2);
    // A remainder the task can run stays a shard of its own.
    const threes = planTask(bfcl, options({ shardSize: 3 }))!;
    expect([0, 1].map((i) => shardOf(bfcl, threes, i, IDS.slice(0, 5)).instances)).toEqual([IDS.slice(0, 3), IDS.slice(3, 5)]);
  });

  it('tells each container its slice: nothing for the whole list, a limit for its start, the ids otherwise, and what is left after carried ones', () => {
    const plan: TaskPlan = { selected: 10, shardSize: 4 };
    const shards = [0, 1, 2].map((i) => shardOf(split, plan, i, IDS));
    expect(shards.map((s) => s.instances)).toEqual([IDS.slice(0, 4), IDS.slice(4, 8), IDS.slice(8)]);
    expect(shards.map((s) => shardEnvironment(s))).toEqual([
      { BENCHROUTER_LIMIT: '4' },
      { BENCHROUTER_INSTANCES: 'q4,q5,q6,q7' },
      { BENCHROUTER_INSTANCES: 'q8,q9' },
    ]);
    expect(shardEnvironment(shardOf(split, { selected: 10, shardSize: 10 }, 0, IDS))).toEqual({});
    expect(shardEnvironment(shards[0]!, ['q2', 'q3'])).toEqual({ BENCHROUTER_INSTANCES: 'q2,q3' });
  });
});

describe("a run's jobs", () => {
  const spec = (input: Record<string, unknown> = {}): RunSpec => {
    const tasks = [opaque, split];
    const opts = options(input);
    return {
      runId: 'br-1',
      benchmark: { name: 'b', dir: '/b', digest: 'd' },
      tasks,
      plan: tasks.map((t) => planTask(t, opts)),
      options: opts,
      resolved: { prices: {} },
      cacheFrom: [],
      submittedAt: '',
    };
  };

  it('are repeat-major, then by task and shard, with a shard part in the id only for a task split in more than one', () => {
    const jobs = jobSpecsOf(spec({ repeats: 2 }));
    expect(jobs.map((j) => j.jobId.slice(5))).toEqual([
      '000-opaque.r0',
      '001-split.s000.r0',
      '001-split.s001.r0',
      '001-split.s002.r0',
      '000-opaque.r1',
      '001-split.s000.r1',
      '001-split.s001.r1',
      '001-split.s002.r1',
    ]);
    expect(jobCountOf(spec({ repeats: 2 }))).toBe(8);
    // A job carries its slice, not its task's whole list.
    expect(jobs[1]!.task.instances).toBeUndefined();
    expect(jobs[1]!.shard).toEqual({
      index: 0,
      count: 3,
      instances: IDS.slice(0, 4),
      selection: 'first',
      of: 10,
      aggregate: { overall: 'mean', correct: 'sum' },
    });
    expect(jobSpecsOf(spec({ shardSize: 10 }))[1]!.jobId).toBe('br-1.001-split');
  });

  it('count instances only when every task lists them', () => {
    expect(instanceCountOf(spec())).toBeUndefined();
    const both = {
      ...spec(),
      tasks: [listedOnly, split],
      plan: [listedOnly, split].map((t) => planTask(t, options({ limit: 5 }))),
      options: options({ limit: 5, repeats: 2 }),
    };
    expect(instanceCountOf(both)).toBe(20);
  });
});

/** A shard job's result: `scores` its instances', its overall their mean (or `overall` when given). */
const shardJob = (index: number, count: number, scores: number[] | 'failed', extra: Partial<JobResult> = {}): JobResult => ({
  jobId: `br-1.000-t.s${index}`,
  task: 't',
  repeat: 0,
  shard: { index, count, instances: scores === 'failed' ? 2 : scores.length, aggregate: { overall: 'mean', correct: 'sum' } },
  timings: { queuedAt: '', finishedAt: '', containerSeconds: 1 },
  ...(scores === 'failed'
    ? { status: 'FAILED', reason: 'NON_ZERO_EXIT' }
    : {
        status: 'SUCCEEDED',
        result: { overall: scores.reduce((a, b) => a + b, 0) / scores.length, raw_metrics: { correct: scores.filter((s) => s === 1).length } },
        instanceScores: scores,
      }),
  ...extra,
});

describe("folding a task's shards", () => {
  const thirds = [1 / 3, 2 / 3, 0.1, 0.7, 0.2, 1 / 7, 1];
  const sequentialMean = thirds.reduce((a, b) => a + b, 0) / thirds.length;

  it('sums the instances in instance order, as the benchmark did over all of them, whatever order the shards end in', () => {
    const parts = [shardJob(0, 3, thirds.slice(0, 3)), shardJob(1, 3, thirds.slice(3, 6)), shardJob(2, 3, thirds.slice(6))];
    for (const order of [
      [0, 1, 2],
      [2, 0, 1],
      [1, 2, 0],
    ]) {
      const tally = addJobs(
        emptyTally(),
        order.map((i) => parts[i]!),
      );
      const outcome = tallyOutcome(tally, false, false);
      expect(outcome.overall).toBe(sequentialMean);
      expect(outcome.tasks[0]!.results).toEqual([
        {
          repeat: 0,
          result: { overall: sequentialMean, raw_metrics: { correct: 1 } },
          instances: { total: 7, scored: 7, carried: 0 },
          shards: { total: 3, succeeded: 3 },
        },
      ]);
    }
  });

  it("weights the shards' overalls by their instances where their records cannot stand for them", () => {
    const fold = newFold(2, { overall: 'mean' });
    foldShard(fold, 0, { succeeded: true, instances: 3, carried: 0, overall: 0.5 });
    foldShard(fold, 1, { succeeded: true, instances: 1, carried: 0, overall: 1, scores: [1] });
    expect(foldedResult(fold).result!.overall).toBe((0.5 * 3 + 1) / 4);
    // Records that disagree with their shard's own overall are not its score either.
    const disagree = newFold(1, { overall: 'mean' });
    foldShard(disagree, 0, { succeeded: true, instances: 2, carried: 1, overall: 0.9, scores: [0, 1] });
    expect(foldedResult(disagree).result!.overall).toBe(0.9);
  });

  it('scores a repeat with a failed shard over its other instances, and says so', () => {
    const outcome = tallyOutcome(addJobs(emptyTally(), [shardJob(0, 2, [1, 0]), shardJob(1, 2, 'failed')]), false, false);
    expect(outcome.status).toBe('PARTIAL');
    expect(outcome.tasks[0]!.results![0]).toEqual({
      repeat: 0,
      result: { overall: 0.5, raw_metrics: { correct: 1 } },
      instances: { total: 4, scored: 2, carried: 0 },
      shards: { total: 2, succeeded: 1 },
    });
  });

  it('closes a repeat whose last shards never started (a cancelled run) with what it has', () => {
    const outcome = tallyOutcome(addJobs(emptyTally(), [shardJob(1, 3, [1, 1])]), true, false);
    expect(outcome.tasks[0]!.results![0]).toMatchObject({ result: { overall: 1 }, instances: { total: 2, scored: 2 }, shards: { total: 3, succeeded: 1 } });
    expect(outcome.overall).toBe(1);
  });
});

describe('br retry of a run with tasks in shards', () => {
  const original: RunSpec = {
    runId: 'br-20260101-000000-aaaaaa',
    benchmark: { name: 'b', dir: '/b', digest: 'd' },
    tasks: [task('t', { instances: IDS.slice(0, 4), aggregate: { overall: 'mean', correct: 'sum' } }), opaque],
    plan: [{ selected: 4, shardSize: 2 }, null],
    options: options(),
    resolved: { prices: {} },
    cacheFrom: [],
    submittedAt: '',
  };
  const ran: RunResult = {
    runId: original.runId,
    benchmark: 'b',
    model: 'm',
    status: 'PARTIAL',
    overall: 1,
    jobs: [
      { ...shardJob(0, 2, 'failed'), jobId: `${original.runId}.000-t.s000` },
      { ...shardJob(1, 2, [1, 1]), jobId: `${original.runId}.000-t.s001` },
      {
        jobId: `${original.runId}.001-opaque`,
        task: 'opaque',
        status: 'SUCCEEDED',
        result: { overall: 1, raw_metrics: {} },
        timings: { queuedAt: '', finishedAt: '', containerSeconds: 1 },
      },
    ],
    startedAt: '',
    finishedAt: '',
  };
  const reward = (instance: string, line: number) => ({ line, instance, score: 1, prompt_tokens: 1, completion_tokens: 1, cost: 0 });

  it('reruns only the shard that did not succeed, carrying the instances it scored, on the pinned plan', () => {
    const retry = createRetrySpec(original, ran, new Map([[`${original.runId}.000-t.s000`, [reward('q0', 1)]]]));
    expect(retry.tasks.map((t) => t.name)).toEqual(['t']);
    expect(retry.plan).toEqual([{ selected: 4, shardSize: 2 }]);
    expect(retry.retryOf!.carried.map((j) => j.jobId)).toEqual([`${original.runId}.000-t.s001`, `${original.runId}.001-opaque`]);
    const jobs = jobSpecsOf(retry);
    expect(jobs.map((j) => [j.jobId.slice(retry.runId.length + 1), j.shard?.instances])).toEqual([['000-t.s000', ['q0', 'q1']]]);
    expect(jobs[0]!.carried).toEqual({ from: `${original.runId}.000-t.s000`, rewards: [reward('q0', 1)] });
  });
});

describe('a resumed shard', () => {
  const shardOfFive = { instances: ['a', 'b', 'c', 'd', 'e'], aggregate: { overall: 'mean' as const, total: 'sum' as const } };
  const ran = (overall: number) => ({ status: 'SUCCEEDED' as const, result: { overall, raw_metrics: { total: 2, note: 'kept' } } });
  const carried = [{ instance: 'a' }, { instance: 'b' }, { instance: 'c' }];

  it("scores every instance when its container's overall is the mean of its own records, and drops the metrics it counted alone", () => {
    const out = withCarriedInstances(ran(0.5), shardOfFive, carried, [1, 0, 1 / 3, 1, 0]);
    expect(out.result).toEqual({ overall: (1 + 0 + 1 / 3 + 1 + 0) / 5, raw_metrics: { note: 'kept' } });
    expect(out.scored).toBeUndefined();
  });

  it('keeps its own overall, over the instances it ran, when that is not the mean of its records (another scale), and says why', () => {
    const out = withCarriedInstances(ran(50), shardOfFive, carried, [1, 0, 1, 1, 0]);
    expect(out.result!.overall).toBe(50);
    expect(out.scored).toBe(2);
    expect(out.message).toContain("the 3 instances carried over are not in its score: its overall 50 is not the mean of its records' scores (0.5)");
    // Folded, it weighs by the instances its score is over.
    const fold = newFold(2, { overall: 'mean' });
    foldShard(fold, 0, { succeeded: true, instances: 5, scored: 2, carried: 3, overall: 50, scores: [1, 0, 1, 1, 0] });
    foldShard(fold, 1, { succeeded: true, instances: 2, carried: 0, overall: 100, scores: [1, 1] });
    expect(foldedResult(fold)).toMatchObject({ result: { overall: (50 * 2 + 100 * 2) / 4 }, scored: 4, total: 7 });
  });

  it('with every instance carried, scores them from their records', () => {
    const out = withCarriedInstances(
      { status: 'SUCCEEDED', result: { overall: 0, raw_metrics: {} } },
      { instances: ['a', 'b'] },
      [{ instance: 'a' }, { instance: 'b' }],
      [1, 0.5],
    );
    expect(out.result!.overall).toBe(0.75);
  });

  it("merges the carried records before its container's, dropping its lines for carried instances, and sets aside a records.jsonl that is no file", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'br-merge-'));
    try {
      const reward = (instance: string, score: number) => ({ line: 1, instance, score, prompt_tokens: 3, completion_tokens: 1, cost: null });
      writeFileSync(path.join(dir, 'records.jsonl'), '{"index": "c", "score": 1}\n{"index": "a", "score": 0}\n');
      expect(await mergeCarriedRecords(dir, { rewards: [reward('a', 1), reward('b', 0)], from: 'br-0.000-t' })).toBeUndefined();
      const lines = () =>
        readFileSync(path.join(dir, 'records.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { index: string; carried?: boolean });
      expect(lines().map((r) => [r.index, r.carried ?? false])).toEqual([
        ['a', true],
        ['b', true],
        ['c', false],
      ]);
      // Merging again (a retried harvest) changes nothing.
      await mergeCarriedRecords(dir, { rewards: [reward('a', 1), reward('b', 0)], from: 'br-0.000-t' });
      expect(lines().map((r) => r.index)).toEqual(['a', 'b', 'c']);
      rmSync(path.join(dir, 'records.jsonl'));
      mkdirSync(path.join(dir, 'records.jsonl'));
      expect(await mergeCarriedRecords(dir, { rewards: [reward('a', 1)] })).toBe(
        "records.jsonl is a directory, not a regular file; set aside, and the carried instances' records written in its place",
      );
      expect(lines().map((r) => r.index)).toEqual(['a']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
