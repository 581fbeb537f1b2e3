// A job workflow's rewards: the signals its container activity sends them with, and the last page,
// which rides on the container's outcome; deduplicated by records.jsonl line number (an attempt that
// resumes re-sends what the last one may have sent), and a query that pages through them (the API reads
// the same signals and outcomes from the job's history instead: api/job-rewards-history.ts). Neither
// adds commands: histories replay unchanged.

import { defineQuery, defineSignal, setHandler } from '@temporalio/workflow';
import {
  carriedBatch,
  REWARDS_PAGE_MAX,
  REWARDS_QUERY,
  REWARDS_SIGNAL,
  type Reward,
  type RewardBatch,
  type RewardsPage,
  type RewardsTaken,
  takeNewRewards,
} from '../runs/rewards.js';
import type { JobSpec } from '../runs/run-spec.js';

export const rewardsSignal = defineSignal<[RewardBatch]>(REWARDS_SIGNAL);
export const rewardsQuery = defineQuery<RewardsPage, [number]>(REWARDS_QUERY);

/**
 * Registers both handlers; `add()` takes a batch that came another way (the last page, on the container's
 * outcome); `close()` once the job has its result, so readers know no reward is to come.
 */
export function holdRewards(job: JobSpec): { add(batch: RewardBatch): void; close(): void } {
  const rewards: Reward[] = [];
  const taken: RewardsTaken = { throughLine: 0 };
  let final = false;
  const add = (batch: RewardBatch) => {
    rewards.push(...takeNewRewards(taken, batch));
  };
  // A retried job's instances its original already scored are its first rewards (activities/carried-instances.ts).
  if (job.carried) add(carriedBatch(job.carried.rewards));
  setHandler(rewardsSignal, add);
  setHandler(rewardsQuery, (from) => ({
    task: job.task.name,
    repeat: job.repeat.index,
    total: rewards.length,
    final,
    rewards: rewards.slice(Math.max(0, from), Math.max(0, from) + REWARDS_PAGE_MAX),
    throughLine: taken.throughLine,
  }));
  return { add, close: () => (final = true) };
}
