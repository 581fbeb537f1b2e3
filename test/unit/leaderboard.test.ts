// Cross-model views (runs/leaderboard.ts): the leaderboard over finished runs, latest or best per model
// and benchmark, and the side-by-side comparison of chosen runs.

import { describe, expect, it } from 'vitest';
import { buildLeaderboard, compareView, leaderboardView, provenanceMarks, type RunEntry } from '../../runs/leaderboard.js';
import type { RunResult, TaskScore } from '../../runs/run-spec.js';

const entry = (runId: string, model: string, benchmark: string, status: string, startTime: string, score?: number): RunEntry => ({
  runId,
  model,
  benchmark,
  status,
  startTime,
  ...(score === undefined ? {} : { score }),
});

const runs: RunEntry[] = [
  entry('r1', 'm-a', 'arith', 'COMPLETED', '2026-01-01T00:00:00Z', 0.5),
  entry('r2', 'm-a', 'arith', 'COMPLETED', '2026-01-03T00:00:00Z', 0.4),
  entry('r3', 'm-a', 'arith', 'PARTIAL', '2026-01-02T00:00:00Z', 0.9),
  entry('r4', 'm-a', 'qa', 'FAILED', '2026-01-04T00:00:00Z', 0.1),
  entry('r5', 'm-b', 'arith', 'PARTIAL', '2026-01-01T00:00:00Z', 0.8),
  entry('r6', 'm-b', 'qa', 'COMPLETED', '2026-01-01T00:00:00Z', 0.6),
  entry('r7', 'm-c', 'qa', 'COMPLETED', '2026-01-05T00:00:00Z'),
  entry('r8', 'm-a', 'qa', 'CANCELLED', '2026-01-06T00:00:00Z', 1),
  entry('r9', 'm-a', 'qa', 'RUNNING', '2026-01-07T00:00:00Z', 1),
];

describe('buildLeaderboard', () => {
  it('takes the newest COMPLETED or PARTIAL run with a score per model and benchmark, and ranks models by mean', () => {
    expect(buildLeaderboard(runs)).toEqual({
      models: ['m-b', 'm-a'],
      benchmarks: ['arith', 'qa'],
      cells: {
        'm-a': { arith: { score: 0.4, runId: 'r2', partial: false, provenance: '', differs: false } },
        'm-b': {
          arith: { score: 0.8, runId: 'r5', partial: true, provenance: '', differs: false },
          qa: { score: 0.6, runId: 'r6', partial: false, provenance: '', differs: false },
        },
      },
    });
  });

  it('takes the best-scoring run with pick "best", a PARTIAL one included and marked', () => {
    const board = buildLeaderboard(runs, 'best');
    expect(board.cells['m-a']).toEqual({ arith: { score: 0.9, runId: 'r3', partial: true, provenance: '', differs: false } });
    expect(board.models).toEqual(['m-a', 'm-b']);
  });

  it('breaks a tie on the best score with the newer run, and a tie on the mean with the model name', () => {
    const tied = [
      entry('old', 'z', 'b', 'COMPLETED', '2026-01-01T00:00:00Z', 0.5),
      entry('new', 'z', 'b', 'COMPLETED', '2026-01-02T00:00:00Z', 0.5),
      entry('y1', 'y', 'b', 'COMPLETED', '2026-01-01T00:00:00Z', 0.5),
    ];
    const board = buildLeaderboard(tied, 'best');
    expect(board.cells.z!.b!.runId).toBe('new');
    expect(board.models).toEqual(['y', 'z']);
  });

  it('is empty when no run finished with a score', () => {
    expect(buildLeaderboard([entry('r', 'm', 'b', 'FAILED', '2026-01-01T00:00:00Z', 0), entry('s', 'm', 'b', 'COMPLETED', '2026-01-01T00:00:00Z')])).toEqual({
      models: [],
      benchmarks: [],
      cells: {},
    });
  });
});

describe('leaderboardView', () => {
  it('has a column per benchmark and the mean, 4-decimal scores, PARTIAL marked and missing cells null', () => {
    expect(leaderboardView(buildLeaderboard(runs))).toEqual({
      name: 'leaderboard',
      columns: ['model', 'arith', 'qa', 'mean'],
      rows: [
        ['m-b', '0.8000 (PARTIAL)', '0.6000', 0.7],
        ['m-a', '0.4000', null, 0.4],
      ],
    });
  });
});

