// When the gateway calls the upstream again after a 429 or 5xx: the upstream's Retry-After when it
// sends one (gateway/model-gateway.ts retryAfterMs), else exponential backoff with jitter (backoffMs).

import { afterEach, describe, expect, it, vi } from 'vitest';
import { backoffMs, retryAfterMs } from '../../gateway/model-gateway.js';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('retryAfterMs', () => {
  it('is undefined without a Retry-After header, so the gateway backs off on its own', () => {
    expect(retryAfterMs(undefined)).toBeUndefined();
  });

  it('reads delay-seconds, fractions included', () => {
    expect(retryAfterMs('0')).toBe(0);
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs('1.5')).toBe(1500);
  });

  it('caps a long wait at a minute and a negative one at zero', () => {
    expect(retryAfterMs('120')).toBe(60_000);
    expect(retryAfterMs('60')).toBe(60_000);
    expect(retryAfterMs('-5')).toBe(0);
  });

  it('reads an HTTP date as the time left until then', () => {
    vi.useFakeTimers({ now: new Date('2026-11-30T12:00:00.000Z') });
    expect(retryAfterMs('Mon, 30 Nov 2026 12:00:07 GMT')).toBe(7000);
    expect(retryAfterMs('Mon, 30 Nov 2026 11:59:00 GMT')).toBe(0);
    expect(retryAfterMs('Mon, 30 Nov 2026 13:00:00 GMT')).toBe(60_000);
  });

  it('is undefined for a value that is neither seconds nor a date', () => {
    expect(retryAfterMs('soon')).toBeUndefined();
  });
});

describe('backoffMs', () => {
  it('doubles from 0.5 s per attempt, between half and all of that base', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    expect([1, 2, 3, 4, 5, 6].map(backoffMs)).toEqual([250, 500, 1000, 2000, 4000, 8000]);
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    expect([1, 2, 3].map(backoffMs)).toEqual([375, 750, 1500]);
  });

  it('never waits longer than 20 s, however many attempts', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.999999);
    for (const attempt of [7, 8, 20, 100]) expect(backoffMs(attempt), `attempt ${attempt}`).toBeLessThan(20_000);
    expect(backoffMs(7)).toBeGreaterThan(19_999);
    vi.spyOn(Math, 'random').mockReturnValue(0);
    expect(backoffMs(100)).toBe(10_000);
  });

  it('spreads retries of one attempt over its whole window (jitter), not one instant', () => {
    vi.restoreAllMocks();
    const waits = Array.from({ length: 200 }, () => backoffMs(3));
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(1000);
    expect(Math.max(...waits)).toBeLessThanOrEqual(2000);
    expect(new Set(waits).size).toBeGreaterThan(100);
  });
});
