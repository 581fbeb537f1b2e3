// A built-in benchmark split into shards scores what it scores unsplit: the fidelity tests run it again in
// shards (of one instance, and of a size that leaves a remainder) and compare each task's score to the last
// digit, its metrics the task aggregates, and its instances' records one by one.

import { expect } from 'vitest';
import type { RunOptionsInput } from '../../runs/run-options.js';
import type { RunResult } from '../../runs/run-spec.js';
import { br, type Harness } from './harness.js';

interface RecordLine {
  index: number | string;
  score: number;
}

/** The run's records, as `br records` reads them from the hosts: task, instance and score, in order. */
export async function recordScores(h: Harness, run: RunResult): Promise<Array<[string, string, number]>> {
  const out = await br(['records', run.runId, '--json'], h.env);
  expect(out.code, out.stderr).toBe(0);
  // Each line names its job; the job its task.
  const taskOf = new Map(run.jobs.map((job) => [job.jobId, job.task]));
  return out.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as RecordLine & { job: string })
    .map((r) => [taskOf.get(r.job) ?? r.job, String(r.index), r.score]);
}

/**
 * Runs `dir` with `options` in shards of each size of `sizes` and expects, per task, the unsplit run's overall
 * to the last digit, its aggregated metrics, and the same records: what `unsplit` (the same options, one job a
 * task) reported. Returns the sharded runs.
 */
export async function expectShardsAgree(h: Harness, dir: string, options: Partial<RunOptionsInput>, unsplit: RunResult, sizes: number[]): Promise<RunResult[]> {
  expect(unsplit.jobs.every((job) => (job.shard?.count ?? 1) === 1)).toBe(true);
  const unsplitRecords = await recordScores(h, unsplit);
  const runs: RunResult[] = [];
  for (const shardSize of sizes) {
    const run = await h.run(dir, { ...options, shardSize });
    for (const job of run.jobs) expect(job.status, `${job.jobId}: ${job.message}`).toBe('SUCCEEDED');
    expect(run.jobs.length, `shards of ${shardSize}`).toBeGreaterThan(unsplit.jobs.length);
    for (const whole of unsplit.jobs) {
      const folded = run.tasks!.find((t) => t.task === whole.task)!.results![0]!;
      expect(folded.result!.overall, `${whole.task} in shards of ${shardSize}`).toBe(whole.result!.overall);
      for (const [name, value] of Object.entries(folded.result!.raw_metrics)) expect(value, `${whole.task}: ${name}`).toEqual(whole.result!.raw_metrics[name]);
      expect(folded.instances).toEqual({ total: folded.instances.total, scored: folded.instances.total, carried: 0 });
    }
    expect(run.overall).toBe(unsplit.overall);
    expect(await recordScores(h, run)).toEqual(unsplitRecords);
    runs.push(run);
  }
  return runs;
}
