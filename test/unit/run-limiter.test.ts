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

describe('RunLimiter adaptive concurrency (AIMD)', () => {
  it('halves the limit on a throttled call, down to 1, and holds new calls until running ones fit under it', async () => {
    const limiter = new RunLimiter(8);
    const slots = await Promise.all(Array.from({ length: 8 }, () => limiter.acquire()));
    slots[0]!.throttled();
    expect(limiter.currentLimit).toBe(4);
    // Calls that started before that decrease were caught by the same congestion: no further halving.
    slots[1]!.throttled();
    slots[2]!.throttled();
    expect(limiter.currentLimit).toBe(4);
    // The first call's retry is throttled again: a new event, halved again; and again, to the floor of 1.
    slots[0]!.throttled();
    expect(limiter.currentLimit).toBe(2);
    slots[0]!.throttled();
    slots[0]!.throttled();
    slots[0]!.throttled();
    expect(limiter.currentLimit).toBe(1);

    let waiter: { limit: number } | undefined;
    void limiter.acquire().then((slot) => (waiter = slot));
    // 8 running, limit 1: the waiter gets in only once the last of the 8 is released.
    for (const slot of slots.slice(0, 7)) slot.release();
    await settle();
    expect(waiter).toBeUndefined();
    slots[7]!.release();
    await settle();
    expect(waiter?.limit).toBe(1);
  });

  it('adds 1 to the limit after `limit` successful calls, up to the configured concurrency, letting waiters in', async () => {
    const limiter = new RunLimiter(4);
    const first = await limiter.acquire();
    first.throttled();
    first.throttled();
    expect(limiter.currentLimit).toBe(1);
    // first holds the one slot; a second call waits.
    let second: { limit: number; succeeded: () => void; release: () => void } | undefined;
    void limiter.acquire().then((slot) => (second = slot));
    await settle();
    expect(second).toBeUndefined();
    // One success at limit 1 raises it to 2: the waiter gets in beside the first.
    first.succeeded();
    await settle();
    expect(limiter.currentLimit).toBe(2);
    expect(second?.limit).toBe(2);
    // Two more successes at limit 2 raise it to 3, three more to 4, and no further.
    second!.succeeded();
    expect(limiter.currentLimit).toBe(2);
    first.succeeded();
    expect(limiter.currentLimit).toBe(3);
    for (let i = 0; i < 3; i++) first.succeeded();
    expect(limiter.currentLimit).toBe(4);
    for (let i = 0; i < 10; i++) first.succeeded();
    expect(limiter.currentLimit).toBe(4);
  });

  it('backs off and recovers with the rate limit on, under fake time: a throttle during spaced starts', async () => {
    vi.useFakeTimers({ now: 0 });
    const limiter = new RunLimiter(2, 10);
    const a = await limiter.acquire();
    const started: number[] = [];
    void limiter.acquire().then((slot) => {
      started.push(Date.now());
      slot.release();
    });
    await vi.advanceTimersByTimeAsync(100);
    expect(started).toEqual([100]);
    a.throttled();
    expect(limiter.currentLimit).toBe(1);
    a.succeeded();
    expect(limiter.currentLimit).toBe(2);
    a.release();
  });
});
