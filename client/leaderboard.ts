// Reading many runs back for cross-model views: visibility alone for the leaderboard (status and
// score are search attributes), full results for a comparison of chosen runs.

import type { Client } from '@temporalio/client';
import pMap from 'p-map';
import type { RunEntry } from '../runs/leaderboard.js';
import type { RunResult } from '../runs/run-spec.js';
import { withJobs } from './run-jobs.js';
import { listRuns, runHandle } from './runs.js';

export async function finishedRuns(client: Client, filter: { benchmark?: string; model?: string } = {}): Promise<RunEntry[]> {
  return listRuns(client, 100_000, { ...filter, statuses: ['COMPLETED', 'PARTIAL'] });
}

/**
 * Results of the given runs, fetched a few at a time. `withJobList` false leaves a big run's `jobs` empty
 * (a comparison reads per-task scores only, and a 10,000-job run's jobs take a listing to read).
 */
export async function runResults(client: Client, runIds: string[], concurrency = 16, withJobList = true): Promise<RunResult[]> {
  return pMap(
    runIds,
    async (runId) => {
      const result = await runHandle(client, runId).result();
      return withJobList ? withJobs(client.workflow, result) : result;
    },
    { concurrency },
  );
}
