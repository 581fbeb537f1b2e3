// runTaskContainer: starts (or, after a worker crash, reattaches to) a job's container, heartbeats
// while it runs, kills it at the task's timeout, streams its logs (capped) into the job's artifacts,
// counts its out-of-memory kills and removes it. Benchmark outcomes (exit code, timeout, OOM kills)
// are returned, never thrown: they are final.

import { CancelledFailure, Context } from '@temporalio/activity';
import { FAILURE_TYPES } from '../runs/failure-types.js';
import { ApplicationFailure, type ActivityCancellationDetails } from '@temporalio/common';
import { mkdirSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { JobSpec, JobUsage } from '../runs/run-spec.js';
import { JOB_FILES, jobArtifactsDir, jobResultsDir } from '../runs/job-artifacts.js';
import { openLoopbackEndpoints, openModelAccess, type ModelAccessDeps } from './model-access.js';
import { containerNameFor, LABELS, memoryBytes, taskContainerBody, type DindPlacement } from './container-spec.js';
import { DEFAULT_RESOURCES } from '../contract/benchmark-schema.js';
import { captureContainerLog, type LogCapture } from './container-log.js';
import { keepLogTail } from './container-log-tail.js';
import { dindStorageBytes, provideDindStorage, removeDindStorage, type PreloadPath } from './dind-image-store.js';
import { detectDindMode } from './task-runtimes/dind-mode.js';
import { directoryBytes, watchDiskUse, type DiskExceeded } from './disk-watchdog.js';
import type { DockerEngine } from './docker-engine.js';
import { OomEventHub, watchOomEvents } from './oom-events.js';
import { killedByOutage, killedFromOutside, OUTAGE_RESTART_LABEL } from './outage-restart.js';
import { followTaskRecords } from './records-follower.js';
import type { RewardBatch } from '../runs/rewards.js';
import { jobSecrets } from './redact-secrets.js';
import type { NetnsPool } from './netns-pool.js';
import type { ContainerSlots } from './container-slots.js';
import { ensureTaskNetwork } from './task-network.js';

/** What a job's earlier host activity left to the one after it on this host: its attempts, and its last heartbeat's details. */
export interface EarlierAttempts {
  attempts: number;
  heartbeat?: unknown;
}

/** This attempt's number among all of its job's attempts on its host activities (the first attempt's included). */
export function jobAttempt(ctx: Context, earlier: EarlierAttempts | undefined): number {
  return ctx.info.attempt + (earlier?.attempts ?? 0);
}

/**
 * Heartbeats of a job's host activity: every one names this host first, so that when an attempt dies the
 * workflow pins the next one here (workflows/host-failover.ts reads the last heartbeat).
 */
export function hostHeartbeat(ctx: Context, hostId: string): (details?: Record<string, unknown>) => void {
  return (details = {}) => ctx.heartbeat({ host: hostId, ...details });
}

export interface RunContainerInput {
  job: JobSpec;
  image: string;
  /** Preload archives for a `docker: true` task (from ensureImage). */
  archives?: string[];
  /** What an earlier activity of the job did on this host (its first attempt): counted as attempts of this one. */
  earlier?: EarlierAttempts;
}

export interface ContainerOutcome {
  /** `disk_limit`: killed for writing more than the task's `resources.disk`. */
  kind: 'exited' | 'timed_out' | 'disk_limit';
  /** With `disk_limit`: what the watchdog measured. */
  disk?: DiskExceeded;
  exitCode: number;
  /** True when the kernel killed any process of the task for memory, the main one or another. */
  oomKilled: boolean;
  /** How many out-of-memory kills the daemon reported for the container (0 when none). */
  oomKills: number;
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
  /** A DinD task's preloaded images: `store` (a clone of the host's prepared image set) or `load` (`docker load`). */
  preload?: PreloadPath;
  /** The job's model calls through the gateway. */
  usage?: JobUsage;
  /**
   * The last page of rewards the records follower read once the task had exited, not signalled: the
   * job workflow adds it to the rewards it holds, and the API's stream reads it from this result.
   */
  rewards?: RewardBatch;
}

export interface ContainerDeps extends ModelAccessDeps {
  docker: DockerEngine;
  dindStorageRoot: string;
  /** The host's DinD image store (dind-image-store.ts) and its size cap (0: off). */
  dindStoreDir: string;
  dindStoreMaxBytes: number;
  locksDir: string;
  /** Host directory of datasets mounted read-only into every task (absent: none). */
  datasetDir?: string;
  /** Network namespaces lent to Simple-mode tasks (netns-pool.ts); without it each task gets one of its own. */
  netns?: NetnsPool;
  /** The host's bound on containers at once (container-slots.ts); none: unbounded here. */
  containerSlots?: ContainerSlots;
  /** The worker's one stream of containers' OOM events (oom-events.ts); without it each container gets a stream of its own. */
  oomEvents?: OomEventHub;
}

const HEARTBEAT_MS = 2000;
/** How long the log stream may take to close once the container stopped, before it is cut. */
const LOG_DRAIN_MS = 60_000;
/** Where a DinD container says how its images were preloaded, for an attempt that reattaches to it. */
const PRELOAD_LABEL = 'benchrouter.preload';

export async function runTaskContainer(deps: ContainerDeps, input: RunContainerInput): Promise<ContainerOutcome> {
  // A fresh container takes a slot of the host's; it is given back however the attempt ends.
  const slot: { release?: () => void } = {};
  try {
    return await runContainer(deps, input, slot);
  } finally {
    slot.release?.();
  }
}

async function runContainer(
  deps: ContainerDeps,
  { job, image, archives = [], earlier }: RunContainerInput,
  slot: { release?: () => void },
): Promise<ContainerOutcome> {
  const { docker } = deps;
  const ctx = Context.current();
  const heartbeat = hostHeartbeat(ctx, deps.hostId);
  const name = containerNameFor(job.jobId, deps.hostId);
  const jobDir = jobArtifactsDir(deps.artifactsRoot, job);
  const resultsDir = jobResultsDir(deps.artifactsRoot, job);
  // A DinD task's daemon storage: its own host directory, removed with its container.
  const storageDir = job.task.docker ? path.join(deps.dindStorageRoot, name) : undefined;

  // Routes are (re)registered on every attempt: after a worker restart the same tokens come back.
  const { apiKey, access, close: closeAccess } = openModelAccess(deps, job, jobDir);
  const logFile = path.join(jobDir, JOB_FILES.containerLog);
  let hostAddress: string | undefined;
  const netnsPool = !job.task.docker && job.task.network !== 'host' ? deps.netns : undefined;
  if (job.task.docker || job.task.network !== 'host') {
    if (!netnsPool) hostAddress = (await ensureTaskNetwork(docker)).gateway;
    await openLoopbackEndpoints(deps, job, access);
  }
  /** Removes the task's container (and a DinD task's storage); its lent namespace goes back to the pool. */
  const removeTask = async (nameOrId: string) => {
    await removeContainerAndStorage(docker, nameOrId, storageDir);
    netnsPool?.release(name);
  };
  // A first attempt finds no container of this job on this host (a name taken anyway is caught at the
  // create, below): one inspect fewer per job. A retry looks, to reattach.
  const firstAttempt = jobAttempt(ctx, earlier) === 1;
  let state = firstAttempt ? undefined : await docker.containerState(name);
  const restartAfterOutage = state !== undefined && killedByOutage(state, job.task.timeoutSeconds);
  if (state && restartAfterOutage) {
    ctx.log.warn(`container ${name} of job ${job.jobId} was killed (exit ${state.exitCode}) while no attempt watched it: starting it again, once`);
    await writeFile(path.join(jobDir, 'container-killed-by-outage.log'), await docker.logTail(state.id, 200)).catch(() => undefined);
    await removeTask(state.id);
    state = undefined;
  }
  const reattached = state !== undefined;
  let runtime = state?.labels[LABELS.runtime] ?? 'simple';
  let preload = state?.labels[PRELOAD_LABEL] as PreloadPath | undefined;
  // From before a fresh container starts (the worker's stream, open before the create), or from a
  // reattached one's start (a stream of its own: the daemon replays past events): no out-of-memory kill
  // slips by unseen.
  const oomWatch =
    !state && deps.oomEvents
      ? await deps.oomEvents.watch(name)
      : await watchOomEvents(docker, name, Math.floor((validMs(state?.startedAt) ?? Date.now()) / 1000) - 1);
  if (!state) {
    // Until its container exists, a fresh start that fails leaves nothing behind, its routes included.
    let exists = false;
    try {
      slot.release = await takeContainerSlot(deps.containerSlots, ctx, heartbeat, name).catch((error: unknown) => {
        if (ctx.cancellationDetails?.cancelRequested) throw new CancelledFailure(`job ${job.jobId} cancelled while it waited for a container slot`);
        throw error;
      });
      // A fresh start: nothing from an earlier, unfinished attempt may be mistaken for this one's output.
      rmSync(resultsDir, { recursive: true, force: true });
      mkdirSync(resultsDir, { recursive: true, mode: 0o777 });
      let dind: DindPlacement | undefined;
      if (storageDir) {
        const detected = await detectDindMode(docker, image);
        // Preparing an image set the first time takes as long as a `docker load`: heartbeats go on.
        const beat = setInterval(() => heartbeat({ preparing: name }), HEARTBEAT_MS);
        const storage = await provideDindStorage(deps, {
          image,
          archives,
          storageDir,
          runtimeHostConfig: detected.hostConfig,
          log: (line) => ctx.log.info(`job ${job.jobId}: ${line}`),
          signal: ctx.cancellationSignal,
        })
          .catch((error: unknown) => {
            if (ctx.cancellationSignal.aborted && ctx.cancellationDetails?.cancelRequested) {
              throw new CancelledFailure(`job ${job.jobId} cancelled while its DinD images were being prepared`);
            }
            throw error;
          })
          .finally(() => clearInterval(beat));
        preload = storage.preload;
        dind = { runtimeHostConfig: detected.hostConfig, runtimeName: detected.mode, storageDir: storage.mountDir, archives: storage.archives };
        runtime = `dind:${detected.mode}`;
      }
      /** Creates and starts the container, in a namespace lent now; on failure nothing of it is left, its namespace dropped. */
      const create = async () => {
        const body = taskContainerBody(
          { job, image, hostId: deps.hostId, resultsDir, dind, hostAddress, datasetDir: deps.datasetDir, netns: await netnsPool?.lease(name) },
          apiKey,
          access,
        );
        if (restartAfterOutage) body.Labels[OUTAGE_RESTART_LABEL] = 'true';
        if (preload) body.Labels[PRELOAD_LABEL] = preload;
        try {
          // 'conflict': another attempt won the race to create it; attach to that one below.
          return { started: await docker.createAndStart(name, body), labels: body.Labels };
        } catch (error) {
          await removeContainerAndStorage(docker, name, storageDir);
          await netnsPool?.discard(name);
          throw error;
        }
      };
      const created = await create().catch((error: unknown) => {
        if (!netnsPool) throw error;
        // The lent namespace may be the fault (its holder stopped with a daemon restart): once more in a
        // fresh one, in this attempt, so that a task restarted after an outage keeps its "restarted once" label.
        ctx.log.warn(`job ${job.jobId}: container ${name} did not start in its lent network namespace (${(error as Error).message}); trying a fresh one`);
        return create();
      });
      exists = true;
      const { started } = created;
      // Not inspected now: right after the start, the daemon holds the container's lock for a task that
      // exits at once (~0.1 s here under load). Docker's own StartedAt comes with the final inspect.
      if (started === 'conflict' && firstAttempt) {
        // A container of this job already here (the job came back to a host it left): the next
        // attempt inspects it and reattaches, or restarts it after an outage, as any retry does. Its
        // routes stay open, as for any attempt that steps aside from a running container.
        throw ApplicationFailure.retryable(
          `container ${name} of job ${job.jobId} exists already; the next attempt attaches to it`,
          FAILURE_TYPES.attemptAborted,
        );
      }
      state =
        started === 'conflict'
          ? await docker.containerState(name)
          : { id: started.id, running: true, exitCode: 0, startedAt: new Date().toISOString(), finishedAt: '', oomKilled: false, labels: created.labels };
      if (!state) throw ApplicationFailure.create({ type: FAILURE_TYPES.infrastructure, message: `container ${name} vanished right after it was started` });
    } catch (error) {
      if (!exists) closeAccess();
      await oomWatch.stop(false);
      throw error;
    }
  }
  const containerId = state.id;
  // records.jsonl lines go out as rewards while the task runs; the heartbeat says how far (records-follower.ts).
  const records = followTaskRecords(ctx, resultsDir, reattached, ctx.info.heartbeatDetails ?? earlier?.heartbeat);
  const beat = () => heartbeat({ containerId, records: records.position() });
  beat();

  const startedMs = Date.parse(state.startedAt) || Date.now();
  const deadlineMs = startedMs + job.task.timeoutSeconds * 1000;
  // Heartbeats go on until the logs are in: a task that printed a lot takes a while to drain.
  const beating = setInterval(beat, HEARTBEAT_MS);
  let log: LogCapture | undefined;
  let kind: ContainerOutcome['kind'] = 'exited';
  let oomKills = 0;
  let disk: DiskExceeded | undefined;
  let finalRewards: RewardBatch | undefined;
  const diskWatch = new AbortController();
  try {
    log = await captureContainerLog(docker, containerId, logFile);
    if (state.running) {
      const limitBytes = memoryBytes(job.task.resources.disk ?? DEFAULT_RESOURCES.disk);
      const measure = async () =>
        (await directoryBytes(resultsDir)) + (storageDir ? await dindStorageBytes(storageDir) : 0) + (await docker.writableLayerBytes(containerId));
      const ended = await waitUntilExitOrDeadline(docker, containerId, deadlineMs, ctx.cancelled, watchDiskUse(measure, limitBytes, diskWatch.signal));
      kind = ended.kind;
      disk = ended.disk;
    }
    if (kind === 'timed_out' || kind === 'disk_limit') await docker.kill(containerId);
    await drained(log);
    finalRewards = await records.finish();
    // Only a container seen to exit has a `die` event coming, which any `oom` of it precedes.
    oomKills = await oomWatch.stop(true);
  } catch (error) {
    if (ctx.cancellationSignal.aborted && ctx.cancellationDetails?.cancelRequested) {
      await docker.kill(containerId);
      if (log) await drained(log).catch(() => undefined);
      await removeTask(containerId);
      closeAccess();
      throw new CancelledFailure(`job ${job.jobId} cancelled; container ${name} killed`);
    }
    if (ctx.cancellationSignal.aborted) {
      // Not the run's cancel: the server stopped accepting this attempt (heartbeat timed out while it
      // was down, attempt superseded) or the worker is shutting down. The container keeps running and
      // its routes stay open, for the next attempt to reattach to; this one only steps aside.
      throw ApplicationFailure.retryable(
        `attempt ${ctx.info.attempt} of job ${job.jobId} was aborted (${abortReason(ctx.cancellationDetails)}); container ${name} left running for the next attempt`,
        FAILURE_TYPES.attemptAborted,
      );
    }
    throw error;
  } finally {
    // Once drained, stopping is a no-op; after an error it frees the stream the error left open.
    await log?.stop().catch(() => undefined);
    await oomWatch.stop(false);
    diskWatch.abort();
    records.stop();
    clearInterval(beating);
  }

  const final = (await docker.containerState(containerId)) ?? state;
  if (kind === 'exited' && (await killedFromOutside(docker, final, job.task.timeoutSeconds))) {
    // Left in place, routes open: the next attempt finds it stopped and starts it again, once.
    throw ApplicationFailure.retryable(
      `container ${name} of job ${job.jobId} was killed from outside BenchRouter (exit ${final.exitCode}), as a stopping Docker daemon does`,
      FAILURE_TYPES.containerKilled,
    );
  }
  await removeTask(containerId);
  const usage = closeAccess();
  const dockerStartedMs = validMs(final.startedAt) ?? startedMs;
  return {
    kind,
    ...(disk ? { disk } : {}),
    exitCode: final.exitCode,
    oomKilled: final.oomKilled || oomKills > 0,
    oomKills: Math.max(oomKills, final.oomKilled ? 1 : 0),
    startedAt: new Date(dockerStartedMs).toISOString(),
    // Docker can stamp a container that exits at once as finished a hair before it started.
    finishedAt: new Date(Math.max(dockerStartedMs, Date.parse(validDate(final.finishedAt) ?? new Date().toISOString()))).toISOString(),
    lastLogLine: keepLogTail(jobDir, jobSecrets(job, deps.gateway?.instance)),
    reattached,
    runtime,
    ...(preload ? { preload } : {}),
    ...(usage ? { usage } : {}),
    ...(finalRewards ? { rewards: finalRewards } : {}),
  };
}

/** A container slot of this host (none to take without a bound), heartbeating while it waits for one. */
async function takeContainerSlot(
  slots: ContainerSlots | undefined,
  ctx: Context,
  heartbeat: ReturnType<typeof hostHeartbeat>,
  name: string,
): Promise<(() => void) | undefined> {
  if (!slots) return undefined;
  const beat = setInterval(() => heartbeat({ waitingForSlot: name }), HEARTBEAT_MS);
  try {
    return await slots.acquire(ctx.cancellationSignal);
  } finally {
    clearInterval(beat);
  }
}

/** Waits for the log stream to close after the container stopped; a stream that hangs is cut. */
async function drained(log: LogCapture): Promise<void> {
  const timer = new AbortController();
  try {
    if ((await Promise.race([log.finished, sleep(LOG_DRAIN_MS, 'late' as const, { signal: timer.signal })])) === 'late') await log.stop();
  } finally {
    timer.abort();
  }
}

/** Why the SDK aborted an attempt, for the log: the flags it sets are exclusive in practice. */
function abortReason(details: ActivityCancellationDetails | undefined): string {
  const flags = details ? (['notFound', 'timedOut', 'workerShutdown', 'paused', 'reset'] as const).filter((flag) => details[flag]) : [];
  return flags.length ? flags.join(', ') : 'no reason given';
}

/** The container goes first: a DinD daemon's storage may only go once nothing uses it. */
async function removeContainerAndStorage(docker: DockerEngine, nameOrId: string, storageDir: string | undefined): Promise<void> {
  await docker.remove(nameOrId);
  if (storageDir) removeDindStorage(storageDir);
}

async function waitUntilExitOrDeadline(
  docker: DockerEngine,
  containerId: string,
  deadlineMs: number,
  cancelled: Promise<never>,
  diskExceeded: Promise<DiskExceeded>,
): Promise<{ kind: ContainerOutcome['kind']; disk?: DiskExceeded }> {
  // Aborted on the way out, whichever way the race ends: the daemon's wait request is not left open.
  const waiting = new AbortController();
  try {
    return await Promise.race([
      docker.wait(containerId, waiting.signal).then(() => ({ kind: 'exited' as const })),
      sleep(Math.max(0, deadlineMs - Date.now()), { kind: 'timed_out' as const }, { signal: waiting.signal }),
      diskExceeded.then((disk) => ({ kind: 'disk_limit' as const, disk })),
      cancelled,
    ]);
  } finally {
    waiting.abort();
  }
}

function validMs(text: string | undefined): number | undefined {
  const ms = text ? Date.parse(text) : NaN;
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

function validDate(text: string): string | undefined {
  const ms = Date.parse(text);
  return Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : undefined;
}
