// Budgets (runs/budgets.ts): what counts as spent, when a budget is spent, the run workflow's ledger of
// its jobs' spend, a refused job's verdict and the run's figures; and the options' rule that budgets
// need the gateway.

import { describe, expect, it } from 'vitest';
import {
  budgetFiguresOf,
  BudgetLedger,
  exhaustedBy,
  notStartedForBudget,
  refusalMessage,
  reportDue,
  REPORTS_PER_BUDGET,
  runSpendOf,
  spendOf,
  withBudgetVerdict,
} from '../../runs/budgets.js';
import { RunOptionsSchema } from '../../runs/run-options.js';
import type { JobResult } from '../../runs/run-spec.js';
import { addJobs, emptyTally } from '../../runs/run-tally.js';
import { emptyCounters, mergeCounters, record, summarizeUsage, unansweredSample, type UsageCounters } from '../../runs/usage.js';

function counters(fields: Partial<UsageCounters>): UsageCounters {
  return { ...emptyCounters(), ...fields };
}

function job(jobId: string, fields: Partial<JobResult> = {}): JobResult {
  return { jobId, task: 'addition', status: 'SUCCEEDED', timings: { queuedAt: 'q', startedAt: 's', finishedAt: 'f', containerSeconds: 1 }, ...fields };
}

function usageOf(model: UsageCounters, judge?: UsageCounters): JobResult['usage'] {
  return { model: summarizeUsage(model), ...(judge ? { judge: summarizeUsage(judge) } : {}), counters: { model, ...(judge ? { judge } : {}) } };
}

describe('spend', () => {
  it('counts prompt and completion tokens the upstream answered and their cost; replayed (cached) answers are free', () => {
    const c = emptyCounters();
    record(c, { status: 200, latencyMs: 1, promptTokens: 10, completionTokens: 5, cost: 0.5, retries: 0, throttled: 0, queued: false, cache: 'miss' });
    record(c, { status: 200, latencyMs: 1, promptTokens: 10, completionTokens: 5, cost: 0, retries: 0, throttled: 0, queued: false, cache: 'hit' });
    expect(c.cachedTokens).toBe(15);
    expect(spendOf(c)).toEqual({ tokens: 15, cost: 0.5 });
    expect(spendOf(undefined)).toEqual({ tokens: 0, cost: 0 });
  });

  it('is spent once either limit is reached, and says which', () => {
    expect(exhaustedBy({ tokens: 100 }, { tokens: 99, cost: 5 })).toBeUndefined();
    expect(exhaustedBy({ tokens: 100 }, { tokens: 100, cost: 0 })).toBe('100 of 100 tokens spent');
    expect(exhaustedBy({ tokens: 100, cost: 0.5 }, { tokens: 10, cost: 0.5000001 })).toBe('$0.5 of $0.5 spent');
    expect(refusalMessage('run', '100 of 100 tokens spent')).toBe(
      "BenchRouter budget exhausted: the run's budget is spent (100 of 100 tokens spent); no further model calls are sent (docs/gateway.md#budgets)",
    );
  });

  it('a refused call counts as a request, a 429 error and a budget refusal; refusals and the lowest concurrency merge', () => {
    const a = emptyCounters();
    const refused = unansweredSample(429, 1, { budgetRefused: true });
    record(a, refused);
    record(a, refused);
    expect([a.requests, a.errors, a.budgetRefused]).toEqual([2, { '429': 2 }, 2]);
    const merged = mergeCounters(counters({ ...a, concurrencyMin: 16 }), counters({ budgetRefused: 1, concurrencyMin: 4 }));
    expect([merged.budgetRefused, merged.concurrencyMin]).toEqual([3, 4]);
    expect(mergeCounters(emptyCounters(), emptyCounters())).toEqual(emptyCounters());
    expect(summarizeUsage(merged)).toMatchObject({ budgetRefused: 3, concurrencyMin: 4 });
  });
});

