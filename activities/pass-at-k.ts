// pass@k of a repeated run, from its jobs' records.jsonl: the run's last step, on any host. Records
// live with each job's artifacts; a task counts only when every repeat's records can be read here
// (on one machine, or with BENCHROUTER_ARTIFACTS on a shared mount).

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseRecords } from '../contract/records.js';
import { passAtKOfRepeats } from '../runs/run-outcome.js';

export interface PassAtKInput {
  runId: string;
  jobs: Array<{ jobId: string; task: string; repeat: number; carriedFrom?: string }>;
}

export function passAtKByTask(artifactsRoot: string, { runId, jobs }: PassAtKInput): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const task of new Set(jobs.map((j) => j.task))) {
    const repeats: Array<Map<string, number>> = [];
    for (const job of jobs.filter((j) => j.task === task).sort((a, b) => a.repeat - b.repeat)) {
      const file = path.join(artifactsRoot, job.carriedFrom ?? runId, job.jobId, 'results', 'records.jsonl');
      if (!existsSync(file)) break;
      repeats.push(new Map(parseRecords(readFileSync(file, 'utf8')).records.map((r) => [String(r.index), r.score])));
    }
    const estimate = repeats.length === jobs.filter((j) => j.task === task).length ? passAtKOfRepeats(repeats) : undefined;
    if (estimate) out[task] = estimate;
  }
  return out;
}
