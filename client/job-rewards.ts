// The rewards a job holds (one per instance it scored, runs/rewards.ts), read from its workflow by its
// rewards query: what a retry carries into the rerun of a shard that did not finish, so that no instance it
// scored is evaluated again.

import { WorkflowNotFoundError, type WorkflowClient } from '@temporalio/client';
import pMap from 'p-map';
import { REWARDS_QUERY, type Reward, type RewardsPage } from '../runs/rewards.js';

/** Jobs read at once: each query replays a closed job's history on a worker. */
const AT_ONCE = 8;

/** Each job's rewards, by job id; a job with none, or whose workflow never started, is left out. */
export async function jobRewardsOf(client: WorkflowClient, jobIds: readonly string[]): Promise<Map<string, Reward[]>> {
  const read = await pMap(jobIds, async (jobId) => [jobId, await rewardsOfJob(client, jobId)] as const, { concurrency: AT_ONCE });
  return new Map(read.filter((entry): entry is readonly [string, Reward[]] => entry[1].length > 0));
}

async function rewardsOfJob(client: WorkflowClient, jobId: string): Promise<Reward[]> {
  const handle = client.getHandle(jobId);
  const rewards: Reward[] = [];
  try {
    for (;;) {
      const page = await handle.query<RewardsPage, [number]>(REWARDS_QUERY, rewards.length);
      rewards.push(...page.rewards);
      if (page.rewards.length === 0 || rewards.length >= page.total) return rewards;
    }
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return [];
    throw error;
  }
}
