// The container a job's task runs in, as a Docker Engine API create body. One function for both
// runtimes: Simple mode is the base; DinD mode adds what the task's own daemon needs. Pure, so it
// is tested directly.

import { createHash } from 'node:crypto';
import { taskDirectory } from '../contract/task-template.js';
import { shardEnvironment } from '../runs/instance-shards.js';
import type { JobSpec } from '../runs/run-spec.js';
import { SIDE_MODEL_ROLES, type SideModelRole } from '../runs/side-models.js';
import type { PreloadPath } from './dind-image-store.js';
import type { ContainerCreateBody } from './docker-engine.js';
import type { NetnsLease } from './netns-pool.js';
import { TASK_NETWORK } from './task-network.js';

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
  /** How a DinD task's images were preloaded (dind-image-store.ts PreloadPath), for an attempt that reattaches. */
  preload: 'benchrouter.preload',
} as const;

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

export interface DindPlacement {
  /** HostConfig fields of the detected runtime (sysbox, privileged or capabilities). */
  runtimeHostConfig: Record<string, unknown>;
  runtimeName: string;
  /** Host directory bound at /var/lib/docker: the task daemon's own storage. */
  storageDir: string;
  /** Host paths of image archives to preload, mounted read-only under /app/preload. */
  archives: string[];
  /** How its images were preloaded, labelled for an attempt that reattaches (absent: none to preload). */
  preload?: PreloadPath;
}

export interface ContainerSpecInput {
  job: JobSpec;
  image: string;
  hostId: string;
  /** Host directory mounted read-write at /app/results. */
  resultsDir: string;
  /** Present for `docker: true` tasks. */
  dind?: DindPlacement;
  /**
   * The host's address on the task network (its gateway), which host.docker.internal names. Docker's
   * `host-gateway` is docker0's address instead, which a DinD task's own daemon takes for its own
   * bridge (it sees no route to that subnet from the task network), hiding the host behind it.
   */
  hostAddress?: string;
  /** The worker's dataset directory, when it has one: mounted read-only and named in BENCHROUTER_DATASET_DIR. */
  datasetDir?: string;
  /** A Simple-mode task's network namespace, lent by the worker's pool (netns-pool.ts); without one, a namespace of its own. */
  netns?: NetnsLease;
  /** For a shard resumed after some of its instances were scored: the ones its container still evaluates. */
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

export function taskLabels({ job, hostId, dind }: ContainerSpecInput): Record<string, string> {
  return {
    [LABELS.managed]: 'true',
    [LABELS.run]: job.runId,
    [LABELS.job]: job.jobId,
    [LABELS.task]: job.task.name,
    [LABELS.benchmark]: job.benchmark.name,
    [LABELS.host]: hostId,
    [LABELS.runtime]: dind ? `dind:${dind.runtimeName}` : 'simple',
    ...(dind?.preload ? { [LABELS.preload]: dind.preload } : {}),
  };
}

/** How the container reaches the model when that is not the run's endpoint itself (the gateway). */
export type ModelAccess = {
  endpoint?: string;
} & Partial<Record<SideModelRole, { endpoint: string; model: string; apiKey: string }>>;

/**
 * The create body. The API key (a per-job gateway token, or the real key with --no-gateway) goes
 * only into Env, sent over the daemon's socket: it is in no label, argument or log line.
 */
/** BENCHROUTER_LIMIT and BENCHROUTER_INSTANCES as the run asked, for a task whose instances the platform does not know. */
function selectionEnvironment(options: JobSpec['options']): Record<string, string> {
  return {
    ...(options.limit !== undefined ? { BENCHROUTER_LIMIT: String(options.limit) } : {}),
    ...(options.instances ? { BENCHROUTER_INSTANCES: options.instances.join(',') } : {}),
  };
}

export function taskContainerBody(input: ContainerSpecInput, apiKey: string, access: ModelAccess = {}): ContainerCreateBody {
  const { job, image, resultsDir, dind, datasetDir } = input;
  const { task } = job;
  const onHostNetwork = !dind && task.network === 'host';
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
  const bind = (Source: string, Target: string, ReadOnly = false) => ({ Type: 'bind', Source, Target, ReadOnly });
  const mounts = [
    bind(job.benchmark.dir, CONTAINER_BENCHMARK_DIR, true),
    bind(resultsDir, CONTAINER_RESULTS_DIR),
    ...(datasetDir ? [bind(datasetDir, CONTAINER_DATASET_DIR, true)] : []),
  ];
  const memory = memoryBytes(task.resources.memory);
  // MemorySwap equal to Memory: the limit is the task's memory, not memory plus as much swap again.
  const limits = { Memory: memory, MemorySwap: memory, NanoCpus: Math.round(task.resources.cpus * 1e9), PidsLimit: task.resources.pids };
  // The task network keeps tasks off the host's own ports (see task-firewall.ts); host.docker.internal
  // is how they still reach the worker's model gateway. `network: host` gives all of that up.
  // A lent namespace (Simple mode only) is on the task network already, host.docker.internal included.
  const lent = !dind && !onHostNetwork ? input.netns : undefined;
  const network = onHostNetwork
    ? { NetworkMode: 'host' }
    : lent
      ? { NetworkMode: lent.networkMode }
      : { NetworkMode: TASK_NETWORK, ExtraHosts: [`${HOST_ALIAS}:${input.hostAddress ?? 'host-gateway'}`] };

  const hostConfig: Record<string, unknown> = dind
    ? {
        ...dind.runtimeHostConfig,
        ...limits,
        ...network,
        LogConfig: TASK_LOG_CONFIG,
        Mounts: [
          ...mounts,
          bind(dind.storageDir, '/var/lib/docker'),
          ...dind.archives.map((archive) => bind(archive, `${CONTAINER_PRELOAD_DIR}/${archive.split('/').pop()}`, true)),
        ],
      }
    : {
        ...limits,
        ...network,
        LogConfig: TASK_LOG_CONFIG,
        SecurityOpt: ['no-new-privileges'],
        Mounts: [...mounts, ...(lent?.mounts ?? [])],
      };

  return {
    Image: image,
    Entrypoint: dind ? [DIND_ENTRYPOINT] : ['/bin/sh'],
    Cmd: dind ? ['sh', '-c', task.command] : ['-c', task.command],
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    Labels: taskLabels(input),
    WorkingDir: `${CONTAINER_BENCHMARK_DIR}/tasks/${taskDirectory(task)}`,
    HostConfig: hostConfig,
  };
}
