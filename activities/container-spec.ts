// The `docker run` arguments for one job's task container. One function for both runtimes: Simple
// mode is the base; DinD mode adds its own daemon's needs on top. Pure, so it is tested directly.

import type { JobSpec } from '../contract/run-spec.js';

export const CONTAINER_BENCHMARK_DIR = '/app/benchmark';
export const CONTAINER_RESULTS_DIR = '/app/results';

export const LABELS = {
  managed: 'benchrouter.managed',
  run: 'benchrouter.run',
  job: 'benchrouter.job',
  task: 'benchrouter.task',
  benchmark: 'benchrouter.benchmark',
  host: 'benchrouter.host',
} as const;

/** Deterministic per job: a retried activity finds the container its earlier attempt started. */
export function containerNameFor(jobId: string): string {
  return `br-${jobId}`.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 200);
}

export interface ContainerSpecInput {
  job: JobSpec;
  image: string;
  hostId: string;
  /** Host directory mounted read-write at /app/results. */
  resultsDir: string;
}

/**
 * Arguments for `docker run --detach`. The API key is passed by name only (`-e BENCHROUTER_API_KEY`):
 * docker reads its value from the CLI's own environment, so it never appears in argv or logs.
 */
export function simpleRunArgs({ job, image, hostId, resultsDir }: ContainerSpecInput): string[] {
  const { task } = job;
  const env: Record<string, string> = {
    TZ: 'UTC',
    PYTHONHASHSEED: '0',
    ...task.extraEnv,
    BENCHROUTER_MODEL_ENDPOINT: job.model.endpoint,
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
  };
  return [
    'run',
    '--detach',
    '--name',
    containerNameFor(job.jobId),
    ...Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]),
    '--network',
    'host',
    '--memory',
    task.resources.memory,
    '--cpus',
    String(task.resources.cpus),
    '--pids-limit',
    String(task.resources.pids),
    '--security-opt',
    'no-new-privileges',
    '--mount',
    `type=bind,source=${job.benchmark.dir},target=${CONTAINER_BENCHMARK_DIR},readonly`,
    '--mount',
    `type=bind,source=${resultsDir},target=${CONTAINER_RESULTS_DIR}`,
    '--workdir',
    `${CONTAINER_BENCHMARK_DIR}/tasks/${task.name}`,
    ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
    '--env',
    'BENCHROUTER_API_KEY',
    '--entrypoint',
    '/bin/sh',
    image,
    '-c',
    task.command,
  ];
}
