// Four projects, in this order: unit tests of pure modules (test/unit/, no server, seconds) beside the job
// workflow's policies on Temporal's time-skipping test server with a fake engine (test/policy/, seconds),
// replay of recorded workflow histories against the current bundle (test/replay/, no server), and
// integration tests against the real Temporal dev server and Docker engine (the rest of test/), three files
// at once.

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    reporters: ['default'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 20_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'policy',
          include: ['test/policy/**/*.test.ts'],
          // The test server (a JVM) starts and the workflows bundle in a few seconds per file on a busy 2-core machine.
          testTimeout: 30_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'replay',
          include: ['test/replay/**/*.test.ts'],
          // Bundling the workflows takes a few seconds on a busy 2-core machine.
          testTimeout: 120_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: ['test/unit/**', 'test/replay/**', 'test/policy/**'],
          globalSetup: ['test/support/global-setup.ts'],
          // Most of an integration test is waiting (for containers, images, timeouts): three files at once keep a
          // 2-core machine busy. With two, a warm run took about 1,240-1,345 s, over CI's 20 minutes; with three
          // (a fresh clone, Docker's caches warm, 2026-12-03) 969 s, the CPU still 22% idle, every test passing.
          // The timing bounds that three files at once once broke (a 30 s visibility wait, a 90 s restart bound,
          // a kill that could take a dying container for its successor) were widened or made exact first.
          // BENCHROUTER_TEST_WORKERS sets another count. Each file has its own queues, host ids, homes and
          // ports; the ones that kill servers or daemons use their own (see test/support/).
          maxWorkers: Number(process.env.BENCHROUTER_TEST_WORKERS ?? 3),
          testTimeout: 120_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
