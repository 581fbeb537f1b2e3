// Budgets end to end (docs/gateway.md#budgets): a token budget stops an arith run mid-way through `br
// run`, on the real dev server, worker, Docker and reference model. The reference model's token counts
// are deterministic, so every figure is exact: each addition call costs 22 tokens and each
// multiplication call 23 (reference-model/reference-answer.ts countTokens, prompt and answer).

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../runs/run-spec.js';
import { br, repoRoot, startHarness, type Harness } from './support/harness.js';

const arithDir = path.join(repoRoot, 'benchmarks', 'arith');

let h: Harness;
beforeAll(async () => {
  h = await startHarness('budgets');
});
afterAll(async () => {
  await h?.close();
});

describe('a run budget', () => {
  it('stops the run mid-way: the job that met it and the jobs not started fail with BUDGET, the run is PARTIAL, and the spend is reported exactly', async () => {
    // One job at a time, repeat-major: addition #0, multiplication #0, addition #1, multiplication #1, 10 problems each.
    // Addition #0 spends 10 × 22 = 220 tokens. Multiplication #0 starts knowing that (the run workflow's answer
    // before its container starts): its calls go while 220 + 23k < 320, that is 5 calls (335 tokens), and the
    // 6th is refused; arith retries a 429 three times, so 4 calls are refused before it exits 1.
    const model = 'reference';
    const args = ['--model', model, '--endpoint', h.model.url, '--budget-tokens', '320', '--repeats', '2', '--limit', '10', '--concurrency', '1', '--json'];
    const ran = await br(['run', arithDir, ...args], h.env);
    expect(ran.code, ran.stderr).toBe(3); // PARTIAL
    const run = JSON.parse(ran.stdout) as RunResult;

    expect(run.status).toBe('PARTIAL');
    expect(run.jobs.map((j) => [j.task, j.repeat, j.status, j.reason ?? null, j.result?.overall ?? null])).toEqual([
      ['addition', 0, 'SUCCEEDED', null, 1],
      ['multiplication', 0, 'FAILED', 'BUDGET', null],
      ['addition', 1, 'FAILED', 'BUDGET', null],
      ['multiplication', 1, 'FAILED', 'BUDGET', null],
    ]);
    expect(run.overall).toBe(1);

    // The finished job is intact; the stopped one kept its 5 answered instances' records, and says why it stopped.
    const [done, stopped, ...notStarted] = run.jobs;
    expect(done!.records).toMatchObject({ count: 10, meanScore: 1 });
    expect(done!.usage!.model).toMatchObject({ requests: 10, promptTokens: 170, completionTokens: 50, errors: {} });
    expect(stopped!.records).toMatchObject({ count: 5, meanScore: 1 });
    expect(stopped!.usage!.model).toMatchObject({ requests: 9, promptTokens: 90, completionTokens: 25, budgetRefused: 4, errors: { '429': 4 } });
    expect(stopped!.message).toMatch(
      /^the gateway refused 4 model calls: budget spent \(this job spent 115 tokens, \$[0-9.e-]+\); command exited with code 1; last log line: .*BenchRouter budget exhausted: the run's budget is spent \(335 of 320 tokens spent\)/,
    );
    for (const job of notStarted) {
      expect(job).toMatchObject({ message: "not started: the run's budget is spent (335 of 320 tokens spent)", timings: { containerSeconds: 0 } });
      expect(job.usage).toBeUndefined();
    }

    // Exactly what the reference model answered: 15 calls, 335 tokens; the refused calls never reached it.
    const answered = h.model.requests.filter((r) => r.path === '/v1/chat/completions' && (r.body as { model?: string }).model === model);
    expect(answered.length).toBe(15);
    expect(answered.reduce((sum, r) => sum + r.usage!.total_tokens, 0)).toBe(335);
    expect(run.usage!.model).toMatchObject({ requests: 19, promptTokens: 260, completionTokens: 75, budgetRefused: 4 });
    expect(run.budget).toEqual({
      tokens: 320,
      spent: { tokens: 335, cost: run.usage!.model.cost },
      refusedCalls: 4,
      jobsStopped: 1,
      jobsNotStarted: 2,
    });

    // `br results` says spent against the budget.
    const shown = await br(['results', run.runId], h.env);
    expect(shown.stdout).toContain(
      `budget:  spent 335 tokens, $${run.usage!.model.cost.toFixed(4)} of 320 tokens (run); 4 calls refused; jobs: 1 stopped, 2 not started`,
    );
  });
});

describe('a job budget', () => {
  it('stops each job at its own budget, whatever the rest of the run spent: no job succeeds, so the run FAILED', async () => {
    // Each addition call costs 22 tokens: calls go while 22k < 100, that is 5 (110 tokens); then 4 refused.
    const run = await h.run(arithDir, { model: 'reference-acc80', tasks: ['addition'], repeats: 2, limit: 10, concurrency: 2, jobBudgetTokens: 100 });
    expect(run.status).toBe('FAILED');
    for (const job of run.jobs) {
      expect([job.status, job.reason]).toEqual(['FAILED', 'BUDGET']);
      expect(job.usage!.model).toMatchObject({ requests: 9, promptTokens: 85, completionTokens: 25, budgetRefused: 4 });
      expect(job.message).toMatch(
        /^the gateway refused 4 model calls: budget spent \(this job spent 110 tokens, .*the job's budget is spent \(110 of 100 tokens spent\)/,
      );
      expect(job.records).toMatchObject({ count: 5 });
    }
    expect(run.budget).toEqual({ jobTokens: 100, spent: { tokens: 220, cost: run.usage!.model.cost }, refusedCalls: 4 * 2, jobsStopped: 2, jobsNotStarted: 0 });
  });
});

describe('adaptive concurrency', () => {
  it("halves the run's limit on each upstream 429 and shows the lowest in the run's usage", async () => {
    // The model answers its first two chat calls 429 (Retry-After 0): 64 is halved to 32, and the retry's 429 to 16.
    const run = await h.run(arithDir, { model: 'reference-fail429x2', tasks: ['addition'], limit: 3 });
    expect(run.status).toBe('COMPLETED');
    expect(run.usage!.model).toMatchObject({ requests: 3, throttled: 2, retries: 2, concurrencyMin: 16 });
    expect(run.budget).toBeUndefined();
  });
});
