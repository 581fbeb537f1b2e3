// Per-instance records of finished runs, read back from their artifacts for the routing analysis:
// each job's records.jsonl becomes that run's model's outcomes on `<benchmark>/<task>`.

import type { Client } from '@temporalio/client';
import { jobResultsDir } from '../runs/job-artifacts.js';
import { readRecordsFile } from '../activities/records-file.js';
import type { ModelOutcome } from '../analysis/model-outcome.js';
import { buildLeaderboard } from '../runs/leaderboard.js';
import { finishedRuns, runResults } from './leaderboard.js';

export async function recordsOfRuns(client: Client, artifactsRoot: string, runs: string[] | 'latest'): Promise<{ records: ModelOutcome[]; notes: string[] }> {
  let runIds: string[];
  if (runs === 'latest') {
    const board = buildLeaderboard(await finishedRuns(client), 'latest');
    runIds = Object.values(board.cells).flatMap((byBenchmark) => Object.values(byBenchmark).map((cell) => cell.runId));
  } else runIds = runs;
  const records: ModelOutcome[] = [];
  const notes: string[] = [];
  for (const run of await runResults(client, runIds)) {
    let count = 0;
    let bad = 0;
    // With repeats, the first repeat stands for the model: routing compares models, not seeds.
    for (const job of run.jobs.filter((j) => (j.repeat ?? 0) === 0)) {
      const read = await readRecordsFile(
        jobResultsDir(artifactsRoot, { runId: run.runId, jobId: job.jobId, ...(job.carriedFrom ? { carriedFrom: job.carriedFrom } : {}) }),
        (outcome) => {
          if ('problem' in outcome) {
            bad += 1;
            return;
          }
          const r = outcome.record;
          records.push({
            benchmark: `${run.benchmark}/${job.task}`,
            model: run.model,
            index: r.index,
            origin_query: typeof r.origin_query === 'string' ? r.origin_query : r.origin_query === undefined ? undefined : JSON.stringify(r.origin_query),
            prompt: typeof r.prompt === 'string' ? r.prompt : r.prompt === undefined ? undefined : JSON.stringify(r.prompt),
            score: r.score,
            ...(r.prompt_tokens !== null ? { prompt_tokens: r.prompt_tokens } : {}),
            ...(r.completion_tokens !== null ? { completion_tokens: r.completion_tokens } : {}),
            cost: r.cost,
          });
          count += 1;
        },
      );
      if (read.kind === 'refused') notes.push(`run ${run.runId}, job ${job.jobId}: ${read.problem}; not read`);
    }
    notes.push(`run ${run.runId} (${run.model} on ${run.benchmark}): ${count} records${bad ? `, ${bad} bad lines skipped` : ''}`);
  }
  return { records, notes };
}

/**
 * One finished run's per-instance scores by task, every repeat's score of an instance kept (the paired
 * comparison averages them): read from this machine's artifacts, as the routing analysis reads them.
 */
export async function instanceScoresByTask(client: Client, artifactsRoot: string, runId: string): Promise<Map<string, Map<string, number[]>>> {
  const [run] = await runResults(client, [runId]);
  const byTask = new Map<string, Map<string, number[]>>();
  for (const job of run?.jobs ?? []) {
    const scores = byTask.get(job.task) ?? new Map<string, number[]>();
    byTask.set(job.task, scores);
    await readRecordsFile(
      jobResultsDir(artifactsRoot, { runId, jobId: job.jobId, ...(job.carriedFrom ? { carriedFrom: job.carriedFrom } : {}) }),
      (outcome) => {
        if (!('record' in outcome)) return;
        const id = String(outcome.record.index);
        scores.set(id, [...(scores.get(id) ?? []), outcome.record.score]);
      },
    );
  }
  return byTask;
}
