// Budgets: how many tokens (prompt + completion) and dollars a run, and each of its jobs, may spend on the
// model (and judge, and user simulator) through the gateway, and what is spent. Spend is what the upstream answered: answers
// replayed from the cache are free. Pure, so the gateway, the host activity and the run workflow agree.
// The guarantee and its bound are in docs/gateway.md#budgets.

import type { RunOptions } from './run-options.js';
import type { RunTally } from './run-tally.js';
import type { JobResult } from './run-spec.js';
import type { UsageCounters } from './usage.js';

export interface Spend {
  tokens: number;
  cost: number;
}

/** A limit on tokens, on dollars, or both: spent once either is reached. */
export interface Budget {
  tokens?: number;
  cost?: number;
}

export const NO_SPEND: Spend = { tokens: 0, cost: 0 };

/** The run workflow's signal a host activity sends with its job's spend so far (absolute totals: idempotent). */
export const BUDGET_SPEND_SIGNAL = 'budgetSpend';
/** The run workflow's query: the run's spend apart from the asking job's, and whether the run's budget is spent. */
export const BUDGET_QUERY = 'budget';

export interface JobSpendReport extends Spend {
  jobId: string;
}

export interface RunBudgetAnswer {
  /** What the run spent apart from the asking job: finished jobs, and other running jobs as last reported. */
  elsewhere: Spend;
  /** Set once the run's budget is spent (on the run's whole known spend): the reason refusals give. */
  exhausted?: string;
}

export function runBudgetOf(options: Pick<RunOptions, 'budgetTokens' | 'budgetCost'>): Budget | undefined {
  return budgetOf(options.budgetTokens, options.budgetCost);
}

export function jobBudgetOf(options: Pick<RunOptions, 'jobBudgetTokens' | 'jobBudgetCost'>): Budget | undefined {
  return budgetOf(options.jobBudgetTokens, options.jobBudgetCost);
}

function budgetOf(tokens: number | undefined, cost: number | undefined): Budget | undefined {
  if (tokens === undefined && cost === undefined) return undefined;
  return { ...(tokens !== undefined ? { tokens } : {}), ...(cost !== undefined ? { cost } : {}) };
}

/** What counters spent upstream: their tokens less those replayed from the cache, and their cost (a replay costs 0). */
export function spendOf(counters: UsageCounters | undefined): Spend {
  if (!counters) return NO_SPEND;
  return { tokens: counters.promptTokens + counters.completionTokens - (counters.cachedTokens ?? 0), cost: counters.cost };
}

export function addSpend(a: Spend, b: Spend): Spend {
  return { tokens: a.tokens + b.tokens, cost: a.cost + b.cost };
}

function subtractSpend(a: Spend, b: Spend): Spend {
  return { tokens: a.tokens - b.tokens, cost: a.cost - b.cost };
}

/**
 * What the run itself spent, from its tally: model, judge and user simulator, less the jobs `br retry` carried over (their
 * spend was the original run's, so a retry's budget is for what it runs again).
 */
export function runSpendOf(tally: Pick<RunTally, 'usage'>, carried: ReadonlyArray<Pick<JobResult, 'usage'>>): Spend {
  const all = addSpend(addSpend(spendOf(tally.usage?.model), spendOf(tally.usage?.judge)), spendOf(tally.usage?.user));
  return subtractSpend(all, carried.map(spendOfJob).reduce(addSpend, NO_SPEND));
}

/** A job's spend from its result: model, judge and user simulator. */
export function spendOfJob(job: Pick<JobResult, 'usage'>): Spend {
  return addSpend(addSpend(spendOf(job.usage?.counters.model), spendOf(job.usage?.counters.judge)), spendOf(job.usage?.counters.user));
}

/**
 * A running job reports its spend to the run workflow once it spent this share of the run's budget since
 * its last report: each report is a signal in the run's history, so a run's reports number about
 * REPORTS_PER_BUDGET however many jobs it has and however long they run, and a job's unreported spend is
 * under 1/REPORTS_PER_BUDGET of the budget (docs/gateway.md#budgets has the bound).
 */
export const REPORTS_PER_BUDGET = 500;

/** Whether the job spent enough since `reported` to report it (activities/budget-reports.ts). */
export function reportDue(budget: Budget, reported: Spend, spend: Spend): boolean {
  const tokensStep = budget.tokens !== undefined && spend.tokens - reported.tokens >= budget.tokens / REPORTS_PER_BUDGET;
  const costStep = budget.cost !== undefined && spend.cost - reported.cost >= budget.cost / REPORTS_PER_BUDGET;
  return tokensStep || costStep;
}

/** "1,200 of 1,000 tokens" for the first limit `spent` reached, or undefined while neither is. */
export function exhaustedBy(budget: Budget, spent: Spend): string | undefined {
  if (budget.tokens !== undefined && spent.tokens >= budget.tokens) return `${spent.tokens} of ${budget.tokens} tokens spent`;
  if (budget.cost !== undefined && spent.cost >= budget.cost) return `$${roundCost(spent.cost)} of $${budget.cost} spent`;
  return undefined;
}

function roundCost(cost: number): string {
  return String(Math.round(cost * 1e6) / 1e6);
}

/** The message of a refused call, as the harness gets it (HTTP 429, type `budget_exhausted`) and logs it. */
export function refusalMessage(whose: 'job' | 'run', why: string): string {
  return `BenchRouter budget exhausted: the ${whose}'s budget is spent (${why}); no further model calls are sent (docs/gateway.md#budgets)`;
}

