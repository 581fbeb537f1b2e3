// How `br` shows runs to a person: a run's and a suite's results as text, and the live progress line.

import { rejectedRecordsNote } from '../contract/records.js';
import { provenanceEntries } from '../runs/provenance.js';
import type { JobResult, RunProgress, RunResult, RunSpec } from '../runs/run-spec.js';
import { instanceCountOf, jobCountOf } from '../runs/job-specs.js';
import { hasShardedTasks, resultRows, rowOverall, shardsDetail } from '../runs/job-groups.js';
import type { UsageSummary } from '../runs/usage.js';
import type { RunBudgetFigures } from '../runs/budgets.js';
import type { SuiteResult } from '../workflows/suite-workflow.js';
import { cutTo, detailWidth, failureLine } from './failure-detail.js';
import { textTable } from './table-export.js';

export function formatScore(score: number | null | undefined): string {
  return score === null || score === undefined ? '-' : score.toFixed(4);
}

function jobSeconds(job: JobResult): string {
  return job.timings.startedAt ? `${job.timings.containerSeconds.toFixed(1)}s` : '-';
}

/** "0.8000 ± 0.0120" with repeats to compare, else "0.8000". */
export function formatMeanStd(mean: number | null | undefined, std: number | null | undefined): string {
  return std === null || std === undefined ? formatScore(mean) : `${formatScore(mean)} ± ${std.toFixed(4)}`;
}

/** "12 jobs", and for a run that splits tasks into shards "12 jobs (48 instances in shards)": what a submit starts. */
export function jobsOf(spec: Parameters<typeof jobCountOf>[0] & Pick<RunSpec, 'plan'>): string {
  const jobs = jobCountOf(spec);
  const instances = instanceCountOf(spec);
  const sharded = spec.plan?.some((plan) => plan !== null && plan.selected > plan.shardSize);
  return `${jobs} job${jobs === 1 ? '' : 's'}${sharded && instances !== undefined ? ` (${instances} instances in shards)` : ''}`;
}

