// A run's budget across hosts: hosts share no memory, so a job's host activity tells the run workflow
// what its job spent (a signal with the job's absolute totals, once the job spent another
// 1/REPORTS_PER_BUDGET of the budget since its last one) and, every REPORT_MS while its job spends, asks it
// what the rest of the run spent (a query: nothing in history), which it hands to this host's gateway: the
// gateway refuses the job's calls once the two together reach the run's budget. The first question is
// asked before the container starts, so a job starts knowing what the finished jobs spent.
// Signals carry a job id and two numbers: no key, no token. Bound: docs/gateway.md#budgets.

import type { Context } from '@temporalio/activity';
import type { ModelGateway } from '../gateway/model-gateway.js';
import { BUDGET_QUERY, BUDGET_SPEND_SIGNAL, NO_SPEND, reportDue, runBudgetOf, type JobSpendReport, type RunBudgetAnswer, type Spend } from '../runs/budgets.js';
import type { JobSpec } from '../runs/run-spec.js';

export const REPORT_MS = 2000;
const CALL_TIMEOUT_MS = 10_000;

export interface BudgetReports {
  stop(): void;
}

/**
 * Starts the job's reports when its run has a budget and its calls go through this host's gateway; a
 * no-op otherwise. Reports are best effort: one that fails is said in the log and tried at the next tick.
 */
export async function startBudgetReports(ctx: Context, gateway: ModelGateway | undefined, job: JobSpec): Promise<BudgetReports> {
  const none = { stop: () => undefined };
  const budget = runBudgetOf(job.options);
  // Started outside a run workflow (a test of the activity alone), or no run budget: nobody to report to.
  if (!gateway || !job.options.gateway || !budget || !ctx.info.workflowExecution) return none;
  const run = ctx.client.workflow.getHandle(job.runId);
  const warn = (what: string, error: unknown) => ctx.log.warn(`job ${job.jobId}: budget ${what} to run ${job.runId} failed: ${(error as Error).message}`);
  const ask = async () => {
    const answer = await withTimeout(run.query<RunBudgetAnswer, [string]>(BUDGET_QUERY, job.jobId), `query ${BUDGET_QUERY}`);
    gateway.noteRunSpend(job.jobId, job.runId, answer.elsewhere, answer.exhausted);
  };
  await ask().catch((error: unknown) => warn('query', error));

  let reported: Spend = NO_SPEND;
  let asked: Spend = NO_SPEND;
  let busy = false;
  const tick = async () => {
    const spend = gateway.jobSpend(job.jobId);
    // A job that did not spend since it last asked needs no news: its next call is checked at the next tick.
    if (busy || (spend.tokens === asked.tokens && spend.cost === asked.cost)) return;
    busy = true;
    try {
      if (reportDue(budget, reported, spend)) {
        await withTimeout(run.signal<[JobSpendReport]>(BUDGET_SPEND_SIGNAL, { jobId: job.jobId, ...spend }), `signal ${BUDGET_SPEND_SIGNAL}`);
        reported = spend;
      }
      await ask();
      asked = spend;
    } catch (error) {
      warn('report', error);
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), REPORT_MS);
  return { stop: () => clearInterval(timer) };
}

/** A call that hangs (an overloaded server) must not hold the reports: it fails and the next tick tries again. */
function withTimeout<T>(call: Promise<T>, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} took over ${CALL_TIMEOUT_MS} ms`)), CALL_TIMEOUT_MS);
    call.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}
