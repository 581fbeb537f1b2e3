// What a run carries across continue-as-new instead of its jobs' results: counts, scores and usage
// added up in job order, so the final execution reports the same figures as one that held every job.

import { mergeRepeatCounts, meanAndStd, passAtKOfCounts, type RepeatCounts } from './run-outcome.js';
import type { JobResult, JobStatus, RunResult, RunStatus, TaskScore } from './run-spec.js';
import { emptyHarvest, harvestProvenance, type HarvestedProvenance } from './provenance.js';
import { scoreStats, type InstanceSums, type ScoreStats } from './score-interval.js';
import { emptyCounters, mergeCounters, summarizeUsage, type UsageCounters } from './usage.js';
import { foldedResult, foldShard, isFoldedShard, newFold, partOf, type ShardFold } from './shard-fold.js';

export interface RunTally {
  /** Jobs counted so far, carried-over ones included. */
  jobs: number;
  statuses: Record<JobStatus, number>;
  /** Sum and count of the succeeded jobs' `overall`, added in job order. */
  scoreSum: number;
  scored: number;
  /**
   * Per task in order of first appearance: its repeats (jobs, or for a task run in shards its repeats whose
   * shards are all in), the succeeded ones' scores by repeat, and for a task run in shards its shards per repeat
   * and each repeat's folded result.
   */
  tasks: Array<{
    task: string;
    repeats: number;
    scores: Array<[repeat: number, overall: number]>;
    shards?: number;
    results?: NonNullable<TaskScore['results']>;
  }>;
  /** Repeats of tasks run in shards whose shards are not all in yet, by `<task>#<repeat>` (runs/shard-fold.ts). */
  folds?: Record<string, ShardFold>;
  /** Per repeat index: sum and count of its succeeded jobs' scores (for the spread over repeats). */
  repeatScores: Record<string, [number, number]>;
  usage?: { model: UsageCounters; judge?: UsageCounters; user?: UsageCounters };
  /** pass@k counts per task, merged over the hosts and batches that reported them. */
  repeatCounts: Record<string, RepeatCounts>;
  /** Image ids and dataset digests the jobs reported (absent in a tally carried from before it was kept). */
  provenance?: HarvestedProvenance;
  /** Sums over the scored jobs' per-instance records; null once a scored job had none (its instances are unknown). */
  instances?: InstanceSums | null;
  /** Instances held by the jobs counted so far that hold a slice of their task's instances (progress's `done`). */
  instancesDone?: number;
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
    if (job.shard) next.instancesDone = (next.instancesDone ?? 0) + job.shard.instances;
    if (isFoldedShard(job)) addShard(next, task, job);
    else {
      task.repeats += 1;
      if (job.status === 'SUCCEEDED' && job.result) addTaskScore(next, task, job.repeat ?? 0, job.result.overall);
    }
    if (job.status === 'SUCCEEDED' && job.result) {
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

/** A task's score for one repeat: the task's, the run's and the repeat's sums. */
function addTaskScore(tally: RunTally, task: RunTally['tasks'][number], repeat: number, overall: number): void {
  tally.scoreSum += overall;
  tally.scored += 1;
  task.scores.push([repeat, overall]);
  const sums = (tally.repeatScores[String(repeat)] ??= [0, 0]);
  sums[0] += overall;
  sums[1] += 1;
}

/** A shard of a task whose result combines over instances: folded, and scored once its repeat's shards are all in. */
function addShard(tally: RunTally, task: RunTally['tasks'][number], job: JobResult): void {
  const shard = job.shard!;
  const repeat = job.repeat ?? 0;
  const key = `${job.task}#${repeat}`;
  const folds = (tally.folds ??= {});
  const fold = (folds[key] ??= newFold(shard.count, shard.aggregate!, shard.of));
  task.shards = shard.count;
  if (!foldShard(fold, shard.index, partOf(job))) return;
  delete folds[key];
  closeFold(tally, task, repeat, fold);
}

function closeFold(tally: RunTally, task: RunTally['tasks'][number], repeat: number, fold: ShardFold): void {
  const folded = foldedResult(fold);
  task.repeats += 1;
  (task.results ??= []).push({
    repeat,
    result: folded.result,
    instances: { total: folded.total, scored: folded.scored, carried: folded.carried },
    shards: { total: folded.shards, succeeded: folded.succeeded },
  });
  if (folded.result) addTaskScore(tally, task, repeat, folded.result.overall);
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
  tally = closeOpenFolds(tally);
  let status: RunStatus;
  if (cancelled) status = 'CANCELLED';
  else if (tally.jobs > 0 && tally.statuses.SUCCEEDED === tally.jobs) status = 'COMPLETED';
  else status = tally.statuses.SUCCEEDED > 0 ? 'PARTIAL' : 'FAILED';
  const tasks = tally.tasks.map(({ task, repeats, scores, shards, results }): TaskScore => {
    const ordered = [...scores].sort((a, b) => a[0] - b[0]).map(([, overall]) => overall);
    // A task run in shards is read on its hosts job by job: every repeat's every shard.
    const passAtK = withPassAtK && tally.repeatCounts[task] ? passAtKOfCounts(tally.repeatCounts[task], repeats, shards ?? 1) : undefined;
    return {
      task,
      scores: ordered,
      repeats,
      ...meanAndStd(ordered),
      ...(passAtK ? { passAtK } : {}),
      ...(results ? { results: [...results].sort((a, b) => a.repeat - b.repeat) } : {}),
    };
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

/**
 * The tally with the repeats still waiting for shards closed as they stand (a cancelled run's shards that
 * never started count as failed): what the run reports at its end.
 */
export function closeOpenFolds(tally: RunTally): RunTally {
  if (!tally.folds || Object.keys(tally.folds).length === 0) return tally;
  const next = JSON.parse(JSON.stringify(tally)) as RunTally;
  for (const [key, fold] of Object.entries(next.folds!)) {
    const cut = key.lastIndexOf('#');
    const task = next.tasks.find((t) => t.task === key.slice(0, cut))!;
    // Shards that never came: nothing more can fold in order, so fold what is held.
    for (const index of Object.keys(fold.held)
      .map(Number)
      .sort((a, b) => a - b)) {
      const part = fold.held[String(index)];
      if (!part) continue; // folded already, after the one before it
      fold.next = index;
      foldShard(fold, index, part);
    }
    fold.next = fold.shards;
    closeFold(next, task, Number(key.slice(cut + 1)), fold);
  }
  delete next.folds;
  return next;
}
