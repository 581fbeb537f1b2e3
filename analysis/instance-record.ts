// One model's outcome on one benchmark instance: BenchRouter's `records.jsonl` line plus which
// benchmark and model it came from. It is what every input of the routing analysis becomes.

import { z } from 'zod';

export interface InstanceRecord {
  benchmark: string;
  model: string;
  /**
   * The dataset the benchmark belongs to when the benchmark is one split of it (LLMRouterBench's
   * `dataset/split`): the train/test split shuffles a group's prompts together. Defaults to the benchmark.
   */
  group?: string;
  /** The instance's index in its benchmark; records are joined on (benchmark, index). */
  index: number | string;
  origin_query?: string;
  prompt?: string;
  prediction?: string;
  ground_truth?: unknown;
  /** In [0, 1]; null counts as 0 (a failed or unscored answer), and so does NaN (Python's float('nan')), counted apart. */
  score: number | null;
  prompt_tokens?: number;
  completion_tokens?: number;
  /** USD; null or missing counts as 0, and so does NaN (how Python writes a missing cost), counted apart. */
  cost?: number | null;
}

// Free-text fields sometimes hold lists or objects (chat messages); they are kept as JSON text.
const text = z.preprocess((value) => (value === null || value === undefined ? undefined : typeof value === 'string' ? value : JSON.stringify(value)), z.string().optional());
const count = z.preprocess((value) => (value === null ? undefined : value), z.number().nonnegative().optional());

const SCORE = 'expected a number in [0, 1] or null';
const COST = 'expected a non-negative number of USD or null';

export const instanceRecordSchema = z.object({
  benchmark: z.string().min(1, 'expected a non-empty benchmark name'),
  model: z.string().min(1, 'expected a non-empty model name'),
  group: z.string().min(1, 'expected a non-empty dataset name').optional(),
  index: z.union([z.number().int(), z.string().min(1)], { error: 'expected an integer or a non-empty string' }),
  origin_query: text,
  prompt: text,
  prediction: text,
  ground_truth: z.unknown().optional(),
  score: z.union([z.nan(), z.number().min(0, SCORE).max(1, SCORE)], { error: SCORE }).nullable(),
  prompt_tokens: count,
  completion_tokens: count,
  cost: z.union([z.nan(), z.number().nonnegative(COST)], { error: COST }).nullable().optional(),
});

/** The text a router sees for an instance: the prompt as sent (as LLMRouterBench embeds it), else the raw query. */
export function queryTextOf(record: Pick<InstanceRecord, 'prompt' | 'origin_query'>): string {
  return record.prompt || record.origin_query || '';
}
