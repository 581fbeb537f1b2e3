// Where a job's artifacts live, the one place that spells it: `<artifacts root>/<run>/<job>/`, with
// what the task wrote under `results/`. Workers write there, readers (harvest, pass@k, `br records`,
// `br logs`, artifacts read through Temporal) find it here.

import path from 'node:path';

export const JOB_FILES = {
  /** The task's own output directory, mounted at /app/results. */
  results: 'results',
  result: 'result.json',
  records: 'records.jsonl',
  normalized: 'normalized.json',
  containerLog: 'container.log',
  /** The log's last lines, secrets redacted: what `br logs` shows. */
  containerTail: 'container-tail.log',
  /** What the finished container did, saved before it is harvested: a retried job harvests it instead of starting it again. */
  containerOutcome: 'container-outcome.json',
} as const;

export interface JobRef {
  runId: string;
  jobId: string;
  /** Set for a job a retry carried over: its files stay under the run that produced them. */
  carriedFrom?: string;
}

export function jobArtifactsDir(artifactsRoot: string, job: JobRef): string {
  return path.join(artifactsRoot, job.carriedFrom ?? job.runId, job.jobId);
}

export function jobResultsDir(artifactsRoot: string, job: JobRef): string {
  return path.join(jobArtifactsDir(artifactsRoot, job), JOB_FILES.results);
}
