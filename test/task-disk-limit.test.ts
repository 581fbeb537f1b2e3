// A task that fills its disk (under /app/results or in its own filesystem) is killed by the disk
// watchdog and fails with DISK_LIMIT, naming its limit; a neighbour within its limit is unaffected.

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturesDir, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('disk-limit');
});
afterAll(async () => {
  await h?.close();
});

describe('a task over its resources.disk', () => {
  it('is killed within seconds and fails with DISK_LIMIT, while a task within its limit succeeds', async () => {
    const started = Date.now();
    const run = await h.run(path.join(fixturesDir, 'benchmarks', 'disk-fillers'));
    const seconds = (Date.now() - started) / 1000;
    const job = (task: string) => run.jobs.find((j) => j.task === task)!;

    expect(job('stays-small')).toMatchObject({ status: 'SUCCEEDED', result: { overall: 0.75 } });
    for (const task of ['fills-results', 'fills-filesystem']) {
      expect(job(task)).toMatchObject({ status: 'FAILED', reason: 'DISK_LIMIT' });
      expect(job(task).message).toMatch(
        /^wrote more than its disk limit of 16m \(\d+\.\d MiB measured across \/app\/results and its own filesystem\); container killed; last log line: wrote 48 MiB to/,
      );
    }
    // Each filler sleeps 120 s after writing: the watchdog, not the task, ended it.
    expect(seconds).toBeLessThan(100);
    expect(run.status).toBe('PARTIAL');
  });
});
