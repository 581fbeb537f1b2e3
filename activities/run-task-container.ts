// runTaskContainer: starts (or, after a worker crash, reattaches to) a job's container, heartbeats
// while it runs, kills it at the task's timeout, keeps its logs with the job's artifacts and
// removes it. Benchmark outcomes (exit code, timeout) are returned, never thrown: they are final.

import { CancelledFailure, Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { JobSpec } from '../contract/run-spec.js';
import { containerNameFor, LABELS, taskContainerBody, type DindPlacement } from './container-spec.js';
import { detectDindRuntime } from './dind-runtime.js';
import type { DockerEngine } from './docker-engine.js';

export interface RunContainerInput {
  job: JobSpec;
  image: string;
  /** Preload archives for a `docker: true` task (from ensureImage). */
  archives?: string[];
}

export interface ContainerOutcome {
  kind: 'exited' | 'timed_out';
  exitCode: number;
  oomKilled: boolean;
  startedAt: string;
  finishedAt: string;
  logTail: string;
  /** True when this attempt found the container already started by an earlier attempt. */
  reattached: boolean;
  /** `simple`, or `dind:<mode>` with the detected DinD mode. */
  runtime: string;
}

export interface ContainerDeps {
  docker: DockerEngine;
  hostId: string;
  artifactsRoot: string;
  dindStorageRoot: string;
}

export function jobArtifactsDir(artifactsRoot: string, job: Pick<JobSpec, 'runId' | 'jobId'>): string {
  return path.join(artifactsRoot, job.runId, job.jobId);
}

const HEARTBEAT_MS = 2000;
const LOG_TAIL_LINES = 20;

export async function runTaskContainer(deps: ContainerDeps, { job, image, archives = [] }: RunContainerInput): Promise<ContainerOutcome> {
  const { docker } = deps;
  const ctx = Context.current();
  const name = containerNameFor(job.jobId, deps.hostId);
  const jobDir = jobArtifactsDir(deps.artifactsRoot, job);
  const resultsDir = path.join(jobDir, 'results');
  // A DinD task's daemon storage: its own host directory, removed with its container.
  const storageDir = job.task.docker ? path.join(deps.dindStorageRoot, name) : undefined;

  let state = await docker.containerState(name);
  const reattached = state !== undefined;
  let runtime = state?.labels[LABELS.runtime] ?? 'simple';
  if (!state) {
    // A fresh start: nothing from an earlier, unfinished attempt may be mistaken for this one's output.
    rmSync(resultsDir, { recursive: true, force: true });
    mkdirSync(resultsDir, { recursive: true, mode: 0o777 });
    let dind: DindPlacement | undefined;
    if (storageDir) {
      const detected = await detectDindRuntime(docker, image);
      rmSync(storageDir, { recursive: true, force: true });
      mkdirSync(storageDir, { recursive: true });
      dind = { runtimeHostConfig: detected.hostConfig, runtimeName: detected.mode, storageDir, archives };
      runtime = `dind:${detected.mode}`;
    }
    const body = taskContainerBody({ job, image, hostId: deps.hostId, resultsDir, dind }, resolveApiKey(job, deps.hostId));
    try {
      // 'conflict': another attempt won the race to create it; attach to that one below.
      await docker.createAndStart(name, body);
    } catch (error) {
      await removeContainerAndStorage(docker, name, storageDir);
      throw error;
    }
    state = await docker.containerState(name);
    if (!state) throw ApplicationFailure.create({ type: 'InfrastructureError', message: `container ${name} vanished right after it was started` });
  }
  const containerId = state.id;
  ctx.heartbeat({ containerId });

  const startedMs = Date.parse(state.startedAt) || Date.now();
  const deadlineMs = startedMs + job.task.timeoutSeconds * 1000;
  const heartbeat = setInterval(() => ctx.heartbeat({ containerId }), HEARTBEAT_MS);
  let kind: ContainerOutcome['kind'] = 'exited';
  try {
    if (state.running) kind = await waitUntilExitOrDeadline(docker, containerId, deadlineMs, ctx.cancellationSignal);
    if (kind === 'timed_out') await docker.kill(containerId);
  } catch (error) {
    if (ctx.cancellationSignal.aborted) {
      await docker.kill(containerId);
      await docker.saveLogs(containerId, path.join(jobDir, 'container.log')).catch(() => undefined);
      await removeContainerAndStorage(docker, containerId, storageDir);
      throw new CancelledFailure(`job ${job.jobId} cancelled; container ${name} killed`);
    }
    throw error;
  } finally {
    clearInterval(heartbeat);
  }

  const final = (await docker.containerState(containerId)) ?? state;
  const logFile = path.join(jobDir, 'container.log');
  await docker.saveLogs(containerId, logFile);
  await removeContainerAndStorage(docker, containerId, storageDir);
  return {
    kind,
    exitCode: final.exitCode,
    oomKilled: final.oomKilled,
    startedAt: new Date(startedMs).toISOString(),
    finishedAt: validDate(final.finishedAt) ?? new Date().toISOString(),
    logTail: tailOf(logFile),
    reattached,
    runtime,
  };
}

/** The container goes first: a DinD daemon's storage may only go once nothing uses it. */
async function removeContainerAndStorage(docker: DockerEngine, nameOrId: string, storageDir: string | undefined): Promise<void> {
  await docker.remove(nameOrId);
  if (storageDir) rmSync(storageDir, { recursive: true, force: true });
}

async function waitUntilExitOrDeadline(docker: DockerEngine, containerId: string, deadlineMs: number, cancel: AbortSignal): Promise<'exited' | 'timed_out'> {
  const waiting = new AbortController();
  const onCancel = () => waiting.abort();
  cancel.addEventListener('abort', onCancel);
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      docker.wait(containerId, waiting.signal).then(() => 'exited' as const),
      new Promise<'timed_out'>((resolve) => {
        timer = setTimeout(() => resolve('timed_out'), Math.max(0, deadlineMs - Date.now()));
      }),
      new Promise<never>((_, reject) => {
        if (cancel.aborted) reject(new Error('cancelled'));
        cancel.addEventListener('abort', () => reject(new Error('cancelled')));
      }),
    ]);
  } finally {
    clearTimeout(timer);
    cancel.removeEventListener('abort', onCancel);
    waiting.abort();
  }
}

function resolveApiKey(job: JobSpec, hostId: string): string {
  const source = job.model.apiKeyEnv;
  if (!source) return 'EMPTY';
  const key = process.env[source];
  if (!key) {
    throw ApplicationFailure.create({
      type: 'MissingSecret',
      nonRetryable: true,
      message: `the run reads its API key from $${source}, which is not set on worker host ${hostId}`,
    });
  }
  return key;
}

function tailOf(file: string): string {
  try {
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    return lines.slice(-LOG_TAIL_LINES).map((l) => l.replace(/^\S+Z /, '')).join('\n');
  } catch {
    return '';
  }
}

function validDate(text: string): string | undefined {
  const ms = Date.parse(text);
  return Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : undefined;
}
