// A run's figures for people: the time left from finished jobs' durations, calls and tokens per second,
// the run over time, and two runs' agreement instance by instance.

import { describe, expect, it } from 'vitest';
import { instanceAgreement } from '../../analysis/instance-agreement.js';
import { estimateSecondsLeft, recentRates } from '../../runs/live-figures.js';
import { bucketMsFor, runTimeline } from '../../runs/run-timeline.js';

describe('time left', () => {
  it('has no estimate before a job finished', () => {
    expect(estimateSecondsLeft({ finishedMs: [], runningElapsedMs: [5_000], pending: 3 })).toBeNull();
  });

  it('gives each pending job the mean duration and each running one what it has left, shared by the jobs running at once', () => {
    // Mean 10 s; two running at 4 s and 12 s (6 s and 0 s left); 3 pending (30 s): 36 s of work over 2 slots.
    expect(estimateSecondsLeft({ finishedMs: [8_000, 12_000], runningElapsedMs: [4_000, 12_000], pending: 3 })).toBe(18);
    expect(estimateSecondsLeft({ finishedMs: [10_000], runningElapsedMs: [], pending: 2 })).toBe(20);
  });
});

describe('calls and tokens per second', () => {
  it('counts the calls that ended in the last half minute', () => {
    const now = Date.parse('2026-12-02T07:00:30Z');
    const calls = [
      { at: '2026-12-02T07:00:00Z', tokens: 100 }, // the window's start: out
      { at: '2026-12-02T07:00:01Z', tokens: 30 },
      { at: '2026-12-02T07:00:30Z', tokens: 30 },
      { at: '2026-12-02T07:00:31Z', tokens: 1000 }, // after now: out
      { at: 'not a time', tokens: 5 },
    ];
    expect(recentRates(calls, now)).toEqual({ callsPerSecond: 0.07, tokensPerSecond: 2 });
  });
});

describe('a run over time', () => {
  it('takes ten-second buckets for a short run, minutes for an hour, and a sixtieth of a longer one', () => {
    expect([bucketMsFor(30_000), bucketMsFor(30 * 60_000), bucketMsFor(5 * 3600_000)]).toEqual([10_000, 60_000, 5 * 60_000]);
  });

  it('counts jobs finished so far and the rates per minute', () => {
    const job = (startedAt: string, finishedAt: string) => ({ timings: { queuedAt: startedAt, startedAt, finishedAt, containerSeconds: 1 } });
    const timeline = runTimeline(
      [job('2026-12-02T07:00:00Z', '2026-12-02T07:00:05Z'), job('2026-12-02T07:00:00Z', '2026-12-02T07:00:25Z')],
      [
        { at: '2026-12-02T07:00:02Z', tokens: 10 },
        { at: '2026-12-02T07:00:03Z', tokens: 20 },
        { at: '2026-12-02T07:00:21Z', tokens: 5 },
      ],
    );
    expect(timeline.bucketMs).toBe(10_000);
    expect(timeline.panels.map((p) => [p.name, p.values])).toEqual([
      ['jobs finished', [1, 1, 2]],
      ['jobs per minute', [6, 0, 6]],
      ['calls per minute', [12, 0, 6]],
      ['tokens per minute', [180, 0, 30]],
    ]);
    expect(runTimeline([], []).panels).toEqual([]);
  });
});

describe('agreement of two runs', () => {
  it('counts shared instances by who got them right (mean score at least ½), and those only one run has', () => {
    const scores = (entries: Array<[string, number[]]>) => new Map(entries.map(([id, values]) => [`add/${id}`, values]));
    const a = scores([
      ['1', [1]],
      ['2', [1]],
      ['3', [0]],
      ['4', [0]],
      ['5', [1, 0]],
      ['6', [1]],
    ]);
    const b = scores([
      ['1', [1]],
      ['2', [0]],
      ['3', [1]],
      ['4', [0.2]],
      ['5', [0.5]],
      ['7', [1]],
    ]);
    expect(instanceAgreement(a, b)).toEqual({ bothRight: 2, onlyA: 1, onlyB: 1, neither: 1, shared: 5, onlyInA: 1, onlyInB: 1 });
  });
});
