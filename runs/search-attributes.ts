// Custom search attributes every run carries, so `br list` and the Temporal Web UI can filter runs
// by model, benchmark and status. A cluster must register them once (README, "Production").

import { defineSearchAttributeKey } from '@temporalio/common';

export const SEARCH_ATTRIBUTES = {
  model: defineSearchAttributeKey('BenchRouterModel', 'KEYWORD'),
  benchmark: defineSearchAttributeKey('BenchRouterBenchmark', 'KEYWORD'),
  status: defineSearchAttributeKey('BenchRouterStatus', 'KEYWORD'),
  /** The run's overall score, set when it ends: the leaderboard reads visibility alone. */
  score: defineSearchAttributeKey('BenchRouterScore', 'DOUBLE'),
  /** A hash of what the score was measured with (runs/provenance.ts provenanceHash): the leaderboard marks cells that differ. */
  provenance: defineSearchAttributeKey('BenchRouterProvenance', 'KEYWORD'),
  /** The score's n and 95% interval as text (runs/score-interval.ts formatScoreStats), for the leaderboard. */
  scoreStats: defineSearchAttributeKey('BenchRouterScoreStats', 'KEYWORD'),
} as const;

/**
 * The attributes runs are filtered by (`br list`, the leaderboard's query, the Web UI): their visibility
 * indexes are kept (embedded/dev-server-store.ts). The others are only read back, never searched on.
 */
export const FILTERED_SEARCH_ATTRIBUTES: ReadonlyArray<keyof typeof SEARCH_ATTRIBUTES> = ['model', 'benchmark', 'status', 'score'];

/** `--search-attribute NAME=Type` flags for `temporal server start-dev`. */
export const DEV_SERVER_SEARCH_ATTRIBUTE_ARGS = Object.values(SEARCH_ATTRIBUTES).flatMap((key) => [
  '--search-attribute',
  `${key.name}=${key.type === 'DOUBLE' ? 'Double' : 'Keyword'}`,
]);
