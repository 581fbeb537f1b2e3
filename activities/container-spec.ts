// The `docker run` arguments for one job's task container. One function for both runtimes: Simple
// mode is the base; DinD mode adds what its own daemon needs. Pure, so it is tested directly.

import type { JobSpec } from '../contract/run-spec.js';

export const CONTAINER_BENCHMARK_DIR = '/app/benchmark';
export const CONTAINER_RESULTS_DIR = '/app/results';
export const CONTAINER_PRELOAD_DIR = '/app/preload';
export const DIND_ENTRYPOINT = '/usr/local/bin/benchrouter-dind-entrypoint';
/** Label every DinD runtime image carries, and so every image built FROM it. */
export const DIND_IMAGE_LABEL = 'benchrouter.dind.digest';
/** The name a DinD task container uses for its host; loopback endpoints are rewritten to it. */
export const HOST_ALIAS = 'host.docker.internal';

export const LABELS = {
  managed: 'benchrouter.managed',
  run: 'benchrouter.run',
  job: 'benchrouter.job',
  task: 'benchrouter.task',
  benchmark: 'benchrouter.benchmark',
  host: 'benchrouter.host',
  runtime: 'benchrouter.runtime',
} as const;

/** Deterministic per job: a retried activity finds the container its earlier attempt started. */
export function containerNameFor(jobId: string): string {
  const name = `br-${jobId}`.replace(/[^A-Za-z0-9_.-]/g, '-');
  if (name.length <= 200) return name;
  // Long ids keep a hash of the whole id, so two that share a long prefix stay distinct.
  return `${name.slice(0, 183)}-${fnv1a(jobId).toString(16).padStart(8, '0')}`;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

export interface DindPlacement {
  /** `docker run` flags of the detected runtime (sysbox, privileged or capabilities). */
  runtimeArgs: string[];
  runtimeName: string;
  /** Host directory bound at /var/lib/docker: the task daemon's own storage. */
  storageDir: string;
  /** Host paths of image archives to preload, mounted read-only under /app/preload. */
  archives: string[];
}

export interface ContainerSpecInput {
  job: JobSpec;
  image: string;
  hostId: string;
  /** Host directory mounted read-write at /app/results. */
  resultsDir: string;
  /** Present for `docker: true` tasks. */
  dind?: DindPlacement;
}

/**
 * A DinD task container has its own network namespace (its daemon makes bridges and iptables
 * rules that must not touch the host's), so a loopback endpoint would point at the container
 * itself: it is rewritten to the host's name on the bridge.
 */
export function endpointSeenFromBridge(endpoint: string): string {
  const url = new URL(endpoint);
  if (['127.0.0.1', 'localhost', '[::1]', '0.0.0.0'].includes(url.hostname)) url.hostname = HOST_ALIAS;
  return url.toString().replace(/\/$/, '');
}

/**
 * Arguments for `docker run --detach`. The API key is passed by name only (`-e BENCHROUTER_API_KEY`):
 * docker reads its value from the CLI's own environment, so it never appears in argv or logs.
 */
export function taskRunArgs({ job, image, hostId, resultsDir, dind }: ContainerSpecInput): string[] {
  const { task } = job;
  const env: Record<string, string> = {
    TZ: 'UTC',
    PYTHONHASHSEED: '0',
    ...task.extraEnv,
    BENCHROUTER_MODEL_ENDPOINT: dind ? endpointSeenFromBridge(job.model.endpoint) : job.model.endpoint,
    BENCHROUTER_MODEL_NAME: job.model.name,
    BENCHROUTER_OUTPUT_DIR: CONTAINER_RESULTS_DIR,
  };
  const labels: Record<string, string> = {
    [LABELS.managed]: 'true',
    [LABELS.run]: job.runId,
    [LABELS.job]: job.jobId,
    [LABELS.task]: task.name,
    [LABELS.benchmark]: job.benchmark.name,
    [LABELS.host]: hostId,
    [LABELS.runtime]: dind ? `dind:${dind.runtimeName}` : 'simple',
  };
  const mount = (source: string, target: string, readonly = false) => ['--mount', `type=bind,source=${source},target=${target}${readonly ? ',readonly' : ''}`];

  const runtime = dind
    ? [
        ...dind.runtimeArgs,
        '--add-host',
        `${HOST_ALIAS}:host-gateway`,
        ...mount(dind.storageDir, '/var/lib/docker'),
        ...dind.archives.flatMap((archive) => mount(archive, `${CONTAINER_PRELOAD_DIR}/${archive.split('/').pop()}`, true)),
        '--entrypoint',
        DIND_ENTRYPOINT,
      ]
    : ['--network', 'host', '--security-opt', 'no-new-privileges', '--entrypoint', '/bin/sh'];

  return [
    'run',
    '--detach',
    '--name',
    containerNameFor(job.jobId),
    ...Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]),
    '--memory',
    task.resources.memory,
    '--cpus',
    String(task.resources.cpus),
    '--pids-limit',
    String(task.resources.pids),
    ...mount(job.benchmark.dir, CONTAINER_BENCHMARK_DIR, true),
    ...mount(resultsDir, CONTAINER_RESULTS_DIR),
    '--workdir',
    `${CONTAINER_BENCHMARK_DIR}/tasks/${task.name}`,
    ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
    '--env',
    'BENCHROUTER_API_KEY',
    ...runtime,
    image,
    ...(dind ? ['sh', '-c', task.command] : ['-c', task.command]),
  ];
}
