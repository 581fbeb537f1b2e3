// A job's artifacts read from the submitting machine, wherever the job ran: each listing or page is
// a short fetchArtifactWorkflow whose activity runs on the job's host queue. Workers on separate
// machines share no disk, and Temporal is the one service every machine already reaches (over mTLS).

import type { Client } from '@temporalio/client';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { ArtifactFile, ArtifactPage, JobArtifactRef } from '../activities/read-job-artifact.js';
import { hostQueueName } from '../runs/host-queues.js';
import type { Settings } from '../config/settings.js';
import type { ArtifactFetch, fetchArtifactWorkflow } from '../workflows/fetch-artifact-workflow.js';
import { newWorkflowId } from './runs.js';

/** Larger files are refused: `br` holds a read in memory, and bulk export is not this path's job. */
export const REMOTE_ARTIFACT_MAX_BYTES = 64 * 1024 * 1024;

export interface RemoteJob extends JobArtifactRef {
  /** The host that ran the job (JobResult.host). */
  host: string;
}

/** A remote read that failed; `type` is the host activity's failure type (`ArtifactNotFound`, `BadArtifactRequest`) when it said one. */
export class RemoteArtifactError extends Error {
  constructor(
    message: string,
    readonly type: string | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'RemoteArtifactError';
  }
}

async function fetchOnHost(client: Client, settings: Settings, job: RemoteJob, fetch: ArtifactFetch): Promise<ArtifactFile[] | ArtifactPage> {
  try {
    return await client.workflow.execute<typeof fetchArtifactWorkflow>('fetchArtifactWorkflow', {
      workflowId: newWorkflowId(`artifact-${job.jobId}`),
      taskQueue: settings.sharedQueue,
      args: [fetch],
      workflowExecutionTimeout: '5 minutes',
    });
  } catch (error) {
    // The activity's own message (not found, bad path, host timed out) is the useful part.
    const failure = error instanceof WorkflowFailedError ? (error.cause?.cause ?? error.cause) : undefined;
    const cause = failure instanceof Error ? failure : undefined;
    throw new RemoteArtifactError(
      `artifacts of job ${job.jobId} (run ${job.runId}) on host ${job.host}: ${cause?.message ?? (error as Error).message}`,
      cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined,
      { cause: error },
    );
  }
}

export async function listRemoteArtifacts(client: Client, settings: Settings, job: RemoteJob): Promise<ArtifactFile[]> {
  const ref = { runId: job.runId, jobId: job.jobId };
  return (await fetchOnHost(client, settings, job, { kind: 'list', hostQueue: hostQueueName(settings.sharedQueue, job.host), ref })) as ArtifactFile[];
}

/** One artifact file, page by page; fails rather than return a file that changed size meanwhile. */
export async function readRemoteArtifact(
  client: Client,
  settings: Settings,
  job: RemoteJob,
  file: string,
  maxBytes = REMOTE_ARTIFACT_MAX_BYTES,
): Promise<Buffer> {
  const pages: Buffer[] = [];
  let offset = 0;
  let total: number | undefined;
  do {
    const request = { runId: job.runId, jobId: job.jobId, file, offset };
    const page = (await fetchOnHost(client, settings, job, {
      kind: 'page',
      hostQueue: hostQueueName(settings.sharedQueue, job.host),
      request,
    })) as ArtifactPage;
    if (total === undefined) {
      total = page.totalBytes;
      if (total > maxBytes) throw new Error(`${file} of job ${job.jobId}: ${total} bytes exceeds the ${maxBytes}-byte limit for reading through Temporal`);
    } else if (page.totalBytes !== total)
      throw new Error(`${file} of job ${job.jobId}: changed size while being read (${total} then ${page.totalBytes} bytes)`);
    const bytes = Buffer.from(page.base64, 'base64');
    if (bytes.length === 0 && offset < total) throw new Error(`${file} of job ${job.jobId}: read no bytes at offset ${offset} of ${total}`);
    pages.push(bytes);
    offset += bytes.length;
  } while (offset < total);
  return Buffer.concat(pages);
}
