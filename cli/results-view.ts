// A run's (and a suite's) results as the tables people export: a row per job, then a row for the run,
// with score, sample count, active container time, latency, TTFT, throughput, tokens and cost.

import type { RecordsSummary } from '../contract/records.js';
import type { JobResult, RunResult } from '../runs/run-spec.js';
import type { UsageSummary } from '../runs/usage.js';
import type { SuiteResult } from '../workflows/suite-workflow.js';
import type { TableCell, TableView } from '../runs/table-view.js';
import { resultRows, rowOverall, type ShardedTaskRow } from '../runs/job-groups.js';

export const RESULT_COLUMNS = [
  'benchmark',
  'score',
  'num samples',
  'active time (h)',
  'latency (s)',
  'TTFT (s)',
  'tok/s',
  'input tokens',
  'output tokens',
  'cost',
  'status',
] as const;

/** Fields a job result may carry that its type does not declare yet. */
type JobWithRecords = JobResult & { records?: RecordsSummary; repeat?: number };

/** raw_metrics names benchmarks commonly use for their sample count, in order of preference. */
const SAMPLE_COUNT_METRICS = ['total', 'samples', 'n'];

export function runResultView(run: RunResult, name?: string): TableView {
  const rows = resultRows(run);
  // A task is repeated when it has more than one row (a task run in shards is one row a repeat).
  const rowTasks = rows.map((row) => (row.kind === 'job' ? row.job.task : row.task));
  const repeated = new Set(rowTasks.filter((task, i, all) => all.indexOf(task) !== i));
  const jobRows = rows.map((row) =>
    row.kind === 'job' ? jobRow(run.benchmark, row.job as JobWithRecords, repeated.has(row.job.task)) : shardedRow(run.benchmark, row, repeated.has(row.task)),
  );
  const model = run.usage?.model;
  // Repeated: the score cells read "mean ± std" (over a task's repeats, and over repeats for the run).
  const meanStd = (mean: number | null, std: number | null | undefined): TableCell =>
    mean === null ? null : std === null || std === undefined ? mean : `${mean.toFixed(4)} ± ${std.toFixed(4)}`;
  const taskRows: TableCell[][] = (run.tasks ?? [])
    .filter((t) => repeated.has(t.task))
    .map((t) => [
      `${run.benchmark}/${t.task}`,
      meanStd(t.mean, t.std),
      ...jobRows.filter((r) => String(r[0]).startsWith(`${run.benchmark}/${t.task} (repeat`)).reduce(sumRows, emptyRest()),
      `${t.scores.length}/${t.repeats} repeats`,
    ]);
  const runRow: TableCell[] = [
    run.benchmark,
    meanStd(run.overall, run.overallStd),
    sumColumn(jobRows, 2),
    sumColumn(jobRows, 3),
    ...latencyCells(model),
    sumColumn(jobRows, 7),
    sumColumn(jobRows, 8),
    sumColumn(jobRows, 9),
    run.status,
  ];
  return { name: name ?? run.runId, columns: [...RESULT_COLUMNS], rows: [...jobRows, ...taskRows, runRow] };
}

/**
 * A task run in shards as one row: its score folded from the shards, the columns after it summed over its shard
 * jobs (latency, TTFT and tok/s are not additive: left empty), and its status as one (PARTIAL when some failed).
 */
function shardedRow(benchmark: string, row: ShardedTaskRow, repeated: boolean): TableCell[] {
  const shardRows = row.jobs.map((job) => jobRow(benchmark, job as JobWithRecords, false));
  return [`${benchmark}/${row.task}${repeated ? ` (repeat ${row.repeat})` : ''}`, rowOverall(row), ...shardRows.reduce(sumRows, emptyRest()), row.status];
}

/** The columns between score and status (samples .. cost), summed over a task's repeat rows. */
function emptyRest(): TableCell[] {
  return new Array(8).fill(null);
}

function sumRows(acc: TableCell[], row: TableCell[]): TableCell[] {
  return acc.map((value, i) => {
    const cell = row[i + 2];
    if (i >= 2 && i <= 4) return null; // latency, TTFT, tok/s are not additive
    return typeof cell === 'number' ? (typeof value === 'number' ? value : 0) + cell : value;
  });
}

function jobRow(benchmark: string, job: JobWithRecords, repeated: boolean): TableCell[] {
  const model = job.usage?.model;
  const records = job.records;
  // Without the gateway, the benchmark's own per-record figures stand in, when every record has them.
  const fromRecords = (total: RecordsSummary['cost'] | undefined) => (records && records.count > 0 && total && total.missing === 0 ? total.total : null);
  return [
    `${benchmark}/${job.task}${repeated && job.repeat !== undefined ? ` (repeat ${job.repeat})` : ''}`,
    job.result?.overall ?? null,
    records ? records.count : sampleCountFromMetrics(job.result?.raw_metrics),
    job.timings.containerSeconds / 3600,
    ...latencyCells(model),
    model ? model.promptTokens : fromRecords(records?.promptTokens),
    model ? model.completionTokens : fromRecords(records?.completionTokens),
    model ? model.cost : fromRecords(records?.cost),
    job.status,
  ];
}

function latencyCells(usage: UsageSummary | undefined): TableCell[] {
  return [usage?.latencyMs ? usage.latencyMs.mean / 1000 : null, usage?.ttftMs ? usage.ttftMs.mean / 1000 : null, usage?.outputTokensPerSecond ?? null];
}

function sampleCountFromMetrics(metrics: Record<string, unknown> | undefined): number | null {
  for (const key of SAMPLE_COUNT_METRICS) {
    const value = metrics?.[key];
    if (typeof value === 'number' && Number.isFinite(value)) return value;
  }
  return null;
}

/** The sum of a column's known cells; null when no job has the figure. */
function sumColumn(rows: TableCell[][], column: number): number | null {
  const values = rows.map((r) => r[column]).filter((v): v is number => typeof v === 'number');
  return values.length ? values.reduce((a, b) => a + b, 0) : null;
}

/** One row per benchmark of a suite: its score (mean ± std where repeated), jobs and status. */
export function suiteSummaryView(suite: SuiteResult): TableView {
  return {
    name: 'suite',
    columns: ['benchmark', 'score', 'std', 'jobs succeeded', 'status', 'run'],
    rows: suite.runs.map((run) => [
      run.benchmark,
      run.overall,
      run.overallStd ?? null,
      `${run.jobs.filter((j) => j.status === 'SUCCEEDED').length}/${run.jobs.length}`,
      run.status,
      run.runId,
    ]),
  };
}

/**
 * What qualifies the scores of these runs, one row per run and fact, for the exports: a score made with
 * prompts middle-truncated by the gateway is not the same measurement as one without. Absent (null)
 * when nothing does, so that a plain run's workbook holds its results sheet alone.
 */
export function scoreNotesView(runs: readonly RunResult[]): TableView | null {
  const rows: TableCell[][] = [];
  for (const run of runs) {
    const truncated = run.usage?.model.truncated;
    if (truncated) rows.push([run.benchmark, run.runId, `${truncated} prompts middle-truncated by the gateway (--truncation-tokens)`]);
    const cut = run.usage?.model.endedInThinking;
    if (cut) rows.push([run.benchmark, run.runId, `${cut} answers cut off by max_tokens while thinking`]);
  }
  return rows.length ? { name: 'notes', columns: ['benchmark', 'run', 'note'], rows } : null;
}
