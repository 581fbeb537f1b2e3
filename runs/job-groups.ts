// A run's jobs as people read its results: a row per task (and repeat), where a task run in shards is one row
// over its shard jobs, with the result folded from them (the run's `tasks[].results`) and their status as one.
// Pure; the CLI's tables, the exports and the dashboard read runs through it.

import { isFoldedShard } from './shard-fold.js';
import type { JobResult, JobStatus, RunResult, TaskScore } from './run-spec.js';

export type TaskRowStatus = JobStatus | 'PARTIAL';

export interface ShardedTaskRow {
  kind: 'shards';
  task: string;
  repeat: number;
  /** The task's shard jobs of this repeat, in shard order (those the run started). */
  jobs: JobResult[];
  status: TaskRowStatus;
  /** The repeat's result folded from its shards; undefined while the run has not reported one. */
  folded?: NonNullable<TaskScore['results']>[number];
}

export type ResultRow = { kind: 'job'; job: JobResult } | ShardedTaskRow;

/**
 * A run's jobs with each task's shards (of one repeat) together and in shard order, where its first one is: a
 * retry lists the shards it carried over before those it ran, and a task's records read in job order are then
 * in instance order. Anything else keeps its place.
 */
export function inShardOrder<T extends Pick<JobResult, 'task' | 'repeat' | 'shard'>>(jobs: readonly T[]): T[] {
  const groups = new Map<string, T[]>();
  const keyOf = (job: T) => (isFoldedShard(job) ? `${job.task}#${job.repeat ?? 0}` : undefined);
  for (const job of jobs) {
    const key = keyOf(job);
    if (key) groups.set(key, [...(groups.get(key) ?? []), job]);
  }
  const placed = new Set<string>();
  return jobs.flatMap((job) => {
    const key = keyOf(job);
    if (!key) return [job];
    if (placed.has(key)) return [];
    placed.add(key);
    return [...groups.get(key)!].sort((a, b) => (a.shard?.index ?? 0) - (b.shard?.index ?? 0));
  });
}

/** The rows of a run's results, in job order: each task run in more than one shard as one row where its first shard was. */
export function resultRows(run: Pick<RunResult, 'jobs' | 'tasks'>): ResultRow[] {
  const rows: ResultRow[] = [];
  const groups = new Map<string, ShardedTaskRow>();
  for (const job of run.jobs) {
    if (!isFoldedShard(job) || (job.shard?.count ?? 1) <= 1) {
      rows.push({ kind: 'job', job });
      continue;
    }
    const key = `${job.task}#${job.repeat ?? 0}`;
    let group = groups.get(key);
    if (!group) {
      const folded = run.tasks?.find((t) => t.task === job.task)?.results?.find((r) => r.repeat === (job.repeat ?? 0));
      group = { kind: 'shards', task: job.task, repeat: job.repeat ?? 0, jobs: [], status: 'SUCCEEDED', ...(folded ? { folded } : {}) };
      groups.set(key, group);
      rows.push(group);
    }
    group.jobs.push(job);
  }
  for (const group of groups.values()) {
    group.jobs.sort((a, b) => (a.shard?.index ?? 0) - (b.shard?.index ?? 0));
    group.status = groupStatus(group.jobs);
  }
  return rows;
}

/** All shards alike: their status; some succeeded: PARTIAL; none: FAILED (or TIMED_OUT, CANCELLED when all were). */
function groupStatus(jobs: readonly JobResult[]): TaskRowStatus {
  const statuses = new Set(jobs.map((job) => job.status));
  if (statuses.size === 1) return jobs[0]!.status;
  return statuses.has('SUCCEEDED') ? 'PARTIAL' : 'FAILED';
}

/** The row's score: a job's overall, or the task's result folded from its shards. */
export function rowOverall(row: ResultRow): number | null {
  if (row.kind === 'job') return row.job.result?.overall ?? null;
  return row.folded?.result?.overall ?? null;
}

/** Whether the run has any task run in more than one shard (its results then speak of tasks, not jobs). */
export function hasShardedTasks(run: Pick<RunResult, 'jobs'>): boolean {
  return run.jobs.some((job) => isFoldedShard(job) && (job.shard?.count ?? 1) > 1);
}

/** "8 shards, 32 instances" (and what was carried over and did not succeed), for a row's detail. */
export function shardsDetail(row: ShardedTaskRow): string {
  const instances = row.jobs.reduce((sum, job) => sum + (job.shard?.instances ?? 0), 0);
  const count = row.jobs[0]?.shard?.count ?? row.jobs.length;
  const carried = row.jobs.reduce((sum, job) => sum + (job.shard?.carried ?? 0), 0);
  const failed = row.jobs.filter((job) => job.status !== 'SUCCEEDED');
  const parts = [`${count} shards, ${instances} instances`];
  if (row.folded && row.folded.instances.scored !== row.folded.instances.total) parts.push(`${row.folded.instances.scored} scored`);
  if (carried) parts.push(`${carried} carried over`);
  if (failed.length)
    parts.push(
      `${failed.length} shard${failed.length === 1 ? '' : 's'} ${failed.map((job) => `#${job.shard?.index ?? 0} ${job.status}${job.reason ? ` ${job.reason}` : ''}`).join(', ')}`,
    );
  return parts.join(', ');
}
