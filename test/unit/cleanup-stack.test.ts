// A task attempt's cleanup stack (activities/cleanup-stack.ts): reverse order, each entry once, every
// failure collected, and keepable entries left unrun when the attempt steps aside.

import { describe, expect, it } from 'vitest';
import { CleanupStack } from '../../activities/cleanup-stack.js';

describe('CleanupStack', () => {
  it('releases the last acquired first, awaiting each before the next', async () => {
    const cleanup = new CleanupStack();
    const order: string[] = [];
    cleanup.defer('routes', () => order.push('routes'));
    cleanup.defer('slot', async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      order.push('slot');
    });
    cleanup.defer('container', () => order.push('container'));
    await cleanup.release();
    expect(order).toEqual(['container', 'slot', 'routes']);
  });

  it('runs each entry once however often it is released, and what was deferred since', async () => {
    const cleanup = new CleanupStack();
    const runs: string[] = [];
    cleanup.defer('first', () => runs.push('first'));
    await cleanup.release();
    cleanup.defer('second', () => runs.push('second'));
    await cleanup.release();
    await cleanup.release();
    expect(runs).toEqual(['first', 'second']);
  });

  it('runs every entry when some fail, then throws a lone failure as it is', async () => {
    const cleanup = new CleanupStack();
    const runs: string[] = [];
    const failure = new Error('daemon gone');
    cleanup.defer('routes', () => runs.push('routes'));
    cleanup.defer('container', () => Promise.reject(failure));
    cleanup.defer('log', () => runs.push('log'));
    await expect(cleanup.release()).rejects.toBe(failure);
    expect(runs).toEqual(['log', 'routes']);
  });

  it('throws every failure together, each named by what it released', async () => {
    const cleanup = new CleanupStack();
    const storage = new Error('EBUSY');
    const container = new Error('daemon gone');
    cleanup.defer('storage', () => {
      throw storage;
    });
    cleanup.defer('container', () => Promise.reject(container));
    const thrown = await cleanup.release().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(thrown).toBeInstanceOf(AggregateError);
    expect((thrown as AggregateError).errors).toEqual([container, storage]);
    expect((thrown as AggregateError).message).toBe('releasing 2 resources failed: container: daemon gone; storage: EBUSY');
  });

  it('leaves keepable entries unrun once kept, and releases the others', async () => {
    const cleanup = new CleanupStack();
    const runs: string[] = [];
    cleanup.defer('routes', () => runs.push('routes'), { keepable: true });
    cleanup.defer('slot', () => runs.push('slot'));
    cleanup.defer('container', () => runs.push('container'), { keepable: true });
    cleanup.defer('log', () => runs.push('log'));
    const kept = cleanup.keep();
    await cleanup.release();
    expect(runs).toEqual(['log', 'slot']);
    // What was kept, released after all by whoever holds it (a job that moved to another host), last first.
    await kept.release();
    expect(runs).toEqual(['log', 'slot', 'container', 'routes']);
  });

  it('releases keepable entries like any other when not kept', async () => {
    const cleanup = new CleanupStack();
    const runs: string[] = [];
    cleanup.defer('routes', () => runs.push('routes'), { keepable: true });
    cleanup.defer('slot', () => runs.push('slot'));
    await cleanup.release();
    expect(runs).toEqual(['slot', 'routes']);
  });
});
