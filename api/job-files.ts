// A finished job's files as the API reads them: from this host's artifact root when they are here,
// else from the host that ran the job, through Temporal (client/remote-artifacts.ts), as `br` does.

import { existsSync } from 'node:fs';
import { readRecordsFile, withGatewayUsage, type RecordLineOutcome } from '../activities/records-file.js';
import { readJobFileBytes } from '../client/job-file-bytes.js';
import { parseRecordLine } from '../contract/records.js';
import type { InstanceUsage } from '../gateway/instance-usage.js';
import { jobArtifactsDir, jobFilePath, jobResultsDir, type JobFile } from '../runs/job-artifacts.js';
import type { JobResult } from '../runs/run-spec.js';
import type { ApiContext } from './api-context.js';

const refOf = (runId: string, job: JobResult) => ({ runId, jobId: job.jobId, ...(job.carriedFrom ? { carriedFrom: job.carriedFrom } : {}) });

/** Whether the job's files are read from this host's disk (its directory is here, or it never ran on a host). */
export function jobFilesHere(context: ApiContext, runId: string, job: JobResult): boolean {
  return !job.host || existsSync(jobArtifactsDir(context.settings.artifactsRoot, refOf(runId, job)));
}

/** One file of a run's job, whole; undefined when neither this host nor the job's host has it. */
export async function jobFileBytes(context: ApiContext, runId: string, job: JobResult, file: JobFile): Promise<Buffer | undefined> {
  return readJobFileBytes(context, runId, job, jobFilePath(file));
}

/** Each line of the job's records.jsonl, in order, joined to the gateway's figures for its instance, wherever the job ran. */
export async function visitJobRecords(context: ApiContext, runId: string, job: JobResult, visit: (outcome: RecordLineOutcome) => void): Promise<void> {
  const ref = refOf(runId, job);
  if (jobFilesHere(context, runId, job)) {
    await readRecordsFile(jobResultsDir(context.settings.artifactsRoot, ref), visit);
    return;
  }
  const bytes = await jobFileBytes(context, runId, job, 'records');
  if (!bytes) return;
  const usage = await jobFileBytes(context, runId, job, 'modelUsage');
  let instances = new Map<string, InstanceUsage>();
  try {
    instances = new Map(Object.entries((JSON.parse(usage?.toString('utf8') ?? '{}') as { instances?: Record<string, InstanceUsage> }).instances ?? {}));
  } catch {
    // per-instance usage is a view of the job, never a reason to lose its records
  }
  bytes
    .toString('utf8')
    .split('\n')
    .forEach((text, i) => {
      const outcome = parseRecordLine(text, i + 1);
      if (outcome) visit('record' in outcome && instances.size ? { record: withGatewayUsage(outcome.record, instances) } : outcome);
    });
}
