// Rewards: a task's records.jsonl lines as the worker delivers them while the task runs, one per
// instance. The worker that follows the file signals them to the job's workflow (the one channel
// every host and the API share); the API reads the signals back from the job's history, a long poll
// that costs the workers nothing (the workflow also answers a query with them). Types, names and one
// pure function, so deterministic workflow code can import it.

/** One scored instance, as its records.jsonl line said it; `line` is the line's 1-based number in the file. */
export interface Reward {
  line: number;
  instance: number | string;
  score: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cost: number | null;
}

/** What one signal carries: the next valid lines, and the last line read (bad lines give no reward). */
export interface RewardBatch {
  rewards: Reward[];
  throughLine: number;
}

/** A query's answer: the job's rewards from position `from` on, at most REWARDS_PAGE_MAX of them. */
export interface RewardsPage {
  task: string;
  repeat: number;
  /** How many rewards the job holds in all, so far. */
  total: number;
  /** True once the job has its result: no reward is to come. */
  final: boolean;
  rewards: Reward[];
  /** The last records.jsonl line the job has taken (absent in answers of workflows from before it was given). */
  throughLine?: number;
}

export const REWARDS_SIGNAL = 'rewards';
export const REWARDS_QUERY = 'rewards';
/** Rewards per signal and per query answer: well under Temporal's 2 MB payload limit at ~150 bytes each. */
export const REWARDS_PAGE_MAX = 1000;
/**
 * Rewards a job streams at most. They stay in the job workflow's history (about 150 bytes each, so
 * 15 MB at the cap, under Temporal's 50 MB); past it the task's records are only in its result.
 */
export const REWARDS_PER_JOB_MAX = 100_000;

/** What a reader of a job's reward signals has taken so far: the last records.jsonl line covered. */
export interface RewardsTaken {
  throughLine: number;
}

/**
 * The rewards of `batch` not already taken, in order: an attempt that resumes re-sends what the last
 * one may have sent, so lines at or before the last one taken are dropped. The job workflow and the
 * API (reading the same signals from the history) apply this one rule, so both count the same rewards.
 */
export function takeNewRewards(taken: RewardsTaken, batch: RewardBatch): Reward[] {
  const fresh: Reward[] = [];
  for (const reward of batch.rewards) {
    if (reward.line <= taken.throughLine) continue;
    fresh.push(reward);
    taken.throughLine = reward.line;
  }
  taken.throughLine = Math.max(taken.throughLine, batch.throughLine);
  return fresh;
}

/**
 * The rewards a retried job starts with (the instances its original scored, JobSpec.carried) as the batch the job
 * workflow and the API's reader of its history both take first, so both count them the same.
 */
export function carriedBatch(rewards: readonly Reward[]): RewardBatch {
  return { rewards: [...rewards], throughLine: rewards.reduce((max, reward) => Math.max(max, reward.line), 0) };
}
