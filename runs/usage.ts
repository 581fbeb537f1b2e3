// Model usage figures, as the gateway meters them per job and the run adds them up: counts, tokens,
// cost, and latency/TTFT distributions. Distributions are log-bucketed histograms (2% wide) so that
// jobs' figures merge exactly into a run's without keeping every sample. Pure.

export interface Histogram {
  /** Bucket index → count; bucket i holds values in [BASE^i, BASE^(i+1)) milliseconds. */
  buckets: Record<string, number>;
  count: number;
  sum: number;
}

export interface UsageCounters {
  requests: number;
  /** Failed answers by HTTP status ("429", "500", ...), after retries; "network" for no answer. */
  errors: Record<string, number>;
  /** Upstream calls repeated after a 429 or 5xx. */
  retries: number;
  /** Upstream answers that were 429. */
  throttled: number;
  /** Requests that waited for the run's concurrency or rate limit. */
  queued: number;
  promptTokens: number;
  completionTokens: number;
  cost: number;
  cacheHits: number;
  cacheMisses: number;
  latencyMs: Histogram;
  ttftMs: Histogram;
  /** Sum and count of per-request output tokens per second (requests that produced tokens). */
  outputTpsSum: number;
  outputTpsCount: number;
  /** Requests whose prompt the gateway middle-truncated (--truncation-tokens); absent when none. */
  truncated?: number;
  /** Of completionTokens, those the upstream says were spent thinking; absent when it never said. */
  reasoningTokens?: number;
  /** Answers max_tokens cut off inside their thinking; absent when none. */
  endedInThinking?: number;
  /** Prompt and completion tokens of answers replayed from the cache (counted above too, but not spent upstream); absent when none. */
  cachedTokens?: number;
  /** Calls the gateway refused because a budget was spent (answered 429 `budget_exhausted`, not sent upstream); absent when none. */
  budgetRefused?: number;
  /** The lowest per-host concurrency limit the run's calls met after upstream 429s lowered it (adaptive); absent when never lowered. */
  concurrencyMin?: number;
}

export interface UsageSample {
  status: number;
  latencyMs: number;
  ttftMs?: number;
  promptTokens: number;
  completionTokens: number;
  cost: number;
  retries: number;
  throttled: number;
  queued: boolean;
  cache?: 'hit' | 'miss';
  reasoningTokens?: number;
  endedInThinking?: number;
  /** The gateway refused the call: a budget was spent (docs/gateway.md#budgets). */
  budgetRefused?: true;
}

export interface UsageSummary {
  requests: number;
  errors: Record<string, number>;
  retries: number;
  throttled: number;
  queued: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cost: number;
  cacheHits: number;
  cacheMisses: number;
  latencyMs: { mean: number; p50: number; p95: number } | null;
  ttftMs: { mean: number; p50: number; p95: number } | null;
  outputTokensPerSecond: number | null;
  /** Requests whose prompt the gateway middle-truncated (--truncation-tokens); absent when none. */
  truncated?: number;
  reasoningTokens?: number;
  endedInThinking?: number;
  /** Calls refused because a budget was spent; absent when none. */
  budgetRefused?: number;
  /** The lowest concurrency limit adaptive backoff lowered the run's limiter to; absent when never lowered. */
  concurrencyMin?: number;
}

const BASE = 1.02;
const MIN_MS = 0.001;

export function emptyHistogram(): Histogram {
  return { buckets: {}, count: 0, sum: 0 };
}

export function emptyCounters(): UsageCounters {
  return {
    requests: 0,
    errors: {},
    retries: 0,
    throttled: 0,
    queued: 0,
    promptTokens: 0,
    completionTokens: 0,
    cost: 0,
    cacheHits: 0,
    cacheMisses: 0,
    latencyMs: emptyHistogram(),
    ttftMs: emptyHistogram(),
    outputTpsSum: 0,
    outputTpsCount: 0,
  };
}

export function observe(histogram: Histogram, ms: number): void {
  const index = Math.floor(Math.log(Math.max(ms, MIN_MS)) / Math.log(BASE));
  histogram.buckets[index] = (histogram.buckets[index] ?? 0) + 1;
  histogram.count += 1;
  histogram.sum += ms;
}

/** The q-quantile (0..1), as the geometric middle of the bucket it falls in: within 1% of the truth. */
export function quantile(histogram: Histogram, q: number): number {
  if (histogram.count === 0) return NaN;
  const rank = Math.max(1, Math.ceil(q * histogram.count));
  let seen = 0;
  for (const index of Object.keys(histogram.buckets)
    .map(Number)
    .sort((a, b) => a - b)) {
    seen += histogram.buckets[index]!;
    if (seen >= rank) return BASE ** (index + 0.5);
  }
  return NaN;
}

/** A call that was answered without tokens (refused, or no upstream answer): everything but these fields zero. */
export function unansweredSample(status: number, latencyMs: number, extra: Partial<UsageSample> = {}): UsageSample {
  return { status, latencyMs, promptTokens: 0, completionTokens: 0, cost: 0, retries: 0, throttled: 0, queued: false, ...extra };
}

