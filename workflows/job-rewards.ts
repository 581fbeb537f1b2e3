// A job workflow's rewards: the signal its container activity sends them with, deduplicated by
// records.jsonl line number (an attempt that resumes re-sends what the last one may have sent), and
// the query the API pages through them with. Handlers add no commands: histories replay unchanged.

import { defineQuery, defineSignal, setHandler } from '@temporalio/workflow';
import { REWARDS_PAGE_MAX, REWARDS_QUERY, REWARDS_SIGNAL, type Reward, type RewardBatch, type RewardsPage } from '../runs/rewards.js';
import type { JobSpec } from '../runs/run-spec.js';

export const rewardsSignal = defineSignal<[RewardBatch]>(REWARDS_SIGNAL);
export const rewardsQuery = defineQuery<RewardsPage, [number]>(REWARDS_QUERY);

/** Registers both handlers; `close()` once the job has its result, so readers know no reward is to come. */
export function holdRewards(job: JobSpec): { close(): void } {
  const rewards: Reward[] = [];
  let throughLine = 0;
  let final = false;
  setHandler(rewardsSignal, (batch) => {
    for (const reward of batch.rewards) {
      if (reward.line <= throughLine) continue;
      rewards.push(reward);
      throughLine = reward.line;
    }
    throughLine = Math.max(throughLine, batch.throughLine);
  });
  setHandler(rewardsQuery, (from) => ({
    task: job.task.name,
    repeat: job.repeat.index,
    total: rewards.length,
    final,
    rewards: rewards.slice(Math.max(0, from), Math.max(0, from) + REWARDS_PAGE_MAX),
  }));
  return { close: () => (final = true) };
}
