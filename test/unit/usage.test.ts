// Model usage figures (runs/usage.ts): what one job's gateway meters per request, how jobs' counters
// merge into a run's without losing anything, and the summary people read.

import { describe, expect, it } from 'vitest';
import {
  emptyCounters,
  emptyHistogram,
  mergeCounters,
  observe,
  quantile,
  record,
  summarizeUsage,
  type UsageCounters,
  type UsageSample,
} from '../../runs/usage.js';

const sample = (fields: Partial<UsageSample>): UsageSample => ({
  status: 200,
  latencyMs: 100,
  promptTokens: 0,
  completionTokens: 0,
  cost: 0,
  retries: 0,
  throttled: 0,
  queued: false,
  ...fields,
});

function countersOf(samples: UsageSample[]): UsageCounters {
  const counters = emptyCounters();
  for (const s of samples) record(counters, s);
  return counters;
}

describe('record and summarizeUsage', () => {
  it('add up requests, tokens, cost, retries, queueing and cache use', () => {
    const summary = summarizeUsage(
      countersOf([
        sample({ latencyMs: 1500, ttftMs: 500, promptTokens: 10, completionTokens: 100, cost: 0.25, retries: 1, throttled: 1, queued: true, cache: 'miss' }),
        sample({ latencyMs: 2000, promptTokens: 20, completionTokens: 50, cost: 0.5, cache: 'hit' }),
        sample({ status: 429, latencyMs: 30, retries: 5, throttled: 6 }),
        sample({ status: 0, latencyMs: 6 }),
      ]),
    );
    expect(summary).toMatchObject({
      requests: 4,
      errors: { '429': 1, network: 1 },
      retries: 6,
      throttled: 7,
      queued: 1,
      promptTokens: 30,
      completionTokens: 150,
      totalTokens: 180,
      cost: 0.75,
      cacheHits: 1,
      cacheMisses: 1,
    });
    expect(summary.latencyMs?.mean).toBe((1500 + 2000 + 30 + 6) / 4);
    expect(summary.ttftMs?.mean).toBe(500);
  });

  it('rate output tokens per second from the first token when streamed, over the whole call otherwise', () => {
    // 100 tokens in the 1 s after the first token; 50 tokens in a 2 s call: the mean of 100 and 25.
    const summary = summarizeUsage(
      countersOf([sample({ latencyMs: 1500, ttftMs: 500, completionTokens: 100 }), sample({ latencyMs: 2000, completionTokens: 50 })]),
    );
    expect(summary.outputTokensPerSecond).toBe(62.5);
  });

  it('leave requests that produced no tokens, or no time to produce them in, out of the token rate', () => {
    const summary = summarizeUsage(
      countersOf([
        sample({ latencyMs: 1000, completionTokens: 20 }),
        sample({ latencyMs: 800, completionTokens: 0 }),
        sample({ latencyMs: 300, ttftMs: 300, completionTokens: 5 }),
      ]),
    );
    expect(summary.outputTokensPerSecond).toBe(20);
  });

  it('count a non-2xx answer as an error by status, and a 2xx as none', () => {
    const summary = summarizeUsage(countersOf([sample({ status: 201 }), sample({ status: 199 }), sample({ status: 500 }), sample({ status: 500 })]));
    expect(summary.errors).toEqual({ '199': 1, '500': 2 });
  });

  it('summarize no requests as zeros and absent distributions, not NaN', () => {
    expect(summarizeUsage(emptyCounters())).toEqual({
      requests: 0,
      errors: {},
      retries: 0,
      throttled: 0,
      queued: 0,
      promptTokens: 0,
      completionTokens: 0,
      totalTokens: 0,
      cost: 0,
      cacheHits: 0,
      cacheMisses: 0,
      latencyMs: null,
      ttftMs: null,
      outputTokensPerSecond: null,
    });
  });
});

describe('latency histograms', () => {
  it('place p50 and p95 within 1% of the exact quantiles', () => {
    const histogram = emptyHistogram();
    for (let ms = 1; ms <= 1000; ms++) observe(histogram, ms);
    expect(Math.abs(quantile(histogram, 0.5) / 500 - 1)).toBeLessThan(0.01);
    expect(Math.abs(quantile(histogram, 0.95) / 950 - 1)).toBeLessThan(0.01);
    expect(Math.abs(quantile(histogram, 1) / 1000 - 1)).toBeLessThan(0.01);
    expect(histogram.count).toBe(1000);
    expect(histogram.sum).toBe(500_500);
  });

  it('take a 0 ms sample into the lowest bucket, not an infinite one', () => {
    const histogram = emptyHistogram();
    observe(histogram, 0);
    expect(Object.keys(histogram.buckets).every((k) => Number.isFinite(Number(k)))).toBe(true);
    expect(quantile(histogram, 0.5)).toBeGreaterThan(0.0009);
    expect(quantile(histogram, 0.5)).toBeLessThan(0.0011);
  });

  it('have no quantile when empty', () => {
    expect(quantile(emptyHistogram(), 0.5)).toBeNaN();
  });
});

describe('mergeCounters', () => {
  const samples = Array.from({ length: 40 }, (_, i) =>
    sample({
      status: i % 7 === 0 ? 503 : 200,
      latencyMs: 10 + i * 37,
      ttftMs: i % 2 ? 5 + i : undefined,
      promptTokens: i,
      completionTokens: 2 * i,
      cost: i,
      retries: i % 3,
      throttled: i % 5 === 0 ? 1 : 0,
      queued: i % 4 === 0,
      cache: i % 3 === 0 ? 'hit' : 'miss',
    }),
  );

  it("merges two jobs' counters into exactly what one meter of all their requests would hold", () => {
    const { outputTpsSum: mergedTps, ...merged } = mergeCounters(countersOf(samples.slice(0, 13)), countersOf(samples.slice(13)));
    const { outputTpsSum: wholeTps, ...whole } = countersOf(samples);
    // Counts and histogram buckets merge exactly; a float sum only up to the order of its additions.
    expect(merged).toEqual(whole);
    expect(mergedTps).toBeCloseTo(wholeTps, 9);
    expect(merged.latencyMs.count).toBe(40);
  });

  it('leaves both inputs as they were', () => {
    const a = countersOf(samples.slice(0, 5));
    const b = countersOf(samples.slice(5, 9));
    const before = JSON.stringify([a, b]);
    mergeCounters(a, b);
    expect(JSON.stringify([a, b])).toBe(before);
  });
});
