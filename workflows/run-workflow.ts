// RunWorkflow: one evaluation run. Starts a child JobWorkflow per task, at most `concurrency` at
// once, and aggregates every job's result; partial results are reported, never dropped.

import { CancellationScope, defineQuery, patched, proxyActivities, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { HostActivities, SharedActivities } from '../activities/index.js';
import { hostQueueName } from '../runs/host-queues.js';
import { SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import {
  meanOverall,
  mergeRepeatCounts,
  passAtKOfCounts,
  repeatStd,
  runStatus,
  runUsage,
  stateOfStatus,
  summarizeProgress,
  taskScores,
} from '../runs/run-outcome.js';
import { jobSpecsOf, repeatFields } from '../runs/job-specs.js';
import type { JobResult, RunProgress, RunResult, RunSpec } from '../runs/run-spec.js';
import { runJobsInLanes } from './job-lanes.js';
import { runInBatches } from './run-in-batches.js';

export const progressQuery = defineQuery<RunProgress>('progress');

const { passAtK } = proxyActivities<SharedActivities>({ startToCloseTimeout: '5 minutes', retry: { maximumAttempts: 3 } });

/** Patch id: pass@k counted on each job's own host instead of read whole on whichever host took it. */
const PASS_AT_K_ON_JOB_HOSTS = 'pass-at-k-on-job-hosts';
/** Patch id: jobs run in batches, one execution per batch (continue-as-new); results stay in the job workflows. */
const RUN_IN_BATCHES = 'run-in-batches';

/** Jobs per execution: measured about 8 history events and 3.5 KB per job (perf/scale), so one execution stays near 8,000 events and 4 MB. */
export const JOBS_PER_EXECUTION = 1000;

export const repeatCountsOn = (taskQueue: string) =>
  proxyActivities<HostActivities>({ taskQueue, scheduleToStartTimeout: '60s', startToCloseTimeout: '5 minutes', retry: { maximumAttempts: 3 } }).repeatCounts;

export async function runWorkflow(spec: RunSpec): Promise<RunResult> {
  // Runs of any size: batches of jobs, each execution continuing as new (run-in-batches.ts).
  if (patched(RUN_IN_BATCHES)) return runInBatches(spec);
  return runAllAtOnce(spec);
}

/** The run as one execution holding every job's result: how runs started before RUN_IN_BATCHES replay. */
async function runAllAtOnce(spec: RunSpec): Promise<RunResult> {
  const startedAt = new Date().toISOString();
  const repeats = spec.options.repeats ?? 1;
  const jobs = jobSpecsOf(spec);
  const progress: RunProgress['jobs'] = jobs.map((job) => ({ jobId: job.jobId, task: job.task.name, state: 'pending' }));
  const carriedProgress: RunProgress['jobs'] = (spec.retryOf?.carried ?? []).map((job) => ({ jobId: job.jobId, task: job.task, state: 'succeeded' }));
  setHandler(progressQuery, () => summarizeProgress([...carriedProgress, ...progress]));

  const cancelled = () => CancellationScope.current().consideredCancelled;
  const results = await runJobsInLanes(jobs, spec.options.concurrency, startedAt, progress);

  const finishedAt = new Date().toISOString();
  const ran = results.map(
    (result, index): JobResult =>
      result ?? {
        jobId: jobs[index]!.jobId,
        task: jobs[index]!.task.name,
        status: 'CANCELLED',
        message: 'run cancelled before this job started',
        timings: { queuedAt: startedAt, finishedAt, containerSeconds: 0 },
        ...repeatFields(jobs[index]!),
      },
  );
  ran.forEach((r, i) => (progress[i]!.state = stateOfStatus(r.status)));
  // A retry carries the original run's succeeded jobs over: they count as this run's results.
  const all = [...(spec.retryOf?.carried ?? []), ...ran];
  const status = runStatus(all, cancelled());
  const usage = runUsage(all);
  const tasks = taskScores(all);
  if (repeats > 1 && !cancelled()) {
    // Best effort: pass@k needs every repeat's records; a failure here costs the run nothing else.
    const refs = (jobs: JobResult[]) =>
      jobs.map((j) => ({ jobId: j.jobId, task: j.task, repeat: j.repeat ?? 0, ...(j.carriedFrom ? { carriedFrom: j.carriedFrom } : {}) }));
    if (patched(PASS_AT_K_ON_JOB_HOSTS)) {
      // Each host counts the records it holds; hosts share no disk. A host that is gone leaves its
      // tasks without pass@k rather than holding the run up.
      const byHost = new Map<string, JobResult[]>();
      for (const job of all) if (job.host) byHost.set(job.host, [...(byHost.get(job.host) ?? []), job]);
      const perHost = await Promise.all(
        [...byHost].map(([host, jobs]) =>
          repeatCountsOn(hostQueueName(workflowInfo().taskQueue, host))({ runId: spec.runId, jobs: refs(jobs) }).catch(() => undefined),
        ),
      );
      for (const task of tasks) {
        const estimate = passAtKOfCounts(mergeRepeatCounts(perHost.map((counts) => counts?.[task.task])), all.filter((j) => j.task === task.task).length);
        if (estimate) task.passAtK = estimate;
      }
    } else {
      try {
        const byTask = await passAtK({ runId: spec.runId, jobs: refs(all) });
        for (const task of tasks) if (byTask[task.task]) task.passAtK = byTask[task.task];
      } catch {
        // reported as absent
      }
    }
  }
  const overall = meanOverall(all);
  upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.status, value: status }, ...(overall !== null ? [{ key: SEARCH_ATTRIBUTES.score, value: overall }] : [])]);
  return {
    runId: spec.runId,
    ...(spec.retryOf ? { retryOf: spec.retryOf.runId } : {}),
    benchmark: spec.benchmark.name,
    model: spec.model.name,
    status,
    overall,
    ...(repeats > 1 ? { overallStd: repeatStd(all) } : {}),
    tasks,
    jobs: all,
    ...(usage ? { usage } : {}),
    startedAt,
    finishedAt,
  };
}
