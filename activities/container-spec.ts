// What a job's task runs as, in no engine's terms (engines/engine.ts TaskSpec): the contract's mounts and
// variables, the task's limits, deterministic names and labels. The Docker engine makes it a container
// (engines/docker/container-body.ts). Pure, so it is tested directly.

import { createHash } from 'node:crypto';
import { taskDirectory } from '../contract/task-template.js';
import { shardEnvironment } from '../runs/instance-shards.js';
import type { JobSpec } from '../runs/run-spec.js';
import { SIDE_MODEL_ROLES, type SideModelRole } from '../runs/side-models.js';
import type { TaskMount, TaskSpec } from './engines/engine.js';

export const CONTAINER_BENCHMARK_DIR = '/app/benchmark';
export const CONTAINER_RESULTS_DIR = '/app/results';
export const CONTAINER_PRELOAD_DIR = '/app/preload';
/** Where the worker's dataset directory (BENCHROUTER_DATASET_DIR on the host) appears, read-only. */
export const CONTAINER_DATASET_DIR = '/app/datasets';
export const DIND_ENTRYPOINT = '/usr/local/bin/benchrouter-dind-entrypoint';
/** Label every DinD runtime image carries, and so every image built FROM it. */
export const DIND_IMAGE_LABEL = 'benchrouter.dind.digest';
/** The name a task container on a bridge uses for its host; loopback endpoints are rewritten to it. */
export const HOST_ALIAS = 'host.docker.internal';
/**
 * The daemon's own copy of a task's output (json-file), capped: a task printing gigabytes must not
 * fill the host's disk. The job's container.log is capped separately (container-log.ts).
 */
export const TASK_LOG_CONFIG = { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '3' } } as const;

export const LABELS = {
  managed: 'benchrouter.managed',
  run: 'benchrouter.run',
  job: 'benchrouter.job',
  task: 'benchrouter.task',
  benchmark: 'benchrouter.benchmark',
  host: 'benchrouter.host',
  runtime: 'benchrouter.runtime',
  /** How a DinD task's images were preloaded (PreloadPath), for an attempt that reattaches. */
  preload: 'benchrouter.preload',
} as const;

/** How a DinD task's daemon got its preloaded images: a clone of the store, or `docker load` of the archives (dind-image-store.ts). */
export type PreloadPath = 'store' | 'load';

/**
 * Deterministic per job and host: a retried activity on the same host finds the container its
 * earlier attempt started, while a job that moved to another host (even one sharing the Docker
 * daemon) starts afresh there.
 */
export function containerNameFor(jobId: string, hostId: string): string {
  const name = `br-${hostId}-${jobId}`.replace(/[^A-Za-z0-9_.-]/g, '-');
  if (name.length <= 200) return name;
  // Long ids keep a hash of the whole id, so two that share a long prefix stay distinct.
  return `${name.slice(0, 183)}-${createHash('sha256').update(jobId).digest('hex').slice(0, 8)}`;
}

/** "512m", "2g", "1.5G", "1024" (bytes) → bytes, as `docker run --memory` reads them. */
export function memoryBytes(size: string): number {
  const match = /^(\d+(?:\.\d+)?)([kmg]?)b?$/i.exec(size.trim());
  if (!match) throw new Error(`expected a memory size like "512m" or "2g", got "${size}"`);
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Math.round(Number(match[1]) * unit);
}

export interface TaskSpecInput {
  job: JobSpec;
  image: string;
  hostId: string;
  /** Host directory mounted read-write at /app/results. */
  resultsDir: string;
  /** The worker's dataset directory, when it has one: mounted read-only and named in BENCHROUTER_DATASET_DIR. */
  datasetDir?: string;
  /** For a shard resumed after some of its instances were scored: the ones its task still evaluates. */
  remaining?: string[];
}

/**
 * A task container on a bridge (every task but a `network: host` one) has its own network
 * namespace, so a loopback endpoint would point at the container itself: it is rewritten to the
 * host's name on the bridge. (A DinD task needs the namespace: its daemon makes bridges and
 * iptables rules that must not touch the host's.)
 */
export function endpointSeenFromBridge(endpoint: string): string {
  const url = new URL(endpoint);
  if (!['127.0.0.1', 'localhost', '[::1]', '0.0.0.0'].includes(url.hostname)) return endpoint;
  url.hostname = HOST_ALIAS;
  return url.toString().replace(/\/$/, '');
}

