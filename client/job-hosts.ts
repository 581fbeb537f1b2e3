// Where each job of a run ran, as Temporal knows it: the host named in its result. `br artifacts`,
// `br logs` and `br records` read a job's files on this machine when they are here, and through
// that host's queue (remote-artifacts.ts) when they are not.

import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { listedJobs, withJobs } from './run-jobs.js';
import { runHandle } from './runs.js';

export interface JobWhere {
  jobId: string;
  /** The host that ran it; absent for a job that never reached one. */
  host?: string;
  /** A job a retry carried over keeps its files under the run that produced them. */
  carriedFrom?: string;
}

/**
 * The run's jobs that have a result: every job of a completed run (from its result, carried ones
 * included), and the jobs finished so far of a run still going. Undefined for a run Temporal does
 * not know (never submitted, or past retention).
 */
export async function jobHostsOf(client: Client, runId: string): Promise<JobWhere[] | undefined> {
  const handle = runHandle(client, runId);
  let status: string;
  try {
    status = (await handle.describe()).status.name;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return undefined;
    throw error;
  }
  const jobs =
    status === 'COMPLETED' ? (await withJobs(client.workflow, await handle.result())).jobs : [...(await listedJobs(client.workflow, runId)).values()];
  return jobs.map((job) => ({ jobId: job.jobId, ...(job.host ? { host: job.host } : {}), ...(job.carriedFrom ? { carriedFrom: job.carriedFrom } : {}) }));
}
