// Cross-model views of many runs: the comparison of chosen runs side by side, and the leaderboard
// over every finished run in the cluster. Pure: callers fetch runs, these arrange them.

import type { RunResult, RunStatus } from './run-spec.js';
import type { ScoreStats } from './score-interval.js';
import type { TableView } from './table-view.js';

/** A finished run as visibility lists it. */
export interface RunEntry {
  runId: string;
  model: string;
  benchmark: string;
  status: RunStatus | string;
  startTime: string;
  score?: number;
  /** The run's provenance hash (absent for runs from before it was kept). */
  provenance?: string;
  scoreStats?: ScoreStats;
}

export type Pick = 'latest' | 'best';

export interface LeaderboardCell {
  score: number;
  runId: string;
  partial: boolean;
  /** What the score is a mean over, and its 95% interval (runs/score-interval.ts); absent for older runs. */
  stats?: ScoreStats;
  /** The run's provenance hash ('' when unknown). */
  provenance: string;
  /** True when the cell's provenance is not its column's (see provenanceMarks): not ranked like for like. */
  differs: boolean;
}

/** The mark of a cell whose provenance differs from its column's, and what it means. */
export const DIFFERS_MARK = '†';
export const DIFFERS_NOTE =
  '† measured with a different setup from the rest of its column (benchmark digest, task images, dataset, gateway, generation settings or judge): not ranked like for like; `br compare` names the differences';

export interface Leaderboard {
  models: string[];
  benchmarks: string[];
  /** cells[model][benchmark] */
  cells: Record<string, Record<string, LeaderboardCell>>;
}

/**
 * Per model and benchmark, the latest (or best) run that ended COMPLETED or PARTIAL with a score.
 * A PARTIAL run counts, marked, so a model's only result is not hidden; `latest` prefers the newest
 * run whatever its status, as the newest result is the one a team acts on.
 */
export function buildLeaderboard(runs: ReadonlyArray<RunEntry>, pick: Pick = 'latest'): Leaderboard {
  const cells: Leaderboard['cells'] = {};
  const chosen = new Map<string, RunEntry>();
  for (const run of runs) {
    if ((run.status !== 'COMPLETED' && run.status !== 'PARTIAL') || run.score === undefined) continue;
    const key = `${run.model}\0${run.benchmark}`;
    const current = chosen.get(key);
    const better =
      !current ||
      (pick === 'latest'
        ? run.startTime > current.startTime
        : run.score > current.score! || (run.score === current.score && run.startTime > current.startTime));
    if (better) chosen.set(key, run);
  }
  const benchmarks = [...new Set([...chosen.values()].map((r) => r.benchmark))].sort();
  const columns = [...chosen.values()];
  const marks = new Map(benchmarks.map((b) => [b, provenanceMarks(columns.filter((run) => run.benchmark === b).map((run) => run.provenance ?? ''))]));
  for (const run of chosen.values()) {
    const provenance = run.provenance ?? '';
    (cells[run.model] ??= {})[run.benchmark] = {
      score: run.score!,
      runId: run.runId,
      partial: run.status === 'PARTIAL',
      ...(run.scoreStats ? { stats: run.scoreStats } : {}),
      provenance,
      differs: marks.get(run.benchmark)!(provenance),
    };
  }
  const meanOf = (model: string) => {
    const scores = Object.values(cells[model] ?? {}).map((c) => c.score);
    return scores.reduce((a, b) => a + b, 0) / scores.length;
  };
  const models = Object.keys(cells).sort((a, b) => meanOf(b) - meanOf(a) || a.localeCompare(b));
  return { models, benchmarks, cells };
}

/**
 * Which provenance hashes of one benchmark column are marked: the column's provenance is the hash most of
 * its cells share; every cell with another hash is marked. When no hash is shared by more cells than any
 * other (two cells that differ, say), there is no column provenance and every cell is marked. A column of
 * one cell, or whose cells all agree, marks none. An unknown provenance ('') counts as a value of its own.
 */
export function provenanceMarks(hashes: ReadonlyArray<string>): (hash: string) => boolean {
  const counts = new Map<string, number>();
  for (const hash of hashes) counts.set(hash, (counts.get(hash) ?? 0) + 1);
  const ranked = [...counts].sort((a, b) => b[1] - a[1]);
  const majority = ranked.length === 1 || ranked[0]![1] > ranked[1]![1] ? ranked[0]?.[0] : undefined;
  return (hash) => hash !== majority;
}

/** "0.8000 [0.6524, 0.8950] n=40", with " (PARTIAL)" and the † mark where they apply. */
export function leaderboardCellText(cell: LeaderboardCell): string {
  const { stats } = cell;
  const interval = stats?.low !== undefined && stats.high !== undefined ? ` [${stats.low.toFixed(4)}, ${stats.high.toFixed(4)}]` : '';
  return `${cell.score.toFixed(4)}${interval}${stats ? ` n=${stats.n}` : ''}${cell.partial ? ' (PARTIAL)' : ''}${cell.differs ? ` ${DIFFERS_MARK}` : ''}`;
}

export function leaderboardView(board: Leaderboard): TableView {
  return {
    name: 'leaderboard',
    columns: ['model', ...board.benchmarks, 'mean'],
    rows: board.models.map((model) => {
      const cells = board.benchmarks.map((b) => board.cells[model]?.[b]);
      const scores = cells.filter((c): c is LeaderboardCell => c !== undefined).map((c) => c.score);
      return [
        model,
        ...cells.map((c) => (c ? leaderboardCellText(c) : null)),
        scores.length ? Number((scores.reduce((a, b) => a + b, 0) / scores.length).toFixed(4)) : null,
      ];
    }),
  };
}

/** Distinct column labels: the model name, with the run id when two runs share a model. */
function columnLabels(runs: ReadonlyArray<RunResult>): string[] {
  return runs.map((run) => (runs.filter((r) => r.model === run.model).length > 1 ? `${run.model} (${run.runId})` : run.model));
}

const meanStd = (mean: number | null | undefined, std: number | null | undefined) =>
  mean === null || mean === undefined ? null : std === null || std === undefined ? Number(mean.toFixed(4)) : `${mean.toFixed(4)} ± ${std.toFixed(4)}`;

/** Benchmarks and their tasks as rows, one column per run (model); cells are scores, mean ± std when repeated. */
export function compareView(runs: ReadonlyArray<RunResult>): TableView {
  const labels = columnLabels(runs);
  const benchmarks = [...new Set(runs.map((r) => r.benchmark))];
  const rows: TableView['rows'] = [];
  for (const benchmark of benchmarks) {
    const cell = (run: RunResult) => {
      if (run.benchmark !== benchmark) return null;
      const score = meanStd(run.overall, run.overallStd);
      return run.status === 'COMPLETED' ? score : `${score ?? '-'} (${run.status})`;
    };
    rows.push([benchmark, ...runs.map(cell)]);
    const tasks = [...new Set(runs.filter((r) => r.benchmark === benchmark).flatMap((r) => (r.tasks ?? []).map((t) => t.task)))];
    for (const task of tasks) {
      rows.push([
        `${benchmark}/${task}`,
        ...runs.map((run) => {
          if (run.benchmark !== benchmark) return null;
          const score = run.tasks?.find((t) => t.task === task);
          return score ? meanStd(score.mean, score.repeats > 1 ? score.std : undefined) : null;
        }),
      ]);
    }
  }
  return { name: 'compare', columns: ['benchmark', ...labels], rows };
}
