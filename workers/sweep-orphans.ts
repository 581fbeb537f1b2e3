// When a worker starts, it removes what earlier lives of this host left behind: BenchRouter
// containers whose job is no longer running here (the job ended, or moved to another host), the tasks its
// engine holds for it elsewhere (a Kubernetes host's pods) on the same rule, and DinD storage directories
// that no container uses any more.

import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { LABELS } from '../activities/container-spec.js';
import type { JobWhereabouts } from '../activities/job-attempts.js';
import { removeDindStorage, taskClonesDir } from '../activities/dind-image-store.js';
import type { DockerEngine } from '../activities/docker-engine.js';
import type { HostTask } from '../activities/engines/engine.js';
import { currentHostOf, lastHostOfJob } from '../client/job-host.js';

export interface SweepInput {
  docker: DockerEngine;
  client: Client;
  hostId: string;
  /** The queue every worker polls, which names the hosts' own queues. */
  sharedQueue: string;
  dindStorageRoot: string;
  /** The DinD image store, whose `.tasks/` holds tasks' clones. */
  dindStoreDir?: string;
  /** The tasks the host's engine holds for it beyond its Docker containers (EngineKind.tasksOfHost). */
  engineTasks?: () => Promise<HostTask[]>;
  say: (line: string) => void;
}

/** Where the job's workflow says the job is (its kinds: activities/job-attempts.ts). */
export async function whereIsJob(client: Client, jobId: string, hostId: string, sharedQueue: string): Promise<JobWhereabouts> {
  try {
    const handle = client.workflow.getHandle(jobId);
    const described = await handle.describe();
    if (described.status.name !== 'RUNNING') return { kind: 'gone', why: `job ${jobId} is ${described.status.name}` };
    // Between attempts (the last one timed out while this worker was down, say): where its last attempt ran.
    const host = currentHostOf(described, sharedQueue) ?? (await lastHostOfJob(handle, sharedQueue));
    if (host === undefined) return { kind: 'unknown', why: `no attempt of job ${jobId} has run on any host yet` };
    if (host !== hostId) return { kind: 'gone', why: `job ${jobId} moved to ${host}` };
    return { kind: 'here' };
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return { kind: 'gone', why: `job ${jobId} has no workflow on the server` };
    return { kind: 'unknown', why: error instanceof Error ? error.message : String(error) };
  }
}

export async function sweepOrphans({ docker, client, hostId, sharedQueue, dindStorageRoot, dindStoreDir, engineTasks, say }: SweepInput): Promise<string[]> {
  const containers = await docker.listContainers([`${LABELS.managed}=true`, `${LABELS.host}=${hostId}`]);
  const tasks: HostTask[] = containers.map((container) => ({
    name: container.name,
    labels: container.labels,
    remove: () => docker.remove(container.id),
  }));
  const { removed, kept } = await sweepTasks(tasks, 'container', { client, hostId, sharedQueue, say });
  if (engineTasks) {
    let held: HostTask[] = [];
    try {
      held = await engineTasks();
    } catch (error) {
      // An engine that cannot list now must not keep the worker from starting: the next start sweeps again.
      say(`could not list this host's tasks on its engine: ${error instanceof Error ? error.message : String(error)}`);
    }
    removed.push(...(await sweepTasks(held, 'task', { client, hostId, sharedQueue, say })).removed);
  }
  removeUnkept(dindStorageRoot, kept, removeDindStorage, (entry) => say(`removed orphaned DinD storage ${entry}`));
  // Clones in the image store whose task's link is gone (a crash between the clone and the link).
  if (dindStoreDir)
    removeUnkept(
      taskClonesDir(dindStoreDir),
      kept,
      (dir) => rmSync(dir, { recursive: true, force: true }),
      (entry) => say(`removed orphaned DinD storage clone ${entry}`),
    );
  return removed;
}

/** Removes each of `tasks` whose job no longer runs on this host; keeps the rest, and any it cannot tell of or remove. */
async function sweepTasks(
  tasks: HostTask[],
  what: string,
  { client, hostId, sharedQueue, say }: Pick<SweepInput, 'client' | 'hostId' | 'sharedQueue' | 'say'>,
): Promise<{ removed: string[]; kept: Set<string> }> {
  const removed: string[] = [];
  const kept = new Set<string>();
  for (const task of tasks) {
    const jobId = task.labels[LABELS.job];
    const where: JobWhereabouts = jobId ? await whereIsJob(client, jobId, hostId, sharedQueue) : { kind: 'gone', why: 'it has no job label' };
    if (where.kind === 'here') {
      kept.add(task.name);
      continue;
    }
    if (where.kind === 'unknown') {
      // A transient error must never cost a live job its task: the next start sweeps again.
      kept.add(task.name);
      say(`kept ${what} ${task.name}: cannot tell whether job ${jobId} still runs on ${hostId} (${where.why})`);
      continue;
    }
    try {
      await task.remove();
    } catch (error) {
      // One the engine will not remove now must not keep the worker from starting: the next start sweeps again.
      kept.add(task.name);
      say(`could not remove orphaned ${what} ${task.name} (${where.why}): ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    removed.push(task.name);
    say(`removed orphaned ${what} ${task.name} (${where.why}; not on ${hostId} any more)`);
  }
  return { removed, kept };
}

/** Removes every entry of `dir` (each named by its container) whose container was not kept. */
function removeUnkept(dir: string, kept: ReadonlySet<string>, remove: (entry: string) => void, said: (entry: string) => void): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir)) {
    if (kept.has(entry)) continue;
    remove(path.join(dir, entry));
    said(entry);
  }
}
