// Rewards: a task's records.jsonl lines as the worker delivers them while the task runs, one per
// instance. The worker that follows the file signals them to the job's workflow (the one channel
// every host and the API share); the API reads them back with a query, a page at a time. Types and
// names only, so deterministic workflow code can import it.

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