/** The labels a task is found by again; its engine adds how it ran it (LABELS.runtime, LABELS.preload). */
export function taskLabels({ job, hostId }: TaskSpecInput): Record<string, string> {
  return {
    [LABELS.managed]: 'true',
    [LABELS.run]: job.runId,
    [LABELS.job]: job.jobId,
    [LABELS.task]: job.task.name,
    [LABELS.benchmark]: job.benchmark.name,
    [LABELS.host]: hostId,
  };
}

/** How the container reaches the model when that is not the run's endpoint itself (the gateway). */
export type ModelAccess = {
  endpoint?: string;
} & Partial<Record<SideModelRole, { endpoint: string; model: string; apiKey: string }>>;

/** BENCHROUTER_LIMIT and BENCHROUTER_INSTANCES as the run asked, for a task whose instances the platform does not know. */
function selectionEnvironment(options: JobSpec['options']): Record<string, string> {
  return {
    ...(options.limit !== undefined ? { BENCHROUTER_LIMIT: String(options.limit) } : {}),
    ...(options.instances ? { BENCHROUTER_INSTANCES: options.instances.join(',') } : {}),
  };
}

/**
 * The task's spec. The API key (a per-job gateway token, or the real key with --no-gateway) goes only
 * into its environment (a container's Env, sent over the daemon's socket): it is in no label, argument or log line.
 */
export function taskSpec(input: TaskSpecInput, apiKey: string, access: ModelAccess = {}): TaskSpec {
  const { job, image, resultsDir, datasetDir } = input;
  const { task } = job;
  // A `docker: true` task is never on the host's network: the contract refuses it.
  const onHostNetwork = !task.docker && task.network === 'host';
  const reachable = (endpoint: string) => (onHostNetwork ? endpoint : endpointSeenFromBridge(endpoint));
  const env: Record<string, string> = {
    TZ: 'UTC',
    PYTHONHASHSEED: '0',
    ...task.extraEnv,
    BENCHROUTER_MODEL_ENDPOINT: reachable(access.endpoint ?? job.options.endpoint),
    BENCHROUTER_MODEL_NAME: job.options.model,
    BENCHROUTER_OUTPUT_DIR: CONTAINER_RESULTS_DIR,
    BENCHROUTER_API_KEY: apiKey,
    ...(job.repeat?.seed !== undefined ? { BENCHROUTER_SEED: String(job.repeat.seed) } : {}),
    // A task that lists its instances is told its shard of them; any other, the run's selection as it was given.
    ...(job.shard ? shardEnvironment(job.shard, input.remaining) : selectionEnvironment(job.options)),
    ...(job.options.jobConcurrency !== undefined ? { BENCHROUTER_CONCURRENCY: String(job.options.jobConcurrency) } : {}),
    // A judge's and a user simulator's routes: BENCHROUTER_JUDGE_* and BENCHROUTER_USER_*.
    ...Object.fromEntries(
      SIDE_MODEL_ROLES.flatMap((role) => {
        const side = access[role];
        const prefix = `BENCHROUTER_${role.toUpperCase()}`;
        return side
          ? [
              [`${prefix}_ENDPOINT`, reachable(side.endpoint)],
              [`${prefix}_MODEL`, side.model],
              [`${prefix}_API_KEY`, side.apiKey],
            ]
          : [];
      }),
    ),
    ...(datasetDir ? { BENCHROUTER_DATASET_DIR: CONTAINER_DATASET_DIR } : {}),
  };
  const mount = (source: string, target: string, readOnly = false): TaskMount => ({ source, target, readOnly });
  return {
    image,
    command: task.command,
    workingDir: `${CONTAINER_BENCHMARK_DIR}/tasks/${taskDirectory(task)}`,
    env,
    labels: taskLabels(input),
    resources: { memoryBytes: memoryBytes(task.resources.memory), cpus: task.resources.cpus, pids: task.resources.pids },
    mounts: [
      mount(job.benchmark.dir, CONTAINER_BENCHMARK_DIR, true),
      mount(resultsDir, CONTAINER_RESULTS_DIR),
      ...(datasetDir ? [mount(datasetDir, CONTAINER_DATASET_DIR, true)] : []),
    ],
    network: onHostNetwork ? 'host' : 'isolated',
    docker: task.docker,
  };
}
