// A run over time, from its finished jobs' timings and its transcripts' calls: jobs finished so far,
// and jobs, calls and tokens per minute, in buckets sized so a short run still shows a shape. Pure.

import { bucketSums, cumulative, type TimePanel } from '../charts/time-panels.js';
import type { JobResult } from './run-spec.js';

export interface TimedCall {
  /** When the call ended (the transcript's `at`). */
  at: string;
  tokens: number;
}

/** Ten-second buckets up to ten minutes, then minutes, then one bucket per 1/60 of the run. */
export function bucketMsFor(durationMs: number): number {
  if (durationMs <= 10 * 60_000) return 10_000;
  if (durationMs <= 60 * 60_000) return 60_000;
  return Math.ceil(durationMs / 60 / 60_000) * 60_000;
}

export function runTimeline(
  jobs: ReadonlyArray<Pick<JobResult, 'timings'>>,
  calls: readonly TimedCall[],
): { start: number; bucketMs: number; panels: TimePanel[] } {
  const finished = jobs.map((j) => Date.parse(j.timings.finishedAt)).filter(Number.isFinite);
  const started = jobs.map((j) => Date.parse(j.timings.startedAt ?? j.timings.queuedAt)).filter(Number.isFinite);
  const callTimes = calls.map((c) => ({ at: Date.parse(c.at), weight: c.tokens })).filter((c) => Number.isFinite(c.at));
  const start = Math.min(...started, ...finished, ...callTimes.map((c) => c.at));
  const end = Math.max(...finished, ...callTimes.map((c) => c.at));
  if (!Number.isFinite(start) || !Number.isFinite(end)) return { start: 0, bucketMs: 60_000, panels: [] };
  const bucketMs = bucketMsFor(end - start);
  const perMinute = (values: number[]) => values.map((v) => Number(((v * 60_000) / bucketMs).toPrecision(6)));
  const jobsPer = bucketSums(
    finished.map((at) => ({ at, weight: 1 })),
    start,
    end,
    bucketMs,
  );
  return {
    start,
    bucketMs,
    panels: [
      { name: 'jobs finished', values: cumulative(jobsPer), kind: 'line' },
      { name: 'jobs per minute', values: perMinute(jobsPer), kind: 'bars' },
      {
        name: 'calls per minute',
        values: perMinute(
          bucketSums(
            callTimes.map((c) => ({ at: c.at, weight: 1 })),
            start,
            end,
            bucketMs,
          ),
        ),
        kind: 'bars',
      },
      { name: 'tokens per minute', values: perMinute(bucketSums(callTimes, start, end, bucketMs)), kind: 'bars' },
    ],
  };
}
