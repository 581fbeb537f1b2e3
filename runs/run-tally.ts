// What a run carries across continue-as-new instead of its jobs' results: counts, scores and usage
// added up in job order, so the final execution reports the same figures as one that held every job.

import { mergeRepeatCounts, meanAndStd, passAtKOfCounts, type RepeatCounts } from './run-outcome.js';
import type { JobResult, JobStatus, RunResult, RunStatus, TaskScore } from './run-spec.js';
import { emptyHarvest, harvestProvenance, type HarvestedProvenance } from './provenance.js';
import { scoreStats, type InstanceSums, type ScoreStats } from './score-interval.js';
import { emptyCounters, mergeCounters, summarizeUsage, type UsageCounters } from './usage.js';

export interface RunTally {
  /** Jobs counted so far, carried-over ones included. */
  jobs: number;
  statuses: Record<JobStatus, number>;
  /** Sum and count of the succeeded jobs' `overall`, added in job order. */
  scoreSum: number;
  scored: number;
  /** Per task in order of first appearance: its jobs, and the succeeded ones' scores by repeat. */
  tasks: Array<{ task: string; repeats: number; scores: Array<[repeat: number, overall: number]> }>;
  /** Per repeat index: sum and count of its succeeded jobs' scores (for the spread over repeats). */
  repeatScores: Record<string, [number, number]>;
  usage?: { model: UsageCounters; judge?: UsageCounters; user?: UsageCounters };
  /** pass@k counts per task, merged over the hosts and batches that reported them. */
  repeatCounts: Record<string, RepeatCounts>;
  /** Image ids and dataset digests the jobs reported (absent in a tally carried from before it was kept). */
  provenance?: HarvestedProvenance;
  /** Sums over the scored jobs' per-instance records; null once a scored job had none (its instances are unknown). */
  instances?: InstanceSums | null;
  /** Jobs that failed with BUDGET: stopped while they ran, or not started (absent while none did). */
  budgetJobs?: { stopped: number; notStarted: number };
}

export function emptyTally(): RunTally {
  return {
    jobs: 0,
    statuses: { SUCCEEDED: 0, FAILED: 0, TIMED_OUT: 0, CANCELLED: 0 },
    scoreSum: 0,
    scored: 0,
    tasks: [],
    repeatScores: {},
    repeatCounts: {},
    provenance: emptyHarvest(),
    instances: { n: 0, sum: 0, squares: 0 },
  };
}

/** Adds finished jobs to the tally; call it with jobs in job order so sums match a single pass. */
export function addJobs(tally: RunTally, jobs: ReadonlyArray<JobResult>): RunTally {
  const next = JSON.parse(JSON.stringify(tally)) as RunTally;
  for (const job of jobs) {
    next.jobs += 1;
    next.statuses[job.status] += 1;
    let task = next.tasks.find((t) => t.task === job.task);
    if (!task) next.tasks.push((task = { task: job.task, repeats: 0, scores: [] }));
    task.repeats += 1;
    if (job.status === 'SUCCEEDED' && job.result) {
      next.scoreSum += job.result.overall;
      next.scored += 1;
      task.scores.push([job.repeat ?? 0, job.result.overall]);
      const repeat = (next.repeatScores[String(job.repeat ?? 0)] ??= [0, 0]);
      repeat[0] += job.result.overall;
      repeat[1] += 1;
      const records = job.records;
      if (next.instances && records && records.count > 0 && records.meanScore !== null && records.scoreSquares !== undefined) {
        next.instances.n += records.count;
        next.instances.sum += records.meanScore * records.count;
        next.instances.squares += records.scoreSquares;
      } else next.instances = null;
    }
    if (job.reason === 'BUDGET') {
      const budgetJobs = (next.budgetJobs ??= { stopped: 0, notStarted: 0 });
      if (job.timings.startedAt === undefined) budgetJobs.notStarted += 1;
      else budgetJobs.stopped += 1;
    }
    if (job.usage) {
      const judge = job.usage.counters.judge ? mergeCounters(next.usage?.judge ?? emptyCounters(), job.usage.counters.judge) : next.usage?.judge;
      const user = job.usage.counters.user ? mergeCounters(next.usage?.user ?? emptyCounters(), job.usage.counters.user) : next.usage?.user;
      next.usage = {
        model: mergeCounters(next.usage?.model ?? emptyCounters(), job.usage.counters.model),
        ...(judge ? { judge } : {}),
        ...(user ? { user } : {}),
      };
    }
  }
  if (next.provenance) next.provenance = harvestProvenance(next.provenance, jobs);
  return next;
}

/** Jobs that never started because the run was cancelled. */
export function addUnstarted(tally: RunTally, count: number): RunTally {
  return { ...tally, jobs: tally.jobs + count, statuses: { ...tally.statuses, CANCELLED: tally.statuses.CANCELLED + count } };
}

export function addRepeatCounts(tally: RunTally, perTask: ReadonlyArray<Record<string, RepeatCounts> | undefined>): RunTally {
  const repeatCounts = { ...tally.repeatCounts };
  for (const task of new Set(perTask.flatMap((counts) => Object.keys(counts ?? {})))) {
    repeatCounts[task] = mergeRepeatCounts([repeatCounts[task], ...perTask.map((counts) => counts?.[task])]);
  }
  return { ...tally, repeatCounts };
}

/** The figures of a run's result, from its tally (the same rules as run-outcome's per-job functions). */
export function tallyOutcome(
  tally: RunTally,
  cancelled: boolean,
  withPassAtK: boolean,
): Pick<RunResult, 'status' | 'overall' | 'usage'> & { tasks: TaskScore[]; overallStd: number | null; scoreStats: ScoreStats } {
  let status: RunStatus;
  if (cancelled) status = 'CANCELLED';
  else if (tally.jobs > 0 && tally.statuses.SUCCEEDED === tally.jobs) status = 'COMPLETED';
  else status = tally.statuses.SUCCEEDED > 0 ? 'PARTIAL' : 'FAILED';
  const tasks = tally.tasks.map(({ task, repeats, scores }): TaskScore => {
    const ordered = [...scores].sort((a, b) => a[0] - b[0]).map(([, overall]) => overall);
    const passAtK = withPassAtK && tally.repeatCounts[task] ? passAtKOfCounts(tally.repeatCounts[task], repeats) : undefined;
    return { task, scores: ordered, repeats, ...meanAndStd(ordered), ...(passAtK ? { passAtK } : {}) };
  });
  const repeatMeans = Object.keys(tally.repeatScores)
    .sort((a, b) => Number(a) - Number(b))
    .map((repeat) => tally.repeatScores[repeat]![0] / tally.repeatScores[repeat]![1]);
  const usage = tally.usage
    ? {
        model: summarizeUsage(tally.usage.model),
        ...(tally.usage.judge ? { judge: summarizeUsage(tally.usage.judge) } : {}),
        ...(tally.usage.user ? { user: summarizeUsage(tally.usage.user) } : {}),
      }
    : undefined;
  const overall = tally.scored > 0 ? tally.scoreSum / tally.scored : null;
  return {
    status,
    overall,
    overallStd: repeatMeans.length < 2 ? null : meanAndStd(repeatMeans).std,
    scoreStats: scoreStats({ overall, scoredJobs: tally.scored, repeatMeans, ...(tally.instances ? { instances: tally.instances } : {}) }),
    tasks,
    ...(usage ? { usage } : {}),
  };
}
