// One attempt of a job's container at a time per host process, and the watch over a container an attempt
// left: removed only once the server says its job is elsewhere or finished, never while it may come back.

import { describe, expect, it } from 'vitest';
import { JobAttempts, unattendedVerdict, type JobWhereabouts } from '../../activities/job-attempts.js';

const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i += 1) {
    if (check()) return;
    await tick();
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('unattendedVerdict', () => {
  it('removes a left container only when its job is gone from this host', () => {
    expect(unattendedVerdict({ kind: 'gone', why: 'job j moved to host-b' })).toBe('remove');
    expect(unattendedVerdict({ kind: 'here' })).toBe('keep');
    // The server did not answer: a live job must never lose its container to a transient error.
    expect(unattendedVerdict({ kind: 'unknown', why: 'deadline exceeded' })).toBe('keep');
  });
});

describe('JobAttempts.serially', () => {
  it("starts a job's next attempt only once the earlier one in this process has ended, heartbeating while it waits", async () => {
    const attempts = new JobAttempts();
    const order: string[] = [];
    let endFirst!: () => void;
    const first = attempts.serially('c-j1', async () => {
      order.push('first starts');
      await new Promise<void>((r) => (endFirst = r));
      order.push('first steps aside');
      throw new Error('attempt aborted');
    });
    let beats = 0;
    const second = attempts.serially(
      'c-j1',
      async () => {
        order.push('second starts');
        return 'reattached';
      },
      () => (beats += 1),
    );
    await tick(50);
    expect(order).toEqual(['first starts']);
    endFirst();
    await expect(first).rejects.toThrow('attempt aborted');
    await expect(second).resolves.toBe('reattached');
    expect(order).toEqual(['first starts', 'first steps aside', 'second starts']);
    expect(beats).toBe(0); // the wait was shorter than a heartbeat's interval
  });

  it('lets attempts of different jobs run at once', async () => {
    const attempts = new JobAttempts();
    let running = 0;
    let most = 0;
    const job = () =>
      attempts.serially(`c-${Math.random()}`, async () => {
        running += 1;
        most = Math.max(most, running);
        await tick(20);
        running -= 1;
      });
    await Promise.all([job(), job(), job()]);
    expect(most).toBe(3);
  });
});

describe('JobAttempts: a container left by an attempt', () => {
  function watched(answers: JobWhereabouts[]) {
    const asked: string[] = [];
    const said: string[] = [];
    const attempts = new JobAttempts({
      checkEveryMs: 10,
      whereIs: async (jobId) => {
        asked.push(jobId);
        return answers.length > 1 ? answers.shift()! : answers[0]!;
      },
      say: (line) => said.push(line),
    });
    return { attempts, asked, said };
  }

  it('is kept while its job may come back here (here, or the server unreachable), and removed once the job moved on', async () => {
    const { attempts, asked, said } = watched([{ kind: 'here' }, { kind: 'unknown', why: 'unavailable' }, { kind: 'gone', why: 'job j1 moved to host-b' }]);
    let released = 0;
    attempts.leave('c-j1', 'j1', async () => {
      released += 1;
    });
    expect(attempts.unattended()).toEqual(['c-j1']);
    await until(() => released === 1, 'the release');
    expect(asked).toEqual(['j1', 'j1', 'j1']);
    expect(attempts.unattended()).toEqual([]);
    expect(said).toEqual(['removed container c-j1, left by an attempt of job j1 (job j1 moved to host-b; not on this host any more)']);
    await tick(50);
    expect(released).toBe(1);
  });

  it('is never removed once the next attempt of its job has taken it over', async () => {
    const { attempts, asked } = watched([{ kind: 'here' }, { kind: 'gone', why: 'job j1 is COMPLETED' }]);
    let released = 0;
    attempts.leave('c-j1', 'j1', async () => {
      released += 1;
    });
    await until(() => asked.length >= 1, 'the first look-up');
    attempts.adopt('c-j1');
    await tick(100);
    expect(released).toBe(0);
    expect(attempts.unattended()).toEqual([]);
    expect(asked.length).toBeLessThanOrEqual(2);
  });

  it('is removed before a later attempt of its job looks for it, never under it', async () => {
    let endRemoval!: () => void;
    const { attempts } = watched([{ kind: 'gone', why: 'job j1 moved to host-b' }]);
    const order: string[] = [];
    attempts.leave('c-j1', 'j1', async () => {
      order.push('removal starts');
      await new Promise<void>((r) => (endRemoval = r));
      order.push('removal ends');
    });
    await until(() => order.length === 1, 'the removal');
    const later = attempts.serially('c-j1', async () => order.push('attempt looks'));
    await tick(30);
    endRemoval();
    await later;
    expect(order).toEqual(['removal starts', 'removal ends', 'attempt looks']);
  });

  it('is only watched, never removed, without a server to ask', async () => {
    const attempts = new JobAttempts({ checkEveryMs: 5 });
    let released = 0;
    attempts.leave('c-j1', 'j1', async () => {
      released += 1;
    });
    await tick(50);
    expect(released).toBe(0);
    expect(attempts.unattended()).toEqual(['c-j1']);
  });
});
