// Custom search attributes every run carries, so `br list` and the Temporal Web UI can filter runs
// by model, benchmark and status. A cluster must register them once (README, "Production").

import { defineSearchAttributeKey } from '@temporalio/common';

export const SEARCH_ATTRIBUTES = {
  model: defineSearchAttributeKey('BenchRouterModel', 'KEYWORD'),
  benchmark: defineSearchAttributeKey('BenchRouterBenchmark', 'KEYWORD'),
  status: defineSearchAttributeKey('BenchRouterStatus', 'KEYWORD'),
  /** The run's overall score, set when it ends: the leaderboard reads visibility alone. */
  score: defineSearchAttributeKey('BenchRouterScore', 'DOUBLE'),
} as const;

/** `--search-attribute NAME=Type` flags for `temporal server start-dev`. */
export const DEV_SERVER_SEARCH_ATTRIBUTE_ARGS = Object.values(SEARCH_ATTRIBUTES).flatMap((key) => [
  '--search-attribute',
  `${key.name}=${key.type === 'DOUBLE' ? 'Double' : 'Keyword'}`,
]);
