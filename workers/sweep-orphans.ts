// When a worker starts, it removes what earlier lives of this host left behind: BenchRouter
// containers whose job is no longer running here (the job ended, or moved to another host), and
// DinD storage directories that no container uses any more.

import type { Client } from '@temporalio/client';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { LABELS } from '../activities/container-spec.js';
import type { DockerEngine } from '../activities/docker-engine.js';

export interface SweepInput {
  docker: DockerEngine;
  client: Client;
  hostId: string;
  dindStorageRoot: string;
  say: (line: string) => void;
}

/** True when the job still runs and its current host is this one: its container will be reattached. */
async function jobStillHere(client: Client, jobId: string, hostId: string): Promise<boolean> {
  try {
    const { status, memo } = await client.workflow.getHandle(jobId).describe();
    return status.name === 'RUNNING' && memo?.host === hostId;
  } catch {
    return false; // not found: the workflow's history is gone, so is any use for the container
  }
}

export async function sweepOrphans({ docker, client, hostId, dindStorageRoot, say }: SweepInput): Promise<string[]> {
  const removed: string[] = [];
  const containers = await docker.listContainers([`${LABELS.managed}=true`, `${LABELS.host}=${hostId}`]);
  const kept = new Set<string>();
  for (const container of containers) {
    const jobId = container.labels[LABELS.job];
    if (jobId && (await jobStillHere(client, jobId, hostId))) {
      kept.add(container.name);
      continue;
    }
    await docker.remove(container.id);
    removed.push(container.name);
    say(`removed orphaned container ${container.name} (job ${jobId ?? 'unknown'} no longer runs on ${hostId})`);
  }
  if (existsSync(dindStorageRoot)) {
    for (const entry of readdirSync(dindStorageRoot)) {
      if (kept.has(entry)) continue;
      rmSync(path.join(dindStorageRoot, entry), { recursive: true, force: true });
      say(`removed orphaned DinD storage ${entry}`);
    }
  }
  return removed;
}
