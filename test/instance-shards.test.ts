// A task's instances as the unit of work: a task that lists its instances and says its score is a mean over
// them runs in shards, each a job with its slice in BENCHROUTER_INSTANCES, and the run reports the score the
// unsplit task reports, to the last digit, with the same per-instance records. Real dev server, worker,
// Docker and reference model.

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedArithScore } from '../reference-model/expected-score.js';
import type { RunResult } from '../runs/run-spec.js';
import { br, containersOfRun, repoRoot, startHarness, type Harness } from './support/harness.js';

const arithDir = path.join(repoRoot, 'benchmarks', 'arith');

let h: Harness;
beforeAll(async () => {
  h = await startHarness('shards');
});
afterAll(async () => {
  await h?.close();
});

interface RecordLine {
  index: number | string;
  score: number;
  prediction?: unknown;
}

async function recordsOf(run: RunResult): Promise<RecordLine[]> {
  const out = await br(['records', run.runId, '--json'], h.env);
  expect(out.code, out.stderr).toBe(0);
  return out.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as RecordLine);
}

const perInstance = (records: RecordLine[]) => records.map((r) => [String(r.index), r.score, r.prediction]);

describe('arith split into shards', () => {
  let whole: RunResult;
  beforeAll(async () => {
    whole = await h.run(arithDir, { model: 'reference-acc80' });
  }, 300_000);

  it('unsplit (no shard size): one job per task, the benchmark told nothing of its instances, as before', () => {
    expect(whole.jobs.map((job) => [job.task, job.shard])).toEqual([
      ['addition', { index: 0, count: 1, instances: 20, of: 20, aggregate: { overall: 'mean', correct: 'sum', total: 'sum' } }],
      ['multiplication', { index: 0, count: 1, instances: 20, of: 20, aggregate: { overall: 'mean', correct: 'sum', total: 'sum' } }],
    ]);
    expect(whole.overall).toBe(expectedArithScore(arithDir, 'reference-acc80').overall);
  });

  for (const shardSize of [1, 3]) {
    it(`--shard-size ${shardSize}: the same scores to the last digit, the same records in instance order`, { timeout: 300_000 }, async () => {
      const run = await h.run(arithDir, { model: 'reference-acc80', shardSize });
      const shards = Math.ceil(20 / shardSize);
      expect(run.status).toBe('COMPLETED');
      expect(run.jobs).toHaveLength(2 * shards);
      expect(run.jobs.every((job) => job.status === 'SUCCEEDED')).toBe(true);
      // The last shard of 20 in threes holds the remainder.
      expect(run.jobs.filter((job) => job.task === 'addition').map((job) => job.shard!.instances)).toEqual(
        Array.from({ length: shards }, (_, i) => Math.min(shardSize, 20 - i * shardSize)),
      );
      expect(run.overall).toBe(whole.overall);
      for (const task of ['addition', 'multiplication']) {
        const unsplit = whole.jobs.find((job) => job.task === task)!.result!;
        const folded = run.tasks!.find((t) => t.task === task)!;
        expect(folded.scores).toEqual([unsplit.overall]);
        expect(folded.results).toEqual([
          {
            repeat: 0,
            result: unsplit,
            instances: { total: 20, scored: 20, carried: 0 },
            shards: { total: shards, succeeded: shards },
          },
        ]);
      }
      expect(perInstance(await recordsOf(run))).toEqual(perInstance(await recordsOf(whole)));
      expect(run.scoreStats).toEqual(whole.scoreStats);
      expect(containersOfRun(run.runId)).toEqual([]);
    });
  }

  it('selects before it splits: --instances and --limit, then shards of 2 with a remainder', { timeout: 300_000 }, async () => {
    const run = await h.run(arithDir, { model: 'reference-acc80', tasks: ['addition'], instances: ['3', '4', '5', '6', '7', '9'], limit: 5, shardSize: 2 });
    expect(run.jobs.map((job) => job.jobId.slice(run.runId.length + 1))).toEqual(['000-addition.s000', '000-addition.s001', '000-addition.s002']);
    expect((await recordsOf(run)).map((r) => String(r.index))).toEqual(['3', '4', '5', '6', '7']);
    expect(run.tasks![0]!.results![0]!.instances).toEqual({ total: 5, scored: 5, carried: 0 });
  });

  it('refuses at submit, naming the file and field, an instance no task lists', async () => {
    const out = await br(['submit', arithDir, '--model', 'reference-acc80', '--endpoint', h.model.url, '--instances', '3,99'], h.env);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`instances: the run's instances name an id no task lists: "99" (addition: 0, 1, 2, ...; multiplication: 0, 1, 2, ...)`);
  });
});
