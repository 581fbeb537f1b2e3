// The per-run limits toward the model (gateway/run-limiter.ts): at most N upstream requests at once,
// at most R started per second, waiters served in arrival order.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunLimiter } from '../../gateway/run-limiter.js';

afterEach(() => {
  vi.useRealTimers();
});

/** Lets every settled promise run its callbacks. */
const settle = () => new Promise((r) => setImmediate(r));

describe('RunLimiter concurrency', () => {
  it('lets N requests in at once without queueing them, and holds the next until one is released', async () => {
    const limiter = new RunLimiter(2);
    const first = await limiter.acquire();
    const second = await limiter.acquire();
    expect([first.queued, second.queued]).toEqual([false, false]);

    let third: { queued: boolean } | undefined;
    void limiter.acquire().then((slot) => (third = slot));
    await settle();
    expect(third).toBeUndefined();

    first.release();
    await settle();
    expect(third?.queued).toBe(true);
  });

  it('serves waiters in the order they arrived', async () => {
    const limiter = new RunLimiter(1);
    const holder = await limiter.acquire();
    const order: string[] = [];
    const waiters = ['a', 'b', 'c'].map((name) => limiter.acquire().then((slot) => (order.push(name), slot)));
    await settle();
    expect(order).toEqual([]);
    holder.release();
    (await waiters[0]!).release();
    (await waiters[1]!).release();
    await waiters[2];
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('frees one slot per request however often its release is called', async () => {
    const limiter = new RunLimiter(1);
    const holder = await limiter.acquire();
    holder.release();
    holder.release();
    const next = await limiter.acquire();
    expect(next.queued).toBe(false);
    let after: { queued: boolean } | undefined;
    void limiter.acquire().then((slot) => (after = slot));
    await settle();
    // A second release of the old slot must not let a second request in beside `next`.
    expect(after).toBeUndefined();
    next.release();
    await settle();
    expect(after?.queued).toBe(true);
  });
});

describe('RunLimiter rate', () => {
  it('spaces request starts 1/R seconds apart and marks the delayed ones queued', async () => {
    vi.useFakeTimers({ now: 0 });
    const limiter = new RunLimiter(10, 4);
    const started: Array<{ at: number; queued: boolean }> = [];
    for (let i = 0; i < 3; i++) void limiter.acquire().then((slot) => started.push({ at: Date.now(), queued: slot.queued }));
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual([{ at: 0, queued: false }]);
    await vi.advanceTimersByTimeAsync(250);
    expect(started).toEqual([
      { at: 0, queued: false },
      { at: 250, queued: true },
    ]);
    await vi.advanceTimersByTimeAsync(250);
    expect(started.map((s) => s.at)).toEqual([0, 250, 500]);
  });

  it('does not delay a request that comes after the spacing has passed', async () => {
    vi.useFakeTimers({ now: 0 });
    const limiter = new RunLimiter(10, 4);
    await limiter.acquire();
    vi.setSystemTime(1000);
    const later = await limiter.acquire();
    expect(later.queued).toBe(false);
  });
});
