// One file a run's job wrote, whole, wherever the job ran: from this host's artifact root when the job's
// directory is here, else from the host that ran it, through Temporal (remote-artifacts.ts). The API's
// reads and `br analyze`'s router jobs go through it.

import type { Client } from '@temporalio/client';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Settings } from '../config/settings.js';
import { jobArtifactsDir } from '../runs/job-artifacts.js';
import type { JobResult } from '../runs/run-spec.js';
import { RemoteArtifactError, readRemoteArtifact } from './remote-artifacts.js';

/**
 * The file at `relative` (`/`-separated, under the job's directory: `results/records.jsonl`); undefined when
 * neither this host nor the job's host has it. A host that cannot be read is an error, not a missing file.
 */
export async function readJobFileBytes(
  reader: { client: Client; settings: Settings },
  runId: string,
  job: JobResult,
  relative: string,
): Promise<Buffer | undefined> {
  const dir = jobArtifactsDir(reader.settings.artifactsRoot, { runId, jobId: job.jobId, ...(job.carriedFrom ? { carriedFrom: job.carriedFrom } : {}) });
  const local = path.join(dir, ...relative.split('/'));
  if (existsSync(local)) return readFileSync(local);
  if (!job.host || existsSync(dir)) return undefined;
  try {
    return await readRemoteArtifact(reader.client, reader.settings, { runId: job.carriedFrom ?? runId, jobId: job.jobId, host: job.host }, relative);
  } catch (error) {
    if (error instanceof RemoteArtifactError && error.type === 'ArtifactNotFound') return undefined;
    throw error;
  }
}