/** `terminalWidth`: the terminal's columns (stdout's), undefined when it is not a terminal. */
export function renderRunResult(run: RunResult, webUiLink?: string, terminalWidth?: number): string {
  const repeated = run.jobs.some((j) => (j.repeat ?? 0) > 0);
  const headers = [repeated ? 'TASK #REPEAT' : 'TASK', 'STATUS', 'OVERALL', 'TIME', 'REASON', 'DETAIL'];
  // A task run in shards is one row: its folded score, its shards' time, their reasons and a summary.
  const resultRowsOf = resultRows(run);
  const cells = resultRowsOf.map((row) =>
    row.kind === 'job'
      ? [
          repeated ? `${row.job.task} #${row.job.repeat ?? 0}` : row.job.task,
          row.job.status,
          formatScore(row.job.result?.overall),
          jobSeconds(row.job),
          row.job.reason ?? '',
        ]
      : [
          repeated ? `${row.task} #${row.repeat}` : row.task,
          row.status,
          formatScore(rowOverall(row)),
          `${row.jobs.reduce((sum, job) => sum + job.timings.containerSeconds, 0).toFixed(1)}s`,
          [...new Set(row.jobs.flatMap((job) => (job.reason ? [job.reason] : [])))].join(','),
        ],
  );
  const width = detailWidth(
    headers.slice(0, -1).map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length))),
    terminalWidth,
  );
  const rows = resultRowsOf.map((row, i) => [...cells[i]!, cutTo(row.kind === 'job' ? failureLine(row.job) : shardsDetail(row), width)]);
  const sharded = hasShardedTasks(run);
  const scoredRows = resultRowsOf.filter((row) => rowOverall(row) !== null).length;
  const succeeded = run.jobs.filter((j) => j.status === 'SUCCEEDED').length;
  const lines = [`Run ${run.runId}  benchmark ${run.benchmark}  model ${run.model}  ${run.status}`, '', textTable(headers, rows), ''];
  if (repeated && run.tasks) {
    const passes = (t: NonNullable<RunResult['tasks']>[number]) =>
      t.passAtK
        ? Object.entries(t.passAtK)
            .map(([k, v]) => `${k} ${v.toFixed(4)}`)
            .join(', ')
        : '';
    lines.push(
      textTable(
        ['TASK', 'REPEATS', 'MEAN ± STD', 'PASS@K'],
        run.tasks.map((t) => [t.task, `${t.scores.length}/${t.repeats}`, formatMeanStd(t.mean, t.std), passes(t)]),
      ),
      '',
    );
  }
  const over = sharded ? `${scoredRows} of ${resultRowsOf.length} tasks with a score` : `${succeeded} of ${run.jobs.length} jobs that succeeded`;
  lines.push(`overall: ${formatMeanStd(run.overall, run.overallStd)} (mean over ${over}${run.overallStd !== undefined ? '; ± is the std over repeats' : ''})`);
  const rejected = rejectedRecordsLines(run);
  if (rejected.length) lines.push(...rejected, `records: \`br records ${run.runId}\` names every rejected line (docs/benchmark-contract.md has the fields)`);
  if (run.usage) lines.push(usageLine('model', run.usage.model));
  if (run.usage?.judge) lines.push(usageLine('judge', run.usage.judge));
  if (run.usage?.user) lines.push(usageLine('user simulator', run.usage.user));
  if (run.provenance) {
    const entries = provenanceEntries(run.provenance);
    const width = Math.max(...entries.map(([label]) => label.length));
    lines.push('provenance:', ...entries.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`));
  }
  if (run.budget) lines.push(budgetLine(run.budget));
  if (webUiLink) lines.push(`Web UI:  ${webUiLink}`);
  return lines.join('\n');
}

/** A line per job whose records.jsonl had lines that could not be read: a benchmark author's mistake to see at once. */
export function rejectedRecordsLines(run: RunResult): string[] {
  const repeated = run.jobs.some((j) => (j.repeat ?? 0) > 0);
  return run.jobs.flatMap((job) => {
    const note = rejectedRecordsNote(job.records);
    return note ? [`records: ${repeated ? `${job.task} #${job.repeat ?? 0}` : job.task}: ${note}`] : [];
  });
}

/** Milliseconds for people: "3.2ms" under a second, "1.25s" above. */
function duration(ms: number): string {
  return ms < 1000 ? `${ms.toFixed(1)}ms` : `${(ms / 1000).toFixed(2)}s`;
}

function usageLine(role: string, u: UsageSummary): string {
  const errors = Object.values(u.errors).reduce((a, b) => a + b, 0);
  const parts = [
    `${u.requests} calls`,
    `${u.promptTokens} in / ${u.completionTokens} out tokens${u.reasoningTokens !== undefined ? ` (${u.reasoningTokens} thinking)` : ''}`,
    `$${u.cost.toFixed(4)}`,
    u.latencyMs && `latency p50 ${duration(u.latencyMs.p50)} p95 ${duration(u.latencyMs.p95)}`,
    u.ttftMs && `TTFT p50 ${duration(u.ttftMs.p50)}`,
    u.outputTokensPerSecond !== null && `${u.outputTokensPerSecond.toFixed(0)} tok/s`,
    errors && `${errors} errors`,
    u.retries && `${u.retries} retries (${u.throttled} throttled)`,
    (u.cacheHits || u.cacheMisses) && `cache ${u.cacheHits} hits / ${u.cacheMisses} misses`,
    u.truncated && `${u.truncated} prompts middle-truncated`,
    u.endedInThinking && `${u.endedInThinking} answers cut off by max_tokens while thinking`,
    u.budgetRefused && `${u.budgetRefused} refused for budget`,
    u.concurrencyMin !== undefined && `concurrency backed off to ${u.concurrencyMin} after 429s`,
  ].filter(Boolean);
  return `${role}:   ${parts.join(', ')}`;
}

/** "budget: spent 1200 tokens, $0.0120 of 1000 tokens (run), 500 tokens (per job); 4 calls refused; jobs: 1 stopped, 2 not started". */
export function budgetLine(b: RunBudgetFigures): string {
  const limits = [
    [b.tokens !== undefined && `${b.tokens} tokens`, b.cost !== undefined && `$${b.cost}`].filter(Boolean).join(' and ') || false,
    [b.jobTokens !== undefined && `${b.jobTokens} tokens`, b.jobCost !== undefined && `$${b.jobCost}`].filter(Boolean).join(' and ') || false,
  ];
  const of = [limits[0] && `${limits[0]} (run)`, limits[1] && `${limits[1]} (per job)`].filter(Boolean).join(', ');
  const stopped = b.jobsStopped || b.jobsNotStarted ? `; jobs: ${b.jobsStopped} stopped, ${b.jobsNotStarted} not started` : '';
  return `budget:  spent ${b.spent.tokens} tokens, $${b.spent.cost.toFixed(4)} of ${of}; ${b.refusedCalls} calls refused${stopped}`;
}

/** The bar counts instances when the run knows them all (tasks that list them), else jobs. */
export function progressLine(p: RunProgress, width = 30): string {
  const done = p.succeeded + p.failed + p.timedOut + p.cancelled;
  const [count, of] = p.instances ? [p.instances.done, p.instances.total] : [done, p.total];
  const filled = of ? Math.min(width, Math.max(0, Math.round((count / of) * width))) : 0;
  const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
  const extra = [p.failed && `${p.failed} failed`, p.timedOut && `${p.timedOut} timed out`, p.cancelled && `${p.cancelled} cancelled`]
    .filter(Boolean)
    .join(', ');
  const jobs = `${done}/${p.total} ${p.instances ? 'jobs ' : ''}done, ${p.running} running, ${p.pending} pending${extra ? `, ${extra}` : ''}`;
  return p.instances ? `[${bar}] ${count}/${of} instances; ${jobs}` : `[${bar}] ${jobs}`;
}

export function renderSuiteResult(suite: SuiteResult, webUiLink?: string): string {
  const parts = suite.runs.map((run) => renderRunResult(run));
  parts.push(
    [
      `Suite ${suite.suiteId}  suite ${suite.suite}  model ${suite.model}  ${suite.status}`,
      '',
      textTable(
        ['BENCHMARK', 'SCORE', 'JOBS', 'STATUS', 'RUN'],
        suite.runs.map((run) => [
          run.benchmark,
          formatMeanStd(run.overall, run.overallStd),
          `${run.jobs.filter((j) => j.status === 'SUCCEEDED').length}/${run.jobs.length}`,
          run.status,
          run.runId,
        ]),
      ),
      ...(webUiLink ? ['', `Web UI:  ${webUiLink}`] : []),
    ].join('\n'),
  );
  return parts.join('\n\n');
}
