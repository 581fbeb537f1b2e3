// Three projects, in this order: unit tests of pure modules (test/unit/, no server, seconds), replay of
// recorded workflow histories against the current bundle (test/replay/, no server), and integration
// tests against the real Temporal dev server and Docker engine (the rest of test/), three files at once.

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
          // Much of an integration test is waiting (for containers, images, timeouts): with three files at once
          // the integration project took 996 s on a 2-core machine, its CPU 5% idle (/proc/stat), against about
          // 1,200 s with two (2026-12-03). Each file has
          // its own queues, host ids, homes and ports; the ones that kill servers or daemons use their own
          // (see test/support/). BENCHROUTER_TEST_WORKERS sets another count.
          maxWorkers: Number(process.env.BENCHROUTER_TEST_WORKERS ?? 3),
          testTimeout: 120_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
