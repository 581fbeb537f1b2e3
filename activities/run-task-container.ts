// runTaskContainer: starts (or, after a worker crash, reattaches to) a job's container, heartbeats
// while it runs, kills it at the task's timeout, keeps its logs with the job's artifacts and
// removes it. Benchmark outcomes (exit code, timeout) are returned, never thrown: they are final.

import { CancelledFailure, Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { JobSpec, JobUsage } from '../runs/run-spec.js';
import { summarizeUsage } from '../runs/usage.js';
import type { ModelGateway } from '../gateway/model-gateway.js';
import type { ModelAccess } from './container-spec.js';
import { containerNameFor, LABELS, taskContainerBody, type DindPlacement } from './container-spec.js';
import { keepLogTail } from './container-log-tail.js';
import { detectDindRuntime } from './dind-runtime.js';
import type { DockerEngine } from './docker-engine.js';
import { jobSecrets } from './redact-secrets.js';

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
  /**
   * The log's last non-empty line, redacted of the job's secrets and cut short: all of the log a job
   * result shows, since this outcome is kept in workflow history. The last lines are in container-tail.log.
   */
  lastLogLine: string;
  /** True when this attempt found the container already started by an earlier attempt. */
  reattached: boolean;
  /** `simple`, or `dind:<mode>` with the detected DinD mode. */
  runtime: string;
  /** The job's model calls through the gateway. */
  usage?: JobUsage;
}

export interface ContainerDeps {
  docker: DockerEngine;
  hostId: string;
  artifactsRoot: string;
  dindStorageRoot: string;
  /** Host directory of datasets mounted read-only into every task (absent: none). */
  datasetDir?: string;
  /** This host's model gateway, and the base URL containers reach it at (`http://127.0.0.1:PORT/v1`). */
  gateway?: { instance: ModelGateway; url: string };
}

export function jobArtifactsDir(artifactsRoot: string, job: Pick<JobSpec, 'runId' | 'jobId'>): string {
  return path.join(artifactsRoot, job.runId, job.jobId);
}

const HEARTBEAT_MS = 2000;

export async function runTaskContainer(deps: ContainerDeps, { job, image, archives = [] }: RunContainerInput): Promise<ContainerOutcome> {
  const { docker } = deps;
  const ctx = Context.current();
  const name = containerNameFor(job.jobId, deps.hostId);
  const jobDir = jobArtifactsDir(deps.artifactsRoot, job);
  const resultsDir = path.join(jobDir, 'results');
  // A DinD task's daemon storage: its own host directory, removed with its container.
  const storageDir = job.task.docker ? path.join(deps.dindStorageRoot, name) : undefined;

  // Routes are (re)registered on every attempt: after a worker restart the same tokens come back.
  const { apiKey, access } = openModelAccess(deps, job, jobDir);
  const closeAccess = () => closeModelAccess(deps, job);

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
    const body = taskContainerBody({ job, image, hostId: deps.hostId, resultsDir, dind, datasetDir: deps.datasetDir }, apiKey, access);
    try {
      // 'conflict': another attempt won the race to create it; attach to that one below.
      await docker.createAndStart(name, body);
    } catch (error) {
      await removeContainerAndStorage(docker, name, storageDir);
      closeAccess();
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
      closeAccess();
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
  const usage = closeAccess();
  return {
    kind,
    exitCode: final.exitCode,
    oomKilled: final.oomKilled,
    startedAt: new Date(startedMs).toISOString(),
    // Docker can stamp a container that exits at once as finished a hair before it started.
    finishedAt: new Date(Math.max(startedMs, Date.parse(validDate(final.finishedAt) ?? new Date().toISOString()))).toISOString(),
    lastLogLine: keepLogTail(jobDir, jobSecrets(job, deps.gateway?.instance)),
    reattached,
    runtime,
    ...(usage ? { usage } : {}),
  };
}

/**
 * What the container gets to reach the model. Through the gateway: its URL and per-job tokens, the
 * real keys staying with the gateway. With --no-gateway: the endpoint and the real key.
 */
function openModelAccess(deps: ContainerDeps, job: JobSpec, jobDir: string): { apiKey: string; access: ModelAccess } {
  const { gateway } = deps;
  if (!gateway || !job.gateway.enabled) {
    const judge = job.judge ? { endpoint: job.judge.endpoint, model: job.judge.name, apiKey: resolveApiKey(job.judge.apiKeyEnv, deps.hostId) } : undefined;
    return { apiKey: resolveApiKey(job.model.apiKeyEnv, deps.hostId), access: { judge } };
  }
  const cacheDir = (runId: string) => path.join(deps.artifactsRoot, runId, 'gateway-cache');
  const route = (role: string, target: JobSpec['model']) =>
    gateway.instance.register({
      jobId: job.jobId,
      runId: job.runId,
      role,
      upstream: { baseUrl: target.endpoint, apiKey: resolveApiKey(target.apiKeyEnv, deps.hostId) },
      generation: role === 'model' ? job.generation : { set: {} },
      prices: job.prices,
      cache: job.gateway.cache ? { writeDir: cacheDir(job.runId), readDirs: job.gateway.cacheFrom.map(cacheDir) } : undefined,
      limits: { concurrency: job.gateway.concurrency, ratePerSecond: job.gateway.ratePerSecond, maxRetries: job.gateway.maxRetries },
      usageFile: path.join(jobDir, `usage-${role}.json`),
    });
  const apiKey = route('model', job.model);
  const judge = job.judge ? { endpoint: gateway.url, model: job.judge.name, apiKey: route('judge', job.judge) } : undefined;
  return { apiKey, access: { endpoint: gateway.url, judge } };
}

function closeModelAccess(deps: ContainerDeps, job: JobSpec): JobUsage | undefined {
  if (!deps.gateway || !job.gateway.enabled) return undefined;
  const model = deps.gateway.instance.unregister(job.jobId, 'model');
  const judge = job.judge ? deps.gateway.instance.unregister(job.jobId, 'judge') : undefined;
  if (!model) return undefined;
  return { model: summarizeUsage(model), ...(judge ? { judge: summarizeUsage(judge) } : {}), counters: { model, ...(judge ? { judge } : {}) } };
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

function resolveApiKey(source: string | undefined, hostId: string): string {
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

function validDate(text: string): string | undefined {
  const ms = Date.parse(text);
  return Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : undefined;
}
