// The Docker engine's two modes, chosen from the task's definition: DinD mode for a `docker: true` task (its own
// Docker daemon), Simple mode for any other. One file per mode behind this small interface.

import type { TaskDefinition } from '../../../contract/benchmark.js';
import type { ContainerCreateBody, DockerEngine } from '../../docker-engine.js';
import type { NetnsPool } from '../../netns-pool.js';
import type { OomEventHub } from '../../oom-events.js';
import type { AttemptScope } from '../engine.js';
import type { Placement } from './container-body.js';
import { dindMode } from './dind-mode.js';
import { simpleMode } from './simple-mode.js';

/** What a worker host gives its Docker engine. */
export interface DockerEngineDeps {
  docker: DockerEngine;
  /** Where each DinD task's daemon storage goes, a directory per container. */
  dindStorageRoot: string;
  /** The host's DinD image store (dind-image-store.ts) and its size cap (0: off). */
  dindStoreDir: string;
  dindStoreMaxBytes: number;
  locksDir: string;
  /** Network namespaces lent to Simple-mode tasks (netns-pool.ts); without it each task gets one of its own. */
  netns?: NetnsPool;
  /** The worker's one stream of containers' OOM events (oom-events.ts); without it each container gets a stream of its own. */
  oomEvents?: OomEventHub;
}

/** What an attempt gives the mode of its job. */
export interface ModeScope extends AttemptScope {
  deps: DockerEngineDeps;
}

/**
 * One job's container in one mode, for one attempt. The attempt owns the container's life (slot, logs,
 * deadline, watchdogs, routes, cleanup); the mode, where it runs and what it holds besides.
 */
export interface DockerMode {
  /**
   * Readies what a fresh container needs, then creates and starts the one that `body` describes where
   * the mode places it; `conflict` when a container of its name exists. Whatever a failed start
   * leaves, `remove` takes.
   */
  start(body: (placement: Placement) => ContainerCreateBody): Promise<{ id: string } | 'conflict'>;
  /** Bytes the task holds beside its results and its container's writable layer (a DinD daemon's storage). */
  heldBytes(): Promise<number>;
  /** Removes the container (by name or id) and gives back what the task held with it (its storage, its lent namespace). */
  remove(nameOrId: string): Promise<void>;
}

/** A mode: the tasks it runs, and how it opens for an attempt. */
export interface DockerModeKind {
  name: string;
  runs(task: TaskDefinition): boolean;
  open(scope: ModeScope): DockerMode;
}

/** The first mode that runs a task runs it: Simple mode, which runs any, comes last. */
const MODES: readonly DockerModeKind[] = [dindMode, simpleMode];

export function modeFor(task: TaskDefinition): DockerModeKind {
  const kind = MODES.find((candidate) => candidate.runs(task));
  if (!kind) throw new Error(`no Docker mode runs task ${task.name}: ${MODES.map((k) => k.name).join(', ')} all declined it`);
  return kind;
}
