// pass@k of a repeated run, from its jobs' records.jsonl: the run's last step, on any host. Records
// live with each job's artifacts; a task counts only when every repeat's records can be read here
// (on one machine, or with BENCHROUTER_ARTIFACTS on a shared mount).

import path from 'node:path';
import { passAtKOfRepeats } from '../runs/run-outcome.js';
import { readRecordsFile } from './records-file.js';

export interface PassAtKInput {
  runId: string;
  jobs: Array<{ jobId: string; task: string; repeat: number; carriedFrom?: string }>;
}

export async function passAtKByTask(artifactsRoot: string, { runId, jobs }: PassAtKInput): Promise<Record<string, Record<string, number>>> {
  const out: Record<string, Record<string, number>> = {};
  for (const task of new Set(jobs.map((j) => j.task))) {
    const repeats: Array<Map<string, number>> = [];
    for (const job of jobs.filter((j) => j.task === task).sort((a, b) => a.repeat - b.repeat)) {
      const scores = new Map<string, number>();
      const read = await readRecordsFile(path.join(artifactsRoot, job.carriedFrom ?? runId, job.jobId, 'results'), (outcome) => {
        if ('record' in outcome) scores.set(String(outcome.record.index), outcome.record.score);
      });
      // A repeat whose records.jsonl is missing or refused (a FIFO, a link) cannot count.
      if (read.kind !== 'read') break;
      repeats.push(scores);
    }
    const estimate = repeats.length === jobs.filter((j) => j.task === task).length ? passAtKOfRepeats(repeats) : undefined;
    if (estimate) out[task] = estimate;
  }
  return out;
}
