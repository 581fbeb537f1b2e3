// fetchArtifactWorkflow: one bounded look at a job's artifacts on the host that ran it, a listing or
// one page of one file. The client starts one per page (client/remote-artifacts.ts), so no
// history grows with the size of a file.

import { proxyActivities } from '@temporalio/workflow';
import type { HostActivities } from '../activities/index.js';
import type { ArtifactFile, ArtifactPage, ArtifactPageRequest, JobArtifactRef } from '../activities/read-job-artifact.js';

export type ArtifactFetch = { hostQueue: string } & ({ kind: 'list'; ref: JobArtifactRef } | { kind: 'page'; request: ArtifactPageRequest });

export async function fetchArtifactWorkflow(input: ArtifactFetch): Promise<ArtifactFile[] | ArtifactPage> {
  const { listJobArtifacts, readJobArtifact } = proxyActivities<HostActivities>({
    taskQueue: input.hostQueue,
    // A host that is down does not answer: say so within seconds rather than wait for it.
    scheduleToStartTimeout: '20s',
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['ArtifactNotFound', 'BadArtifactRequest'] },
  });
  return input.kind === 'list' ? listJobArtifacts(input.ref) : readJobArtifact(input.request);
}
