// The seam between a task attempt (run-task-container.ts) and where its container runs: one file per
// runtime, chosen here from the task's definition. A new runtime is a file and its entry in RUNTIMES.

import type { Context } from '@temporalio/activity';
import type { TaskDefinition } from '../../contract/benchmark.js';
import type { JobSpec } from '../../runs/run-spec.js';
import type { ContainerSpecInput } from '../container-spec.js';
import type { ContainerCreateBody, DockerEngine } from '../docker-engine.js';
import type { NetnsPool } from '../netns-pool.js';
import { dindRuntime } from './dind-runtime.js';
import { simpleRuntime } from './simple-runtime.js';

export interface TaskRuntimeDeps {
  docker: DockerEngine;
  /** Where each DinD task's daemon storage goes, a directory per container. */
  dindStorageRoot: string;
  /** The host's DinD image store (dind-image-store.ts) and its size cap (0: off). */
  dindStoreDir: string;
  dindStoreMaxBytes: number;
  locksDir: string;
  /** Network namespaces lent to Simple-mode tasks (netns-pool.ts); without it each task gets one of its own. */
  netns?: NetnsPool;
}

/** What an attempt gives the runtime of its job. */
export interface TaskRuntimeScope {
  deps: TaskRuntimeDeps;
  job: JobSpec;
  image: string;
  /** A DinD task's preload archives (from ensureImage). */
  archives: string[];
  /** The container's name, the same for every attempt of the job on this host (container-spec.ts). */
  name: string;
  ctx: Context;
  /** Heartbeats with `details` while `work` goes on: a wait as long as the task's images take. */
  beatingWhile<T>(details: Record<string, unknown>, work: Promise<T>): Promise<T>;
}

/**
 * One job's container in one runtime, for one attempt. The attempt owns the container's life (slot,
 * logs, deadline, watchdogs, routes, cleanup); the runtime, where it runs and what it holds besides.
 */
export interface TaskRuntime {
  /**
   * Readies what a fresh container needs, then creates and starts the one that `body` describes where
   * the runtime places it; `conflict` when a container of its name exists. Whatever a failed start
   * leaves, `remove` takes.
   */
  start(body: (placement: Pick<ContainerSpecInput, 'dind' | 'hostAddress' | 'netns'>) => ContainerCreateBody): Promise<{ id: string } | 'conflict'>;
  /** Bytes the task holds beside its results and its container's writable layer (a DinD daemon's storage). */
  heldBytes(): Promise<number>;
  /** Removes the container (by name or id) and gives back what the task held with it (its storage, its lent namespace). */
  remove(nameOrId: string): Promise<void>;
}

/** A kind of runtime: the tasks it runs, and how it opens for an attempt. */
export interface TaskRuntimeKind {
  name: string;
  runs(task: TaskDefinition): boolean;
  open(scope: TaskRuntimeScope): TaskRuntime;
}

/** The first kind that runs a task runs it: Simple mode, which runs any, comes last. */
const RUNTIMES: readonly TaskRuntimeKind[] = [dindRuntime, simpleRuntime];

export function runtimeKindFor(task: TaskDefinition): TaskRuntimeKind {
  const kind = RUNTIMES.find((candidate) => candidate.runs(task));
  if (!kind) throw new Error(`no task runtime runs task ${task.name}: ${RUNTIMES.map((k) => k.name).join(', ')} all declined it`);
  return kind;
}