export function record(counters: UsageCounters, sample: UsageSample): void {
  counters.requests += 1;
  if (sample.status < 200 || sample.status >= 300) {
    const key = sample.status === 0 ? 'network' : String(sample.status);
    counters.errors[key] = (counters.errors[key] ?? 0) + 1;
  }
  counters.retries += sample.retries;
  counters.throttled += sample.throttled;
  if (sample.queued) counters.queued += 1;
  counters.promptTokens += sample.promptTokens;
  counters.completionTokens += sample.completionTokens;
  counters.cost += sample.cost;
  if (sample.reasoningTokens !== undefined) counters.reasoningTokens = (counters.reasoningTokens ?? 0) + sample.reasoningTokens;
  if (sample.budgetRefused) counters.budgetRefused = (counters.budgetRefused ?? 0) + 1;
  if (sample.endedInThinking) counters.endedInThinking = (counters.endedInThinking ?? 0) + sample.endedInThinking;
  if (sample.cache === 'hit') {
    counters.cacheHits += 1;
    if (sample.promptTokens + sample.completionTokens > 0) counters.cachedTokens = (counters.cachedTokens ?? 0) + sample.promptTokens + sample.completionTokens;
  }
  if (sample.cache === 'miss') counters.cacheMisses += 1;
  observe(counters.latencyMs, sample.latencyMs);
  if (sample.ttftMs !== undefined) observe(counters.ttftMs, sample.ttftMs);
  if (sample.completionTokens > 0) {
    // Generation time: after the first token when streamed, the whole call otherwise.
    const generatingMs = sample.ttftMs !== undefined ? sample.latencyMs - sample.ttftMs : sample.latencyMs;
    if (generatingMs > 0) {
      counters.outputTpsSum += sample.completionTokens / (generatingMs / 1000);
      counters.outputTpsCount += 1;
    }
  }
}

function mergeHistograms(a: Histogram, b: Histogram): Histogram {
  const buckets = { ...a.buckets };
  for (const [k, v] of Object.entries(b.buckets)) buckets[k] = (buckets[k] ?? 0) + v;
  return { buckets, count: a.count + b.count, sum: a.sum + b.sum };
}

export function mergeCounters(a: UsageCounters, b: UsageCounters): UsageCounters {
  const errors = { ...a.errors };
  for (const [k, v] of Object.entries(b.errors)) errors[k] = (errors[k] ?? 0) + v;
  return {
    requests: a.requests + b.requests,
    errors,
    retries: a.retries + b.retries,
    throttled: a.throttled + b.throttled,
    queued: a.queued + b.queued,
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    cost: a.cost + b.cost,
    cacheHits: a.cacheHits + b.cacheHits,
    cacheMisses: a.cacheMisses + b.cacheMisses,
    latencyMs: mergeHistograms(a.latencyMs, b.latencyMs),
    ttftMs: mergeHistograms(a.ttftMs, b.ttftMs),
    outputTpsSum: a.outputTpsSum + b.outputTpsSum,
    outputTpsCount: a.outputTpsCount + b.outputTpsCount,
    ...(a.truncated || b.truncated ? { truncated: (a.truncated ?? 0) + (b.truncated ?? 0) } : {}),
    ...(a.reasoningTokens !== undefined || b.reasoningTokens !== undefined ? { reasoningTokens: (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0) } : {}),
    ...(a.endedInThinking || b.endedInThinking ? { endedInThinking: (a.endedInThinking ?? 0) + (b.endedInThinking ?? 0) } : {}),
    ...(a.cachedTokens || b.cachedTokens ? { cachedTokens: (a.cachedTokens ?? 0) + (b.cachedTokens ?? 0) } : {}),
    ...(a.budgetRefused || b.budgetRefused ? { budgetRefused: (a.budgetRefused ?? 0) + (b.budgetRefused ?? 0) } : {}),
    ...lowestConcurrency(a.concurrencyMin, b.concurrencyMin),
  };
}

/** The lower of two `concurrencyMin`s (absent means never lowered), as a field to spread. */
function lowestConcurrency(a: number | undefined, b: number | undefined): { concurrencyMin?: number } {
  if (a === undefined && b === undefined) return {};
  return { concurrencyMin: Math.min(a ?? Infinity, b ?? Infinity) };
}

/** Notes that the run's limiter stood at `limit`, below its configured `max`, when this route's call went through it. */
export function noteConcurrency(counters: UsageCounters, limit: number, max: number): void {
  if (limit < max) counters.concurrencyMin = Math.min(counters.concurrencyMin ?? Infinity, limit);
}

function distribution(histogram: Histogram): UsageSummary['latencyMs'] {
  if (histogram.count === 0) return null;
  return { mean: histogram.sum / histogram.count, p50: quantile(histogram, 0.5), p95: quantile(histogram, 0.95) };
}

export function summarizeUsage(counters: UsageCounters): UsageSummary {
  return {
    requests: counters.requests,
    errors: counters.errors,
    retries: counters.retries,
    throttled: counters.throttled,
    queued: counters.queued,
    promptTokens: counters.promptTokens,
    completionTokens: counters.completionTokens,
    totalTokens: counters.promptTokens + counters.completionTokens,
    cost: counters.cost,
    cacheHits: counters.cacheHits,
    cacheMisses: counters.cacheMisses,
    latencyMs: distribution(counters.latencyMs),
    ttftMs: distribution(counters.ttftMs),
    outputTokensPerSecond: counters.outputTpsCount ? counters.outputTpsSum / counters.outputTpsCount : null,
    ...(counters.truncated ? { truncated: counters.truncated } : {}),
    ...(counters.reasoningTokens !== undefined ? { reasoningTokens: counters.reasoningTokens } : {}),
    ...(counters.endedInThinking ? { endedInThinking: counters.endedInThinking } : {}),
    ...(counters.budgetRefused ? { budgetRefused: counters.budgetRefused } : {}),
    ...(counters.concurrencyMin !== undefined ? { concurrencyMin: counters.concurrencyMin } : {}),
  };
}
