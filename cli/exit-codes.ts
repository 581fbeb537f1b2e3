// The exit codes of `br`: scripts can tell a run's outcomes and the kinds of error apart.

import type { RunStatus } from '../runs/run-spec.js';

export const EXIT_CODES = { COMPLETED: 0, ERROR: 1, BAD_INPUT: 2, PARTIAL: 3, FAILED: 4, CANCELLED: 5 } as const;

/** Exit code of `br run`/`br status` for a run status. */
export function exitCodeOf(status: RunStatus): number {
  return EXIT_CODES[status];
}
