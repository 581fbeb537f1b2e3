// RunWorkflow: one evaluation run. Starts a child JobWorkflow per job (a task, or a task's repeat), at
// most `concurrency` at once, and aggregates their results; partial results are reported, never dropped.
// One execution starts at most `jobsPerExecution` jobs, adds their results to a tally and continues as new
// with it, so a run of any size keeps a bounded history (docs/architecture.md). The jobs' results leave
// the run in its own result when they fit one page, else in page workflows its result names.

import {
  CancellationScope,
  ParentClosePolicy,
  defineQuery,
  defineSignal,
  getExternalWorkflowHandle,
  makeContinueAsNewFunc,
  proxyActivities,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { HostActivities, SharedActivities } from '../activities/index.js';
import type { TaskDefinition } from '../contract/benchmark.js';
import {
  BUDGET_QUERY,
  BUDGET_SPEND_SIGNAL,
  budgetFiguresOf,
  BudgetLedger,
  runBudgetOf,
  runSpendOf,
  type JobSpendReport,
  type RunBudgetAnswer,
} from '../runs/budgets.js';
import { hostQueueName } from '../runs/host-queues.js';
import { instanceCountOf, jobSlotsOf, jobSpecsOf, type JobSlot } from '../runs/job-specs.js';
import { shardLength } from '../runs/instance-shards.js';
import { provenanceHash, provenanceOf } from '../runs/provenance.js';
import { paginateResults, resultsPageId } from '../runs/result-pages.js';
import { summarizeProgress } from '../runs/run-outcome.js';
import type { JobResult, RunProgress, RunResult, RunSpec } from '../runs/run-spec.js';
import { addJobs, addRepeatCounts, addUnstarted, emptyTally, tallyOutcome, type RunTally } from '../runs/run-tally.js';
import { formatScoreStats } from '../runs/score-interval.js';
import { SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import { definitionsPageId, pagesForTasks, tasksByName, type PinnedTaskDefinitions } from '../runs/task-definition-pages.js';
import { runJobsInLanes } from './job-lanes.js';
import { runResultsPageWorkflow } from './run-results-page-workflow.js';
import { releaseDefinitionsSignal } from './task-definitions-workflow.js';

export const progressQuery = defineQuery<RunProgress>('progress');
/** A running job's spend so far, from its host activity (activities/budget-reports.ts); only with a run budget. */
export const budgetSpendSignal = defineSignal<[JobSpendReport]>(BUDGET_SPEND_SIGNAL);
/** The run's spend apart from the asking job, and whether its budget is spent. */
export const budgetQuery = defineQuery<RunBudgetAnswer, [string]>(BUDGET_QUERY);

/** Jobs per execution: measured about 8 history events and 3.5 KB per job (perf/scale), so one execution stays near 8,000 events and 4 MB. */
export const JOBS_PER_EXECUTION = 1000;

const repeatCountsOn = (taskQueue: string) =>
  proxyActivities<HostActivities>({ taskQueue, scheduleToStartTimeout: '60s', startToCloseTimeout: '5 minutes', retry: { maximumAttempts: 3 } }).repeatCounts;

const { loadTaskDefinitions } = proxyActivities<SharedActivities>({ startToCloseTimeout: '1 minute', retry: { maximumAttempts: 5 } });

/** Every task, those of this batch's jobs loaded from their pages, the rest by name only. */
async function definitionsForBatch(runId: string, pinned: PinnedTaskDefinitions, batch: readonly JobSlot[]): Promise<TaskDefinition[]> {
  // Tasks outside this execution's batch are known by name only: none of their jobs starts here.
  const tasks = tasksByName(pinned.names);
  const pages = pagesForTasks(pinned, new Set(batch.map((slot) => slot.task)));
  const loaded = await Promise.all(pages.map((page) => loadTaskDefinitions({ runId, page, digest: pinned.pages[page]!.digest })));
  pages.forEach((page, i) => loaded[i]!.forEach((task, k) => (tasks[pinned.pages[page]!.first + k] = task)));
  return tasks;
}

/** The holders close once the run is done with them; one already gone is no matter. Runs on through a cancel. */
async function releaseDefinitions(runId: string, pinned: PinnedTaskDefinitions): Promise<void> {
  await CancellationScope.nonCancellable(() =>
    Promise.all(
      pinned.pages.map((_, page) =>
        getExternalWorkflowHandle(definitionsPageId(runId, page))
          .signal(releaseDefinitionsSignal)
          .catch(() => undefined),
      ),
    ),
  );
}

/**
 * This batch's results written as pages, each the input of a workflow of its own; their ids. Waits
 * only for each page's workflow to start, and runs on through a cancel, so a cancelled run's pages
 * hold every job it started. The pages outlive the run (abandoned, not children to close with it).
 */
async function writeResultPages(runId: string, first: number, results: JobResult[]): Promise<string[]> {
  const pages = paginateResults(results);
  return CancellationScope.nonCancellable(() =>
    Promise.all(
      pages.map(async (page, index) => {
        const workflowId = resultsPageId(runId, first, index);
        await startChild(runResultsPageWorkflow, { workflowId, args: [page], parentClosePolicy: ParentClosePolicy.ABANDON });
        return workflowId;
      }),
    ),
  );
}

export async function runWorkflow(spec: RunSpec): Promise<RunResult> {
  const startedAt = spec.continuation?.startedAt ?? new Date().toISOString();
  const repeats = spec.options.repeats;
  const carried = spec.retryOf?.carried ?? [];
  const first = spec.continuation?.nextJob ?? 0;
  const batchSize = Math.max(1, spec.options.jobsPerExecution ?? JOBS_PER_EXECUTION);
  // Definitions of a big run live in page holders, loaded batch by batch; a small run's travel in its input.
  const byReference = spec.definitions !== undefined;
  // A retry's carried jobs count once, in the first execution.
  let tally: RunTally = spec.continuation?.tally ?? addJobs(emptyTally(), carried);

  // Progress: earlier executions' jobs as counts (the tally as this execution found it: this batch's
  // jobs are added to `tally` before the end, and must not count twice), this batch's jobs by name,
  // later ones as pending. Job ids need task names only, so the query answers from the first workflow
  // task on, before any page of definitions is loaded.
  const earlier = tally;
  const slots = jobSlotsOf(spec);
  const batchSlots = slots.slice(first, first + batchSize);
  const named = jobSpecsOf({ ...spec, tasks: byReference ? tasksByName(spec.definitions!.names) : spec.tasks }, batchSlots);
  const progress: RunProgress['jobs'] = named.map((job, i) => {
    const plan = spec.plan?.[batchSlots[i]!.task];
    return { jobId: job.jobId, task: job.task.name, state: 'pending', ...(plan ? { instances: shardLength(plan, batchSlots[i]!.shard) } : {}) };
  });
  const total = slots.length;
  // Instances of the whole run, when every task lists them; those of ended jobs count as done.
  // A retry counts the instances of the tasks it left out, every job of which it carried over, as done and in the total.
  const runTasks = new Set(byReference ? spec.definitions!.names : spec.tasks.map((t) => t.name));
  const carriedElsewhere = carried.reduce((sum, job) => sum + (job.shard && !runTasks.has(job.task) ? job.shard.instances : 0), 0);
  const ownInstances = instanceCountOf(spec);
  const instanceTotal = ownInstances === undefined ? undefined : ownInstances + carriedElsewhere;
  const instancesDoneBefore = earlier.instancesDone ?? 0;
  setHandler(progressQuery, () => {
    const own = summarizeProgress(progress);
    const later = total - first - progress.length;
    return {
      ...own,
      total: earlier.jobs + own.total + later,
      pending: own.pending + later,
      succeeded: own.succeeded + earlier.statuses.SUCCEEDED,
      failed: own.failed + earlier.statuses.FAILED,
      timedOut: own.timedOut + earlier.statuses.TIMED_OUT,
      cancelled: own.cancelled + earlier.statuses.CANCELLED,
      ...(instanceTotal !== undefined
        ? {
            instances: {
              total: instanceTotal,
              done:
                instancesDoneBefore + progress.reduce((sum, job) => sum + (job.state !== 'pending' && job.state !== 'running' ? (job.instances ?? 0) : 0), 0),
            },
          }
        : {}),
    };
  });

  // The run's spend: earlier executions' from the tally, this batch's as its jobs report and finish.
  const ledger = new BudgetLedger(runBudgetOf(spec.options), runSpendOf(tally, carried));
  setHandler(budgetSpendSignal, (report) => ledger.report(report));
  setHandler(budgetQuery, (jobId) => ledger.answer(jobId));

  // No page is loaded for tasks of which this batch runs no job.
  const tasks = byReference ? await definitionsForBatch(spec.runId, spec.definitions!, batchSlots) : spec.tasks;
  const batch = jobSpecsOf({ ...spec, tasks }, batchSlots);

  const cancelled = () => CancellationScope.current().consideredCancelled;
  const results = await runJobsInLanes(batch, spec.options.concurrency, startedAt, progress, ledger.budget ? ledger : undefined);

  // Added in job order, so sums come out as in a run that held every result at once.
  const ran = results.filter((r): r is JobResult => r !== undefined);
  tally = addJobs(tally, ran);
  if (repeats > 1 && !cancelled()) {
    // pass@k counts of this batch, each host counting the records it holds (the first batch adds the carried jobs').
    const counted = first === 0 ? [...carried, ...ran] : ran;
    const byHost = new Map<string, JobResult[]>();
    for (const job of counted) if (job.host) byHost.set(job.host, [...(byHost.get(job.host) ?? []), job]);
    const refs = (jobs: JobResult[]) =>
      jobs.map((j) => ({ jobId: j.jobId, task: j.task, repeat: j.repeat ?? 0, ...(j.carriedFrom ? { carriedFrom: j.carriedFrom } : {}) }));
    const perHost = await Promise.all(
      [...byHost].map(([host, jobs]) =>
        repeatCountsOn(hostQueueName(workflowInfo().taskQueue, host))({ runId: spec.runId, jobs: refs(jobs) }).catch(() => undefined),
      ),
    );
    // A host that could not answer leaves its tasks short of repeats: they get no pass@k.
    tally = addRepeatCounts(tally, perHost);
  }

  const nextJob = first + batch.length;
  // The whole run in this execution (its first, every job ran), nothing carried, one page's worth: inline.
  const inline = first === 0 && carried.length === 0 && ran.length === total && paginateResults(ran).length === 1;
  const resultPages = inline ? [] : [...(spec.continuation?.resultPages ?? []), ...(await writeResultPages(spec.runId, first, ran))];

  if (!cancelled() && nextJob < total) {
    // Named, not left to the server's defaults: `br list`, the Web UI and the leaderboard filter on them.
    const carryOver = makeContinueAsNewFunc<typeof runWorkflow>({
      typedSearchAttributes: workflowInfo().typedSearchAttributes,
      ...(workflowInfo().memo ? { memo: workflowInfo().memo } : {}),
    });
    await carryOver({ ...spec, continuation: { nextJob, startedAt, tally, resultPages } });
  }

  if (byReference) await releaseDefinitions(spec.runId, spec.definitions!);
  tally = addUnstarted(tally, total - first - ran.length);
  const outcome = tallyOutcome(tally, cancelled(), repeats > 1 && !cancelled());
  const provenance = provenanceOf(spec, tally.provenance);
  const budget = budgetFiguresOf(spec.options, tally, carried);
  upsertSearchAttributes([
    { key: SEARCH_ATTRIBUTES.status, value: outcome.status },
    ...(outcome.overall !== null ? [{ key: SEARCH_ATTRIBUTES.score, value: outcome.overall }] : []),
    { key: SEARCH_ATTRIBUTES.provenance, value: provenanceHash(provenance) },
    { key: SEARCH_ATTRIBUTES.scoreStats, value: formatScoreStats(outcome.scoreStats) },
  ]);
  return {
    runId: spec.runId,
    ...(spec.retryOf ? { retryOf: spec.retryOf.runId } : {}),
    benchmark: spec.benchmark.name,
    model: spec.options.model,
    status: outcome.status,
    overall: outcome.overall,
    ...(repeats > 1 ? { overallStd: outcome.overallStd } : {}),
    tasks: outcome.tasks,
    ...(inline ? { jobs: ran } : { jobs: [], jobsIn: 'result-pages' as const, jobCount: tally.jobs, resultPages }),
    ...(outcome.usage ? { usage: outcome.usage } : {}),
    provenance,
    scoreStats: outcome.scoreStats,
    ...(budget ? { budget } : {}),
    startedAt,
    finishedAt: new Date().toISOString(),
  };
}
