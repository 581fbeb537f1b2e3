// One model's outcome on one benchmark instance: BenchRouter's `records.jsonl` line plus which
// benchmark and model it came from. It is what every input of the routing analysis becomes.

import { z } from 'zod';

export interface ModelOutcome {
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
const text = z.preprocess(
  (value) => (value === null || value === undefined ? undefined : typeof value === 'string' ? value : JSON.stringify(value)),
  z.string().optional(),
);
const count = z.preprocess((value) => (value === null ? undefined : value), z.number().nonnegative().optional());

const SCORE = 'expected a number in [0, 1] or null';
const COST = 'expected a non-negative number of USD or null';

export const modelOutcomeSchema = z.object({
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
  cost: z
    .union([z.nan(), z.number().nonnegative(COST)], { error: COST })
    .nullable()
    .optional(),
});

/** The text a router sees for an instance: the prompt as sent (as LLMRouterBench embeds it), else the raw query. */
/** A record's score or cost as the analysis counts it: null, or NaN (how Python writes a missing number), is 0. */
export function numberOrZero(value: number | null | undefined): number {
  return value === null || value === undefined || Number.isNaN(value) ? 0 : value;
}

export function queryTextOf(record: Pick<ModelOutcome, 'prompt' | 'origin_query'>): string {
  return record.prompt || record.origin_query || '';
}

/**
 * modelOutcomeSchema.safeParse of `value` with the fields of `origin` (where it was read) added,
 * fast: a record whose fields are plainly valid is built directly, with no copy of the raw object
 * (zod and the copy cost about 8 µs a record, 3 s of CPU on a 400,000-record release); anything
 * else goes through the schema, which decides and words the error.
 */
export function parseModelOutcome(
  value: unknown,
  origin?: Pick<ModelOutcome, 'benchmark' | 'model' | 'group'>,
): ReturnType<typeof modelOutcomeSchema.safeParse> {
  const record = plainlyValid(value, origin);
  if (record) return { success: true, data: record };
  return modelOutcomeSchema.safeParse(origin ? { ...(typeof value === 'object' && value !== null ? value : { record: value }), ...origin } : value);
}

function plainlyValid(value: unknown, origin?: Pick<ModelOutcome, 'benchmark' | 'model' | 'group'>): ModelOutcome | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  const { index, score, cost } = v;
  const benchmark = origin ? origin.benchmark : v['benchmark'];
  const model = origin ? origin.model : v['model'];
  const group = origin ? origin.group : v['group'];
  if (typeof benchmark !== 'string' || !benchmark || typeof model !== 'string' || !model) return undefined;
  if (group !== undefined && (typeof group !== 'string' || !group)) return undefined;
  if (!(typeof index === 'string' ? index.length > 0 : Number.isSafeInteger(index))) return undefined;
  if (!(score === null || (typeof score === 'number' && (Number.isNaN(score) || (score >= 0 && score <= 1))))) return undefined;
  if (!(cost === undefined || cost === null || (typeof cost === 'number' && (Number.isNaN(cost) || (cost >= 0 && cost < Infinity))))) return undefined;
  const record: ModelOutcome = { benchmark, model, index: index as number | string, score: score as number | null };
  if (group !== undefined) record.group = group as string;
  for (const key of ['origin_query', 'prompt', 'prediction'] as const) {
    const t = v[key];
    if (t === undefined || t === null) continue;
    record[key] = typeof t === 'string' ? t : JSON.stringify(t);
  }
  if (v['ground_truth'] !== undefined) record.ground_truth = v['ground_truth'];
  for (const key of ['prompt_tokens', 'completion_tokens'] as const) {
    const n = v[key];
    if (n === undefined || n === null) continue;
    if (typeof n !== 'number' || !(n >= 0 && n < Infinity)) return undefined;
    record[key] = n;
  }
  if (cost !== undefined) record.cost = cost as number | null;
  return record;
}