describe('BudgetLedger', () => {
  it("answers each job with the run's spend but its own, and is spent on finished plus reported spend", () => {
    const ledger = new BudgetLedger({ tokens: 100 }, { tokens: 30, cost: 0 });
    ledger.started('a');
    ledger.started('b');
    ledger.report({ jobId: 'a', tokens: 20, cost: 0.1 });
    ledger.report({ jobId: 'b', tokens: 40, cost: 0.2 });
    expect(ledger.answer('a')).toEqual({ elsewhere: { tokens: 70, cost: 0.2 } });
    expect(ledger.answer('b')).toEqual({ elsewhere: { tokens: 50, cost: 0.1 } });
    expect(ledger.exhausted()).toBeUndefined();
    // Reports are absolute totals: a repeated or overtaken one changes nothing.
    ledger.report({ jobId: 'a', tokens: 20, cost: 0.1 });
    ledger.report({ jobId: 'a', tokens: 10, cost: 0.05 });
    expect(ledger.spent()).toEqual({ tokens: 90, cost: 0.30000000000000004 });
    // A finished job's result replaces its report; a late report of it is ignored.
    ledger.finished(job('b', { usage: usageOf(counters({ promptTokens: 40, completionTokens: 5 })) }));
    ledger.report({ jobId: 'b', tokens: 999, cost: 9 });
    expect(ledger.spent()).toEqual({ tokens: 95, cost: 0.1 });
    ledger.report({ jobId: 'a', tokens: 25, cost: 0.1 });
    expect(ledger.exhausted()).toBe('100 of 100 tokens spent');
    expect(ledger.answer('a')).toEqual({ elsewhere: { tokens: 75, cost: 0 }, exhausted: '100 of 100 tokens spent' });
    // A job that failed without usage (its child workflow failed) keeps what it last reported.
    ledger.started('c');
    ledger.report({ jobId: 'c', tokens: 7, cost: 0 });
    ledger.finished(job('c', {}));
    expect(ledger.spent().tokens).toBe(107);
    // Reports of jobs it never saw start are not counted.
    ledger.report({ jobId: 'z', tokens: 1000, cost: 0 });
    expect(ledger.spent().tokens).toBe(107);
  });

  it('without a run budget is never spent', () => {
    const ledger = new BudgetLedger(undefined, { tokens: 1e9, cost: 1e9 });
    expect(ledger.exhausted()).toBeUndefined();
  });
});

describe('reports to the run', () => {
  it('are due once a job spent another 1/REPORTS_PER_BUDGET of the budget since its last, so a run sends about that many', () => {
    expect(REPORTS_PER_BUDGET).toBe(500);
    const budget = { tokens: 100_000 };
    expect(reportDue(budget, { tokens: 1000, cost: 0 }, { tokens: 1199, cost: 9 })).toBe(false);
    expect(reportDue(budget, { tokens: 1000, cost: 0 }, { tokens: 1200, cost: 9 })).toBe(true);
    expect(reportDue({ cost: 5 }, { tokens: 0, cost: 1 }, { tokens: 1e9, cost: 1.0099 })).toBe(false);
    expect(reportDue({ cost: 5 }, { tokens: 0, cost: 1 }, { tokens: 0, cost: 1.01 })).toBe(true);
    // A small budget: every call is a report.
    expect(reportDue({ tokens: 320 }, { tokens: 220, cost: 0 }, { tokens: 243, cost: 0 })).toBe(true);
  });
});