describe('provenance marks', () => {
  it("mark every cell whose hash is not the one most of its column's cells share", () => {
    const marked = provenanceMarks(['h1', 'h1', 'h2']);
    expect([marked('h1'), marked('h2')]).toEqual([false, true]);
  });

  it('mark every cell when no hash is shared by more cells than another, and none when all agree or the column has one cell', () => {
    const tied = provenanceMarks(['h1', 'h2']);
    expect([tied('h1'), tied('h2')]).toEqual([true, true]);
    expect(provenanceMarks(['h1', 'h1'])('h1')).toBe(false);
    expect(provenanceMarks(['h1'])('h1')).toBe(false);
    // A run from before provenance was kept ('') is a provenance of its own.
    expect(provenanceMarks(['h1', 'h1', ''])('')).toBe(true);
  });

  it('show in the view as † after the score, its 95% interval and n', () => {
    const stats = { n: 40, low: 0.652427, high: 0.895, method: 'wilson' as const };
    const board = buildLeaderboard([
      { ...entry('a', 'm-a', 'arith', 'COMPLETED', '2026-01-01T00:00:00Z', 0.8), provenance: 'h1', scoreStats: stats },
      { ...entry('b', 'm-b', 'arith', 'COMPLETED', '2026-01-01T00:00:00Z', 0.7), provenance: 'h1', scoreStats: { n: 40 } },
      { ...entry('c', 'm-c', 'arith', 'PARTIAL', '2026-01-01T00:00:00Z', 0.6), provenance: 'h2', scoreStats: stats },
      { ...entry('d', 'm-c', 'qa', 'COMPLETED', '2026-01-01T00:00:00Z', 0.5), provenance: 'h3' },
    ]);
    expect(board.cells['m-c']!.arith).toEqual({ score: 0.6, runId: 'c', partial: true, stats, provenance: 'h2', differs: true });
    expect(leaderboardView(board).rows).toEqual([
      ['m-a', '0.8000 [0.6524, 0.8950] n=40', null, 0.8],
      ['m-b', '0.7000 n=40', null, 0.7],
      ['m-c', '0.6000 [0.6524, 0.8950] n=40 (PARTIAL) †', '0.5000', 0.55],
    ]);
  });
});

describe('compareView', () => {
  const task = (name: string, scores: number[], repeats: number, mean: number | null, std: number | null): TaskScore => ({
    task: name,
    scores,
    repeats,
    mean,
    std,
  });
  const result = (fields: Partial<RunResult> & Pick<RunResult, 'runId' | 'model' | 'benchmark' | 'status' | 'overall'>): RunResult => ({
    jobs: [],
    startedAt: '',
    finishedAt: '',
    ...fields,
  });
  const chosen = [
    result({
      runId: 'ra',
      model: 'm-a',
      benchmark: 'arith',
      status: 'COMPLETED',
      overall: 0.75,
      tasks: [task('add', [1], 1, 1, 0), task('mul', [0.5], 1, 0.5, 0)],
    }),
    result({
      runId: 'rb',
      model: 'm-b',
      benchmark: 'arith',
      status: 'PARTIAL',
      overall: 0.5,
      overallStd: 0.1,
      tasks: [task('add', [0.4, 0.6], 2, 0.5, 0.1414213562), task('mul', [], 2, null, null)],
    }),
    result({ runId: 'rc', model: 'm-a', benchmark: 'qa', status: 'FAILED', overall: null, tasks: [task('q1', [], 1, null, null)] }),
  ];

  it('labels columns by model, adding the run id where two runs share a model', () => {
    expect(compareView(chosen).columns).toEqual(['benchmark', 'm-a (ra)', 'm-b', 'm-a (rc)']);
  });

  it('puts each benchmark then its tasks in rows: numbers when COMPLETED, mean ± std for repeats, the status otherwise', () => {
    expect(compareView(chosen).rows).toEqual([
      ['arith', 0.75, '0.5000 ± 0.1000 (PARTIAL)', null],
      ['arith/add', 1, '0.5000 ± 0.1414', null],
      ['arith/mul', 0.5, null, null],
      ['qa', null, null, '- (FAILED)'],
      ['qa/q1', null, null, null],
    ]);
  });

  it('shows a run without per-task scores by its benchmark row alone', () => {
    expect(compareView([result({ runId: 'r', model: 'm', benchmark: 'b', status: 'CANCELLED', overall: 0.123456 })])).toEqual({
      name: 'compare',
      columns: ['benchmark', 'm'],
      rows: [['b', '0.1235 (CANCELLED)']],
    });
  });
});
