// pass@k of a repeated run, from its jobs' records.jsonl. Records stay on the host that ran each
// job, so each host counts what it holds (repeatCountsByTask, on that host's queue) and the run
// workflow adds the counts up.

import { jobResultsDir } from '../runs/job-artifacts.js';
import type { RepeatCounts } from '../runs/run-outcome.js';
import { readRecordsFile } from './records-file.js';

export interface PassAtKInput {
  runId: string;
  jobs: Array<{ jobId: string; task: string; repeat: number; carriedFrom?: string }>;
}

async function scoresOf(artifactsRoot: string, runId: string, job: PassAtKInput['jobs'][number]): Promise<Map<string, number> | undefined> {
  const scores = new Map<string, number>();
  const read = await readRecordsFile(jobResultsDir(artifactsRoot, { runId, ...job }), (outcome) => {
    if ('record' in outcome) scores.set(String(outcome.record.index), outcome.record.score);
  });
  // A repeat whose records.jsonl is missing or refused (a FIFO, a link) cannot count.
  return read.kind === 'read' ? scores : undefined;
}

/** Per task, what this host's copies of the given jobs say; the workflow merges hosts' answers. */
export async function repeatCountsByTask(artifactsRoot: string, { runId, jobs }: PassAtKInput): Promise<Record<string, RepeatCounts>> {
  const out: Record<string, RepeatCounts> = {};
  for (const job of jobs) {
    const counts = (out[job.task] ??= { jobsRead: 0, jobsUnread: 0, instances: {} });
    const scores = await scoresOf(artifactsRoot, runId, job);
    if (!scores) {
      counts.jobsUnread += 1;
      continue;
    }
    counts.jobsRead += 1;
    for (const [index, score] of scores) {
      const into = (counts.instances[index] ??= [0, 0]);
      into[0] += 1;
      if (score >= 1) into[1] += 1;
    }
  }
  return out;
}