/**
 * The run workflow's account of what its jobs spent: the finished ones' (from their results, and the
 * earlier executions' from the tally) and the running ones' last reports. Reports of jobs that are not
 * running (a late signal of a finished job) are ignored, and a finished job's result replaces its report.
 */
export class BudgetLedger {
  private finishedSpend: Spend;
  private readonly running = new Map<string, Spend>();

  constructor(
    readonly budget: Budget | undefined,
    finished: Spend,
  ) {
    this.finishedSpend = finished;
  }

  started(jobId: string): void {
    this.running.set(jobId, NO_SPEND);
  }

  report(report: JobSpendReport): void {
    if (!this.running.has(report.jobId)) return;
    const known = this.running.get(report.jobId)!;
    // Totals only grow: a report overtaken by a later one is dropped.
    if (report.tokens >= known.tokens && report.cost >= known.cost) this.running.set(report.jobId, { tokens: report.tokens, cost: report.cost });
  }

  /** A job that ended: its result's spend, or, for a child that failed without usage, its last report. */
  finished(job: JobResult): void {
    const reported = this.running.get(job.jobId) ?? NO_SPEND;
    this.running.delete(job.jobId);
    this.finishedSpend = addSpend(this.finishedSpend, job.usage ? spendOfJob(job) : reported);
  }

  spent(): Spend {
    return [...this.running.values()].reduce(addSpend, this.finishedSpend);
  }

  /** The run's spend but `jobId`'s own report. */
  answer(jobId: string): RunBudgetAnswer {
    const elsewhere = [...this.running].filter(([id]) => id !== jobId).reduce((sum, [, spend]) => addSpend(sum, spend), this.finishedSpend);
    const exhausted = this.exhausted();
    return { elsewhere, ...(exhausted ? { exhausted } : {}) };
  }

  /** Why no further job may start (the run's budget is spent), or undefined. */
  exhausted(): string | undefined {
    return this.budget ? exhaustedBy(this.budget, this.spent()) : undefined;
  }
}

/** The result of a job the run did not start because its budget was spent. */
export function notStartedForBudget(base: Pick<JobResult, 'jobId' | 'task'>, why: string, at: string): JobResult {
  return {
    ...base,
    status: 'FAILED',
    reason: 'BUDGET',
    message: `not started: the run's budget is spent (${why})`,
    timings: { queuedAt: at, finishedAt: at, containerSeconds: 0 },
  };
}

/**
 * A job whose calls the gateway refused for a spent budget fails with BUDGET, whatever its harness then
 * did: a result written from part of the instances is kept with it, but is not a score of the task (only
 * succeeded jobs count). Its message says how many calls were refused and keeps what the harvest said.
 */
export function withBudgetVerdict<T extends { status: JobResult['status']; reason?: JobResult['reason']; message?: string }>(
  harvested: T,
  usage: JobResult['usage'],
): T {
  const refused = (usage?.counters.model.budgetRefused ?? 0) + (usage?.counters.judge?.budgetRefused ?? 0) + (usage?.counters.user?.budgetRefused ?? 0);
  if (refused === 0 || harvested.status === 'TIMED_OUT') return harvested;
  const spent = spendOfJob({ usage });
  const note = `the gateway refused ${refused} model ${refused === 1 ? 'call' : 'calls'}: budget spent (this job spent ${spent.tokens} tokens, $${roundCost(spent.cost)})`;
  return { ...harvested, status: 'FAILED', reason: 'BUDGET', message: harvested.message ? `${note}; ${harvested.message}` : note };
}

/** The run's budget figures for its result, when any budget is set. */
export function budgetFiguresOf(
  options: Pick<RunOptions, 'budgetTokens' | 'budgetCost' | 'jobBudgetTokens' | 'jobBudgetCost'>,
  tally: Pick<RunTally, 'usage' | 'budgetJobs'>,
  carried: ReadonlyArray<Pick<JobResult, 'usage'>>,
): RunBudgetFigures | undefined {
  const run = runBudgetOf(options);
  const job = jobBudgetOf(options);
  if (!run && !job) return undefined;
  return {
    ...(run?.tokens !== undefined ? { tokens: run.tokens } : {}),
    ...(run?.cost !== undefined ? { cost: run.cost } : {}),
    ...(job?.tokens !== undefined ? { jobTokens: job.tokens } : {}),
    ...(job?.cost !== undefined ? { jobCost: job.cost } : {}),
    spent: runSpendOf(tally, carried),
    refusedCalls: (tally.usage?.model.budgetRefused ?? 0) + (tally.usage?.judge?.budgetRefused ?? 0) + (tally.usage?.user?.budgetRefused ?? 0),
    jobsStopped: tally.budgetJobs?.stopped ?? 0,
    jobsNotStarted: tally.budgetJobs?.notStarted ?? 0,
  };
}

/** A run's budget figures, as its result reports them. */
export interface RunBudgetFigures {
  /** The limits (absent ones are not set). */
  tokens?: number;
  cost?: number;
  jobTokens?: number;
  jobCost?: number;
  /** What the run spent upstream, model, judge and user simulator. */
  spent: Spend;
  /** Calls the gateway refused for a spent budget. */
  refusedCalls: number;
  /** Jobs that ran and were stopped by a budget, and jobs the run did not start because its budget was spent. */
  jobsStopped: number;
  jobsNotStarted: number;
}
