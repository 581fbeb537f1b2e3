// Where a job's artifacts live, the one place that spells it: `<artifacts root>/<run>/<job>/`, with
// what the task wrote under `results/`, and the run-level `gateway-cache/` beside the jobs. Workers
// write there, readers (harvest, pass@k, `br records`, `br logs`, the API, artifacts read through
// Temporal) find it here.

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
  /** The gateway's usage of the model route, per instance too (usageFileName('model')). */
  modelUsage: 'usage-model.json',
  /** Every model call of the job, as the gateway saw it (gateway/transcript.ts). */
  transcript: 'transcript.jsonl',
  /** A resumed shard's instances its container was started without (activities/carried-instances.ts). */
  carriedOver: 'carried-instances.json',
} as const;

/** Directories of a run that are not jobs: the gateway's answer cache. */
export const RUN_DIRS = {
  gatewayCache: 'gateway-cache',
} as const;

/** A job file (not the results directory itself). */
export type JobFile = Exclude<keyof typeof JOB_FILES, 'results'>;

/** The files the task writes itself, inside `results/`; the others the worker writes beside it. */
const TASK_WRITTEN: ReadonlySet<JobFile> = new Set(['result', 'records']);

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

/** A job file relative to the job's directory, `/`-separated, as listings and remote reads name it: `results/records.jsonl`. */
export function jobFilePath(file: JobFile): string {
  return TASK_WRITTEN.has(file) ? `${JOB_FILES.results}/${JOB_FILES[file]}` : JOB_FILES[file];
}

/** A job file's path on this host. */
export function jobFile(artifactsRoot: string, job: JobRef, file: JobFile): string {
  return path.join(jobArtifactsDir(artifactsRoot, job), ...jobFilePath(file).split('/'));
}

/** The gateway's usage counters of one route (`model`, `judge`), kept beside the job's log. */
export function usageFileName(role: string): string {
  return `usage-${role}.json`;
}

/** A run's gateway answer cache on this host. */
export function gatewayCacheDir(artifactsRoot: string, runId: string): string {
  return path.join(artifactsRoot, runId, RUN_DIRS.gatewayCache);
}
