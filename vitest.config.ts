// Four projects: unit tests of pure modules (test/unit/, no server, seconds), replay of recorded
// workflow histories against the current bundle (test/replay/, no server), then, side by side,
// integration tests against the real Temporal dev server and Docker engine (the rest of test/), and
// the chaos tests among them, one file at a time.

import { defineConfig } from 'vitest/config';

/**
 * Files that kill workers, servers or daemons on purpose, time failovers, or wedge a worker: they run
 * one at a time, beside the other integration files, so nothing of theirs is timed against a neighbour's
 * kill -9 or docker outage.
 */
const CHAOS_FILES = [
  'test/durability.test.ts',
  'test/docker-daemon-outage.test.ts',
  'test/cluster.test.ts',
  'test/operational-health.test.ts',
  'test/evalscope-resume.test.ts',
  'test/task-limits.test.ts',
  'test/hostile-output.test.ts',
];

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
          exclude: ['test/unit/**', 'test/replay/**', ...CHAOS_FILES],
          globalSetup: ['test/support/global-setup.ts'],
          // Most of an integration test is waiting (for containers, images, timeouts): two files at once
          // keep a 2-core machine busy without starving either.
          maxWorkers: 2,
          testTimeout: 120_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          name: 'chaos',
          include: CHAOS_FILES,
          globalSetup: ['test/support/global-setup.ts'],
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
