// How a waiting command polls progress (client/runs.ts whilePolling): every interval until the result is
// in, and not a moment longer: a pause still pending after the result kept `br run` alive for up to half a
// second after it had printed the run's table.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { whilePolling } from '../../client/runs.js';

/** A result still to come: whilePolling of it with `poll` every 500 ms, the progress it handed over, and `finish`. */
function watch(poll: () => Promise<number>) {
  let finish!: (value: string) => void;
  const result = new Promise<string>((resolve) => (finish = resolve));
  const seen: number[] = [];
  const waiting = whilePolling(result, poll, (p) => seen.push(p), 500);
  return { waiting, seen, finish };
}

describe('whilePolling', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('polls every interval while waiting, and leaves no timer pending once the result is in', async () => {
    let polls = 0;
    const { waiting, seen, finish } = watch(async () => ++polls);
    await vi.advanceTimersByTimeAsync(1200); // polls at 0, 500 and 1000 ms
    expect(seen).toEqual([1, 2, 3]);
    expect(vi.getTimerCount()).toBe(1); // the pause before the poll at 1500 ms
    finish('done');
    await expect(waiting).resolves.toBe('done');
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(2000);
    expect(polls).toBe(3);
  });

  it('does not hand over progress read after the result', async () => {
    let answer!: (value: number) => void;
    const { waiting, seen, finish } = watch(() => new Promise<number>((resolve) => (answer = resolve)));
    finish('done'); // while the first poll is still out
    await expect(waiting).resolves.toBe('done');
    answer(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(seen).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps polling after a failed poll', async () => {
    let polls = 0;
    const { waiting, seen, finish } = watch(async () => {
      polls += 1;
      if (polls === 1) throw new Error('the workflow has not run its first task yet');
      return polls;
    });
    await vi.advanceTimersByTimeAsync(600);
    finish('done');
    await expect(waiting).resolves.toBe('done');
    expect(seen).toEqual([2]);
  });
});
