// How `br artifacts`, `br logs` and `br records` reach the artifacts of jobs that ran on other hosts:
// Temporal says which host ran each job (client/job-hosts.ts), and that host's queue serves its
// files page by page (client/remote-artifacts.ts). Without a reachable Temporal they read this host only.

import { isReachable } from '../embedded/embedded-services.js';
import { jobHostsOf } from '../client/job-hosts.js';
import { listRemoteArtifacts, readRemoteArtifact, RemoteArtifactError } from '../client/remote-artifacts.js';
import { connectClient } from '../client/runs.js';
import type { CliDeps } from './cli-deps.js';
import type { RemoteArtifactAccess } from './run-artifacts.js';

export async function remoteArtifactAccess(deps: Pick<CliDeps, 'settings'>): Promise<RemoteArtifactAccess | undefined> {
  const settings = deps.settings();
  if (!(await isReachable(settings.temporalAddress))) return undefined;
  const client = await connectClient(settings);
  return {
    jobsOf: (runId) => jobHostsOf(client, runId),
    list: (job) => listRemoteArtifacts(client, settings, job),
    async read(job, file) {
      try {
        return await readRemoteArtifact(client, settings, job, file);
      } catch (error) {
        if (error instanceof RemoteArtifactError && error.type === 'ArtifactNotFound') return undefined;
        throw error;
      }
    },
  };
}
