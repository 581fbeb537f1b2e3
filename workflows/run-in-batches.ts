// RunWorkflow for runs of any size: one execution starts at most `jobsPerExecution` jobs, adds their
// results to a tally and continues as new with it; the jobs' full results stay in their own workflows.

import {
  CancellationScope,
  ParentClosePolicy,
  getExternalWorkflowHandle,
  makeContinueAsNewFunc,
  patched,
  proxyActivities,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { SharedActivities } from '../activities/index.js';
import type { TaskDefinition } from '../contract/benchmark.js';
import { hostQueueName } from '../runs/host-queues.js';
import { summarizeProgress } from '../runs/run-outcome.js';
import type { JobResult, JobSpec, RunProgress, RunResult, RunSpec } from '../runs/run-spec.js';
import { addJobs, addRepeatCounts, addUnstarted, emptyTally, tallyOutcome, type RunTally } from '../runs/run-tally.js';
import { SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import { runJobsInLanes } from './job-lanes.js';
import { jobSpecsOf } from '../runs/job-specs.js';
import { JOBS_PER_EXECUTION, progressQuery, repeatCountsOn, type runWorkflow } from './run-workflow.js';
import { definitionsPageId, pagesForJobs, tasksByName, type PinnedTaskDefinitions } from '../runs/task-definition-pages.js';
import { releaseDefinitionsSignal } from './task-definitions-workflow.js';
import { paginateResults, resultsPageId } from '../runs/result-pages.js';
import { runResultsPageWorkflow } from './run-results-page-workflow.js';

/**
 * Patch id: the run's input pins its task definitions by reference (`spec.definitions`), and each
 * execution loads the pages its batch needs; the final one releases the pages' holders.
 */
const DEFINITIONS_BY_REFERENCE = 'task-definitions-by-reference';
/**
 * Patch id: each execution, once its jobs are done, writes their results into a few page workflows
 * (runs/result-pages.ts) and the run's result names them; readers get a page with one history call
 * instead of listing a memo per job.
 */
const RESULTS_IN_PAGES = 'run-results-in-pages';
/**
 * Patch id: a run whose one execution ran every job, with results that fit one page, returns them in
 * its own result and writes no page: a trainer's batch of a few jobs paid a whole page workflow
 * (start, workflow task, close, three visibility writes) for them.
 */
const SMALL_RESULTS_INLINE = 'run-small-results-inline';

/**
 * Patch id: jobs of a run whose executions all write result pages (or whose one execution returns its
 * jobs inline) put no copy of their result in their memo. Readers of such runs never list memos, and
 * each memo was one more visibility write per job (5% of the dev server's CPU in a profile of 100
 * no-op jobs), on top of the result the job workflow returns and the run's page already holds.
 */
const JOB_RESULTS_BY_RUN = 'job-results-by-run';

const { loadTaskDefinitions } = proxyActivities<SharedActivities>({ startToCloseTimeout: '1 minute', retry: { maximumAttempts: 5 } });

/** Every task, those of jobs `first`..`first + count - 1` loaded from their pages, the rest by name only. */
async function definitionsForBatch(runId: string, pinned: PinnedTaskDefinitions, first: number, count: number): Promise<TaskDefinition[]> {
  // Tasks outside this execution's batch are known by name only: none of their jobs starts here.
  const tasks = tasksByName(pinned.names);
  const pages = pagesForJobs(pinned, first, count);
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

export async function runInBatches(spec: RunSpec): Promise<RunResult> {
  const startedAt = spec.continuation?.startedAt ?? new Date().toISOString();
  const repeats = spec.options.repeats ?? 1;
  const carried = spec.retryOf?.carried ?? [];
  const first = spec.continuation?.nextJob ?? 0;
  const batchSize = Math.max(1, spec.options.jobsPerExecution ?? JOBS_PER_EXECUTION);
  const byReference = spec.definitions !== undefined && patched(DEFINITIONS_BY_REFERENCE);
  // A retry's carried jobs count once, in the first execution.
  let tally: RunTally = spec.continuation?.tally ?? addJobs(emptyTally(), carried);

  // Progress: earlier executions' jobs as counts (the tally as this execution found it: this batch's
  // jobs are added to `tally` before the end, and must not count twice), this batch's jobs by name,
  // later ones as pending. Job ids need task names only, so the query answers from the first workflow
  // task on, before any page of definitions is loaded.
  const earlier = tally;
  const named = jobSpecsOf({ ...spec, tasks: byReference ? tasksByName(spec.definitions!.names) : spec.tasks });
  const progress: RunProgress['jobs'] = named.slice(first, first + batchSize).map((job) => ({ jobId: job.jobId, task: job.task.name, state: 'pending' }));
  const total = named.length;
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
    };
  });

  // The last batch may be short: no page is loaded for tasks past the run's last job.
  const tasks = byReference ? await definitionsForBatch(spec.runId, spec.definitions!, first, Math.min(batchSize, total - first)) : spec.tasks;
  // Pages only when every execution writes them: an execution of a run that began before them (the first
  // execution wrote none) leaves its readers to the memos, as its earlier batches did.
  const pagedRun = first === 0 || spec.continuation?.resultPages !== undefined;
  const resultsByRun = pagedRun && patched(JOB_RESULTS_BY_RUN);
  const all = jobSpecsOf({ ...spec, tasks }).map((job): JobSpec => (resultsByRun ? job : { ...job, resultInMemo: true }));
  const batch = all.slice(first, first + batchSize);

  const cancelled = () => CancellationScope.current().consideredCancelled;
  const results = await runJobsInLanes(batch, spec.options.concurrency, startedAt, progress);

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
  const inline = first === 0 && carried.length === 0 && ran.length === all.length && paginateResults(ran).length === 1 && patched(SMALL_RESULTS_INLINE);

  let resultPages = spec.continuation?.resultPages;
  if (!inline && pagedRun && patched(RESULTS_IN_PAGES)) resultPages = [...(resultPages ?? []), ...(await writeResultPages(spec.runId, first, ran))];

  if (!cancelled() && nextJob < all.length) {
    // Named, not left to the server's defaults: `br list`, the Web UI and the leaderboard filter on them.
    const carryOver = makeContinueAsNewFunc<typeof runWorkflow>({
      typedSearchAttributes: workflowInfo().typedSearchAttributes,
      ...(workflowInfo().memo ? { memo: workflowInfo().memo } : {}),
    });
    await carryOver({ ...spec, continuation: { nextJob, startedAt, tally, ...(resultPages ? { resultPages } : {}) } });
  }

  if (byReference) await releaseDefinitions(spec.runId, spec.definitions!);
  tally = addUnstarted(tally, all.length - first - ran.length);
  const outcome = tallyOutcome(tally, cancelled(), repeats > 1 && !cancelled());
  upsertSearchAttributes([
    { key: SEARCH_ATTRIBUTES.status, value: outcome.status },
    ...(outcome.overall !== null ? [{ key: SEARCH_ATTRIBUTES.score, value: outcome.overall }] : []),
  ]);
  return {
    runId: spec.runId,
    ...(spec.retryOf ? { retryOf: spec.retryOf.runId } : {}),
    benchmark: spec.benchmark.name,
    model: spec.model.name,
    status: outcome.status,
    overall: outcome.overall,
    ...(repeats > 1 ? { overallStd: outcome.overallStd } : {}),
    tasks: outcome.tasks,
    ...(inline ? { jobs: ran } : { jobs: [], jobsIn: 'job-workflows' as const, jobCount: tally.jobs, ...(resultPages ? { resultPages } : {}) }),
    ...(outcome.usage ? { usage: outcome.usage } : {}),
    startedAt,
    finishedAt: new Date().toISOString(),
  };
}
