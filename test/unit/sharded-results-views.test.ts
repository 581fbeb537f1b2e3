// How people read a run whose task ran in shards (runs/job-groups.ts and its readers): one row per task in the
// text table and the exports, with the folded score, PARTIAL when some shards failed; the progress bar in
// instances; the run page's shards, hosts and per-task fold; an instance's shard and where it was evaluated.

import { describe, expect, it } from 'vitest';
import { runPage } from '../../api/dashboard-pages.js';
import { instancesPage } from '../../api/instance-pages.js';
import { runResultView } from '../../cli/results-view.js';
import { progressLine, renderRunResult } from '../../cli/run-text.js';
import { resultRows } from '../../runs/job-groups.js';
import type { JobResult, RunResult } from '../../runs/run-spec.js';

const shard = (index: number, status: JobResult['status'], overall?: number, extra: Partial<JobResult> = {}): JobResult => ({
  jobId: `br-1.001-walk.s00${index}`,
  task: 'walk',
  status,
  repeat: 0,
  host: `host-${index + 1}`,
  shard: { index, count: 3, instances: 4, aggregate: { overall: 'mean' } },
  ...(overall !== undefined ? { result: { overall, raw_metrics: {} } } : { reason: 'NON_ZERO_EXIT' as const, message: 'command exited with code 3' }),
  timings: { queuedAt: '', finishedAt: '', containerSeconds: 10 },
  ...extra,
});

const run: RunResult = {
  runId: 'br-1',
  benchmark: 'steps',
  model: 'm',
  status: 'PARTIAL',
  overall: 0.6,
  jobs: [
    {
      jobId: 'br-1.000-plain',
      task: 'plain',
      status: 'SUCCEEDED',
      result: { overall: 0.7, raw_metrics: {} },
      timings: { queuedAt: '', finishedAt: '', containerSeconds: 2 },
    },
    shard(0, 'SUCCEEDED', 0.5),
    shard(1, 'FAILED'),
    shard(2, 'SUCCEEDED', 0.5, { shard: { index: 2, count: 3, instances: 4, carried: 3, aggregate: { overall: 'mean' } }, hostsTried: ['host-2', 'host-3'] }),
  ],
  tasks: [
    { task: 'plain', scores: [0.7], repeats: 1, mean: 0.7, std: 0 },
    {
      task: 'walk',
      scores: [0.5],
      repeats: 1,
      mean: 0.5,
      std: 0,
      results: [{ repeat: 0, result: { overall: 0.5, raw_metrics: {} }, instances: { total: 12, scored: 8, carried: 3 }, shards: { total: 3, succeeded: 2 } }],
    },
  ],
  startedAt: '',
  finishedAt: '',
};

describe('a run with a task in shards', () => {
  it('is one row per task: the folded score, PARTIAL when a shard failed, its shards in order', () => {
    const rows = resultRows(run);
    expect(rows.map((row) => (row.kind === 'job' ? ['job', row.job.task] : ['shards', row.task, row.status, row.jobs.map((j) => j.shard!.index)]))).toEqual([
      ['job', 'plain'],
      ['shards', 'walk', 'PARTIAL', [0, 1, 2]],
    ]);
  });

  it('prints one line for the split task, with its shards, instances scored and carried, and the failed shard', () => {
    const text = renderRunResult(run);
    const line = text.split('\n').find((l) => l.startsWith('walk'))!;
    expect(line).toMatch(
      /^walk\s+PARTIAL\s+0\.5000\s+30\.0s\s+NON_ZERO_EXIT\s+3 shards, 12 instances, 8 scored, 3 carried over, 1 shard #1 FAILED NON_ZERO_EXIT$/,
    );
    expect(text).toContain('overall: 0.6000 (mean over 2 of 2 tasks with a score)');
  });

  it('exports one row for the split task, its columns after the score summed over the shards', () => {
    const view = runResultView(run);
    expect(view.rows.map((row) => [row[0], row[1], row[3], row[10]])).toEqual([
      ['steps/plain', 0.7, 2 / 3600, 'SUCCEEDED'],
      ['steps/walk', 0.5, 30 / 3600, 'PARTIAL'],
      ['steps', 0.6, 32 / 3600, 'PARTIAL'],
    ]);
  });

  it('counts instances on the progress bar when the run knows them all', () => {
    const progress = { total: 4, pending: 1, running: 1, succeeded: 2, failed: 0, timedOut: 0, cancelled: 0, jobs: [], instances: { total: 16, done: 8 } };
    expect(progressLine(progress, 10)).toBe('[#####-----] 8/16 instances; 2/4 jobs done, 1 running, 1 pending');
    const { instances: _instances, ...jobsOnly } = progress;
    expect(progressLine(jobsOnly, 10)).toBe('[#####-----] 2/4 done, 1 running, 1 pending');
  });

  it("shows each shard's place, host and the hosts it left on the run page, and the task's fold", () => {
    const page = runPage({ runId: 'br-1', status: 'PARTIAL', benchmark: 'steps', model: 'm', progress: null, webUi: 'http://ui' }, run);
    expect(page).toContain('<h2>Tasks run in shards</h2>');
    expect(page).toContain('8 of 12');
    expect(page).toContain('3 of 3 · 4 instances (3 carried over)');
    expect(page).toContain('host-3 (after host-2)');
  });

  it("lists a running run's shards with the instances each holds and the host each runs on", () => {
    const progress = {
      total: 2,
      pending: 1,
      running: 1,
      succeeded: 0,
      failed: 0,
      timedOut: 0,
      cancelled: 0,
      jobs: [
        { jobId: 'br-1.001-walk.s000', task: 'walk', state: 'running' as const, instances: 4 },
        { jobId: 'br-1.001-walk.s001', task: 'walk', state: 'pending' as const, instances: 4 },
      ],
    };
    const page = runPage(
      { runId: 'br-1', status: 'RUNNING', benchmark: 'steps', model: 'm', progress, webUi: 'http://ui' },
      undefined,
      undefined,
      undefined,
      new Map([['br-1.001-walk.s000', 'host-2']]),
    );
    expect(page).toMatch(/br-1\.001-walk\.s000<\/td><td>4<\/td><td>host-2<\/td>/);
  });

  it("names an instance's shard, its host and where it was evaluated on the instances page", () => {
    const row = {
      jobId: 'br-1.001-walk.s002',
      task: 'walk',
      repeat: 0,
      id: 's09',
      score: 1,
      promptTokens: null,
      completionTokens: null,
      cost: null,
      calls: null,
      latencyMs: null,
    };
    const page = instancesPage(
      'br-1',
      run.jobs,
      { failed: false, offset: 0, limit: 50 },
      {
        rows: [
          { ...row, shard: '3 of 3', host: 'host-3', carriedFrom: 'br-0.001-walk.s002' },
          { ...row, id: 's10', shard: '3 of 3', host: 'host-3', carriedFrom: null },
        ],
        total: 2,
      },
    );
    expect(page).toContain('carried over from br-0.001-walk.s002');
    expect(page).toContain('<span class="evaluated">here</span>');
    expect(page).toContain('walk shard 3/3');
  });
});
