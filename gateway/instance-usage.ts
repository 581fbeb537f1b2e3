// Usage per benchmark instance. A harness may tag each model call with the instance it is for
// (`X-BenchRouter-Instance: <records.jsonl index>`); the gateway adds the call's tokens, cost and
// latency to that instance's figures and saves them with the job's usage, and readers of records.jsonl
// join them to the instance's record (activities/records-file.ts). Snake case, as records are.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { JOB_FILES } from '../runs/job-artifacts.js';
import type { UsageSample } from '../runs/usage.js';

export const INSTANCE_HEADER = 'x-benchrouter-instance';
/** A longer tag is cut: instance ids are short, and the figures are kept per tag in memory. */
const MAX_INSTANCE_LENGTH = 256;

export interface InstanceUsage {
  calls: number;
  /** Calls that failed (after the gateway's retries). */
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Present when the upstream said how many completion tokens were spent thinking. */
  reasoning_tokens?: number;
  /** Answers max_tokens cut off inside their thinking; present when any was. */
  ended_in_thinking?: number;
  cost: number;
  /** Sum over the calls, from the gateway's receipt to the answer's end. */
  latency_ms: number;
}

/** The instance a request is tagged with, or undefined when it is not. */
export function instanceOf(header: string | string[] | undefined): string | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  return value ? value.slice(0, MAX_INSTANCE_LENGTH) : undefined;
}

/** An empty table of instances: no prototype, so a tag such as `__proto__` is an instance like any other. */
export function instanceTable(from: Record<string, InstanceUsage> = {}): Record<string, InstanceUsage> {
  return Object.assign(Object.create(null) as Record<string, InstanceUsage>, from);
}

/** Adds one call, as the gateway metered it, to its instance's figures (`instances` made by instanceTable). */
export function addToInstance(instances: Record<string, InstanceUsage>, instance: string, sample: UsageSample): void {
  const usage = (instances[instance] ??= { calls: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0, cost: 0, latency_ms: 0 });
  usage.calls += 1;
  if (sample.status < 200 || sample.status >= 300) usage.errors += 1;
  usage.prompt_tokens += sample.promptTokens;
  usage.completion_tokens += sample.completionTokens;
  if (sample.reasoningTokens !== undefined) usage.reasoning_tokens = (usage.reasoning_tokens ?? 0) + sample.reasoningTokens;
  if (sample.endedInThinking) usage.ended_in_thinking = (usage.ended_in_thinking ?? 0) + sample.endedInThinking;
  usage.cost += sample.cost;
  usage.latency_ms += sample.latencyMs;
}

/**
 * The model's usage per instance that the gateway saved for the job whose directory this is; empty when
 * no call was tagged (or the job made none). A file that cannot be read says so on stderr and counts as
 * empty: per-instance figures are a view of the job, never a reason to lose its records.
 */
export function savedInstanceUsage(jobDir: string): Map<string, InstanceUsage> {
  const file = path.join(jobDir, JOB_FILES.modelUsage);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return new Map();
  }
  try {
    const saved = JSON.parse(text) as { instances?: Record<string, InstanceUsage> } | null;
    return new Map(Object.entries(saved?.instances ?? {}));
  } catch (error) {
    console.error(`${file}: not the JSON usage snapshot the gateway writes (${(error as Error).message}); records are read without per-instance usage`);
    return new Map();
  }
}
