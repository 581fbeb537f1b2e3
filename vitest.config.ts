// Three projects, in this order: unit tests of pure modules (test/unit/, no server, seconds), replay of
// recorded workflow histories against the current bundle (test/replay/, no server), and integration
// tests against the real Temporal dev server and Docker engine (the rest of test/), two files at once.

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
          exclude: ['test/unit/**', 'test/replay/**'],
          globalSetup: ['test/support/global-setup.ts'],
          // Most of an integration test is waiting (for containers, images, timeouts): two files at once keep a
          // 2-core machine busy without starving either. Three were tried (2026-12-03): the integration project
          // took 996-1,128 s instead of about 1,240 s, the CPU 5-12% idle, but two of three full runs then had a
          // test miss a timing bound it meets with two. BENCHROUTER_TEST_WORKERS sets another count. Each file has
          // its own queues, host ids, homes and ports; the ones that kill servers or daemons use their own
          // (see test/support/).
          maxWorkers: Number(process.env.BENCHROUTER_TEST_WORKERS ?? 2),
          testTimeout: 120_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
