// A benchmark's optional per-instance records.jsonl (docs/benchmark-contract.md), validated line by line and
// summarized for the job result. Lenient where real benchmarks differ (string indexes, boolean
// scores, unknown token counts); a line that still fails is counted and reported, never dropped.

import { z } from 'zod';
import { fieldPath, showValue } from './problems.js';

export interface InstanceRecord {
  index: number | string;
  /** In [0, 1]; a boolean score is stored as 1 (true) or 0 (false). */
  score: number;
  /** null when the benchmark did not report it. */
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** USD; null when the benchmark did not report it. */
  cost: number | null;
  origin_query?: unknown;
  prompt?: unknown;
  prediction?: unknown;
  ground_truth?: unknown;
  raw_output?: unknown;
  /** Fields beyond the contract's are kept as they are. */
  [field: string]: unknown;
}

export interface BadRecordLine {
  /** 1-based, counting blank lines, as an editor shows it. */
  line: number;
  /** For example `line 7: score: expected a number in [0, 1] or a boolean, got "high"`. */
  problem: string;
}

/** A figure some records may not report: the total over those that do, and how many do not. */
export interface RecordsTotal {
  total: number;
  missing: number;
}

export interface RecordsSummary {
  count: number;
  badLines: number;
  /** The first few bad lines' problems, each naming its line. */
  badLineExamples: string[];
  /** Mean score over valid records; null when there are none. */
  meanScore: number | null;
  /** Sum of the valid records' squared scores (for the score's interval); absent in summaries from before it was kept. */
  scoreSquares?: number;
  promptTokens: RecordsTotal;
  completionTokens: RecordsTotal;
  cost: RecordsTotal;
}

export const BAD_LINE_EXAMPLES = 5;

const SCORE = 'expected a number in [0, 1] or a boolean';
const INDEX = 'expected a number or a non-empty string';
const COUNT = 'expected a non-negative number or null';

const score = z.preprocess(
  (value) => (typeof value === 'boolean' ? Number(value) : value),
  z.number({ error: SCORE }).min(0, { error: SCORE }).max(1, { error: SCORE }),
);
// Absent and null both mean "not reported": counted as missing, not as a bad line.
const optionalCount = z.preprocess((value) => value ?? null, z.number({ error: COUNT }).nonnegative({ error: COUNT }).nullable());

const recordSchema = z.looseObject({
  index: z.union([z.number(), z.string().min(1)], { error: INDEX }),
  score,
  prompt_tokens: optionalCount,
  completion_tokens: optionalCount,
  cost: optionalCount,
});

/** One line of records.jsonl: a record, a problem, or nothing for a blank line. */
export function parseRecordLine(text: string, line: number): { record: InstanceRecord } | { problem: string } | undefined {
  if (!text.trim()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: `line ${line}: not valid JSON` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { problem: `line ${line}: expected a JSON object, got ${showValue(value)}` };
  }
  const plain = plainRecord(value as Record<string, unknown>);
  return plain ? { record: plain } : recordBySchema(value as Record<string, unknown>, line);
}

/** A parsed line judged by the schema alone: the reference plainRecord must agree with, and the one that explains a bad line. */
export function recordBySchema(value: Record<string, unknown>, line: number): { record: InstanceRecord } | { problem: string } {
  const parsed = recordSchema.safeParse(value);
  // The line's own field order is kept; values are the normalized ones (a boolean score becomes 1 or 0).
  if (parsed.success) return { record: { ...value, ...parsed.data } as InstanceRecord };
  const fields = new Map<string, string>();
  for (const issue of parsed.error.issues) {
    const field = fieldPath(issue.path);
    if (fields.has(field)) continue;
    const got = value[String(issue.path[0])];
    fields.set(field, `${field}: ${issue.message}, got ${showValue(got)}`);
  }
  return { problem: `line ${line}: ${[...fields.values()].join('; ')}` };
}

const isCount = (value: unknown) => value === undefined || value === null || (Number.isFinite(value) && (value as number) >= 0);

/**
 * The record a freshly parsed line that plainly fits the schema makes, as the schema would make it
 * (the object itself, normalized in place); undefined for anything else, which the schema then
 * judges and explains. A records.jsonl can hold millions of lines; zod and an object spread each
 * cost several times what JSON.parse does per line.
 */
function plainRecord(value: Record<string, unknown>): InstanceRecord | undefined {
  const { index, score } = value;
  if (!(Number.isFinite(index) || (typeof index === 'string' && index.length > 0))) return undefined;
  if (!(typeof score === 'boolean' || (Number.isFinite(score) && (score as number) >= 0 && (score as number) <= 1))) return undefined;
  if (!isCount(value.prompt_tokens) || !isCount(value.completion_tokens) || !isCount(value.cost)) return undefined;
  // Absent counts are added last, in the schema's order, as the schema's spread adds them.
  value.score = Number(score);
  value.prompt_tokens ??= null;
  value.completion_tokens ??= null;
  value.cost ??= null;
  return value as InstanceRecord;
}

/**
 * A records summary built one line at a time, keeping only counts, sums and the first few
 * problems: a records.jsonl of any size is summarized in constant memory.
 */
export class RecordsSummarizer {
  private count = 0;
  private scoreSum = 0;
  private scoreSquares = 0;
  private badLines = 0;
  private readonly examples: string[] = [];
  private readonly totals = { promptTokens: { total: 0, missing: 0 }, completionTokens: { total: 0, missing: 0 }, cost: { total: 0, missing: 0 } };

  addRecord(record: InstanceRecord): void {
    this.count += 1;
    this.scoreSum += record.score;
    this.scoreSquares += record.score * record.score;
    add(this.totals.promptTokens, record.prompt_tokens);
    add(this.totals.completionTokens, record.completion_tokens);
    add(this.totals.cost, record.cost);
  }

  addBadLine(problem: string): void {
    this.badLines += 1;
    if (this.examples.length < BAD_LINE_EXAMPLES) this.examples.push(problem);
  }

  result(): RecordsSummary {
    return {
      count: this.count,
      badLines: this.badLines,
      badLineExamples: [...this.examples],
      meanScore: this.count ? this.scoreSum / this.count : null,
      scoreSquares: this.scoreSquares,
      promptTokens: { ...this.totals.promptTokens },
      completionTokens: { ...this.totals.completionTokens },
      cost: { ...this.totals.cost },
    };
  }
}

function add(total: RecordsTotal, value: number | null): void {
  if (value === null) total.missing += 1;
  else total.total += value;
}

/**
 * What a benchmark author must hear when their records.jsonl had lines BenchRouter could not read: how
 * many of how many, and the first reason. Undefined when every line was read.
 */
export function rejectedRecordsNote(summary: RecordsSummary | undefined): string | undefined {
  if (!summary || summary.badLines === 0) return undefined;
  const lines = summary.count + summary.badLines;
  const first = summary.badLineExamples[0];
  return `records.jsonl: ${summary.badLines} of ${lines} line${lines === 1 ? '' : 's'} rejected${first ? `; first: ${first}` : ''}`;
}
