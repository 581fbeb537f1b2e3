// A running run's live figures: the time left, estimated from its finished jobs' durations, and the
// model calls and tokens per second over the last half minute. Pure; the event stream feeds it.

import type { TimedCall } from './run-timeline.js';

export interface LiveFigures {
  /** null until a job has finished: there is no duration to go by. */
  secondsLeft: number | null;
  callsPerSecond: number;
  tokensPerSecond: number;
  /** Jobs whose durations the estimate went by. */
  finishedJobs: number;
}

export const RATE_WINDOW_MS = 30_000;

/**
 * Each running job takes the finished jobs' mean duration in all (what it has run counts), each pending
 * job the whole mean; that work is shared by as many jobs as now run at once (at least one).
 */
export function estimateSecondsLeft(input: { finishedMs: readonly number[]; runningElapsedMs: readonly number[]; pending: number }): number | null {
  const { finishedMs, runningElapsedMs, pending } = input;
  if (!finishedMs.length) return null;
  const mean = finishedMs.reduce((a, b) => a + b, 0) / finishedMs.length;
  const work = pending * mean + runningElapsedMs.reduce((sum, elapsed) => sum + Math.max(0, mean - elapsed), 0);
  return Math.round(work / Math.max(1, runningElapsedMs.length) / 1000);
}

/** Calls and tokens per second over the window that ends now. */
export function recentRates(calls: readonly TimedCall[], now: number, windowMs = RATE_WINDOW_MS): { callsPerSecond: number; tokensPerSecond: number } {
  let count = 0;
  let tokens = 0;
  for (const call of calls) {
    const at = Date.parse(call.at);
    if (!(at > now - windowMs && at <= now)) continue;
    count += 1;
    tokens += call.tokens;
  }
  const seconds = windowMs / 1000;
  return { callsPerSecond: Number((count / seconds).toFixed(2)), tokensPerSecond: Number((tokens / seconds).toFixed(1)) };
}