describe('a job stopped by a budget', () => {
  const refused = usageOf(counters({ promptTokens: 100, completionTokens: 20, cost: 0.25, budgetRefused: 4, requests: 14, errors: { '429': 4 } }));

  it('fails with BUDGET whatever the harvest said, keeping its message and any result', () => {
    expect(withBudgetVerdict({ status: 'FAILED' as const, reason: 'NON_ZERO_EXIT' as const, message: 'command exited with code 1' }, refused)).toEqual({
      status: 'FAILED',
      reason: 'BUDGET',
      message: 'the gateway refused 4 model calls: budget spent (this job spent 120 tokens, $0.25); command exited with code 1',
    });
    const result = { overall: 0.5, metrics: {} };
    expect(withBudgetVerdict({ status: 'SUCCEEDED' as const, result }, refused)).toEqual({
      status: 'FAILED',
      reason: 'BUDGET',
      result,
      message: 'the gateway refused 4 model calls: budget spent (this job spent 120 tokens, $0.25)',
    });
  });

  it('is not one when no call was refused, or when it timed out', () => {
    const harvested = { status: 'SUCCEEDED' as const };
    expect(withBudgetVerdict(harvested, usageOf(emptyCounters()))).toBe(harvested);
    expect(withBudgetVerdict(harvested, undefined)).toBe(harvested);
    const late = { status: 'TIMED_OUT' as const, message: 'exceeded' };
    expect(withBudgetVerdict(late, refused)).toBe(late);
  });

  it('a job the run did not start says why', () => {
    expect(notStartedForBudget({ jobId: 'r.001-x', task: 'x' }, '100 of 100 tokens spent', 'T')).toEqual({
      jobId: 'r.001-x',
      task: 'x',
      status: 'FAILED',
      reason: 'BUDGET',
      message: "not started: the run's budget is spent (100 of 100 tokens spent)",
      timings: { queuedAt: 'T', finishedAt: 'T', containerSeconds: 0 },
    });
  });
});

describe("the run's budget figures", () => {
  it('say the limits, the spend (carried jobs excepted), refused calls and the jobs stopped or not started', () => {
    const carried = job('r.000-a', { carriedFrom: 'r0', usage: usageOf(counters({ promptTokens: 50, completionTokens: 50, cost: 1 })) });
    const ran = job('r.001-b', {
      usage: usageOf(counters({ promptTokens: 30, completionTokens: 10, cost: 0.5 }), counters({ promptTokens: 5, completionTokens: 5 })),
    });
    const stopped = job('r.002-c', {
      status: 'FAILED',
      reason: 'BUDGET',
      usage: usageOf(counters({ promptTokens: 20, completionTokens: 0, budgetRefused: 3 })),
    });
    const notStarted = notStartedForBudget({ jobId: 'r.003-d', task: 'd' }, 'x', 'T');
    const tally = addJobs(emptyTally(), [carried, ran, stopped, notStarted]);
    expect(tally.budgetJobs).toEqual({ stopped: 1, notStarted: 1 });
    expect(runSpendOf(tally, [carried])).toEqual({ tokens: 70, cost: 0.5 });
    expect(budgetFiguresOf({ budgetTokens: 60, jobBudgetCost: 2 }, tally, [carried])).toEqual({
      tokens: 60,
      jobCost: 2,
      spent: { tokens: 70, cost: 0.5 },
      refusedCalls: 3,
      jobsStopped: 1,
      jobsNotStarted: 1,
    });
    expect(budgetFiguresOf({}, tally, [])).toBeUndefined();
  });
});

describe('budget options', () => {
  it('need the gateway, which enforces them', () => {
    const parsed = RunOptionsSchema.safeParse({ model: 'm', endpoint: 'http://x/v1', gateway: false, budgetTokens: 1000, jobBudgetCost: 1 });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      'budgetTokens: budgets are enforced by the gateway: they cannot be used with gateway false',
      'jobBudgetCost: budgets are enforced by the gateway: they cannot be used with gateway false',
    ]);
    expect(RunOptionsSchema.parse({ model: 'm', endpoint: 'http://x/v1', budgetTokens: 1000, budgetCost: 2.5 })).toMatchObject({
      budgetTokens: 1000,
      budgetCost: 2.5,
    });
  });
});
