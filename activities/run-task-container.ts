// runTaskContainer: starts a job's task on this host's task engine (engines/) or, after a worker crash,
// reattaches to it; heartbeats while it runs, kills it at the task's timeout, streams its logs (capped)
// into the job's artifacts, counts its out-of-memory kills and removes it. Benchmark outcomes (exit code,
// timeout, OOM kills) are returned, never thrown: they are final. All an attempt acquires is on one
// cleanup stack, released however it ends, but for what it leaves to the next attempt. The engine does
// what is the engine's: nothing here speaks to Docker (eslint.config.js keeps it so).

import { CancelledFailure, Context } from '@temporalio/activity';
import { ApplicationFailure, type ActivityCancellationDetails } from '@temporalio/common';
import { mkdirSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_RESOURCES } from '../contract/benchmark-schema.js';
import { FAILURE_TYPES } from '../runs/failure-types.js';
import { JOB_FILES, jobArtifactsDir, jobResultsDir } from '../runs/job-artifacts.js';
import type { Reward, RewardBatch } from '../runs/rewards.js';
import type { JobSpec, JobUsage } from '../runs/run-spec.js';
import { startBudgetReports } from './budget-reports.js';
import { CleanupStack } from './cleanup-stack.js';
import { keepLogTail } from './container-log-tail.js';
import type { ContainerSlots } from './container-slots.js';
import type { JobAttempts } from './job-attempts.js';
import { containerNameFor, LABELS, memoryBytes, taskSpec, type PreloadPath } from './container-spec.js';
import { directoryBytes, watchDiskUse, type DiskExceeded } from './disk-watchdog.js';
import { taskTimeMs, type AttemptScope, type LogCapture, type RunningTask, type TaskEngine } from './engines/engine.js';
import { openLoopbackEndpoints, openModelAccess, type ModelAccessDeps, type ModelRoutes } from './model-access.js';
import { killedByOutage, neverStarted, OUTAGE_RESTART_LABEL } from './outage-restart.js';
import { followTaskRecords, type RecordsFollower } from './records-follower.js';
import { carriedInstances, readCarriedOver, remainingInstances, saveCarriedOver, type CarriedOver } from './carried-instances.js';
import { jobSecrets } from './redact-secrets.js';

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
  /**
   * For a shard resumed instance by instance: the instances its container did not evaluate again, as the job
   * held their rewards (activities/carried-instances.ts), and the job that scored them when it was another's.
   * `runtime` is `none` when nothing was left to evaluate and no container ran.
   */
  carried?: { rewards: Reward[]; from?: string };
}

export interface ContainerDeps extends ModelAccessDeps {
  /** Where this host's tasks run (engines/registry.ts): the host's setting, not the benchmark's. */
  engine: TaskEngine;
  /** Host directory of datasets mounted read-only into every task (absent: none). */
  datasetDir?: string;
  /** The host's bound on containers at once (container-slots.ts); none: unbounded here. */
  containerSlots?: ContainerSlots;
  /** This process's attempts of each job, one at a time, and the containers they left (job-attempts.ts); none: not tracked. */
  jobAttempts?: JobAttempts;
}

const HEARTBEAT_MS = 2000;
/** How long the log stream may take to close once the container stopped, before it is cut. */
const LOG_DRAIN_MS = 60_000;

export async function runTaskContainer(deps: ContainerDeps, input: RunContainerInput): Promise<ContainerOutcome> {
  return new TaskAttempt(deps, input).run();
}

/** How the container's run ended, as followed. */
type Ended = { kind: ContainerOutcome['kind']; disk?: DiskExceeded; rewards?: RewardBatch };

/** One attempt at a job's container: all it acquires goes on its cleanup stack. */
class TaskAttempt {
  private readonly ctx = Context.current();
  private readonly cleanup = new CleanupStack();
  private readonly name: string;
  private readonly jobDir: string;
  private readonly resultsDir: string;
  /** The attempt as the engine knows it. */
  private readonly scope: AttemptScope;
  /** Whether the job's container is on this host: `unknown` until looked for (a retry may find it running). */
  private container: 'unknown' | 'none' | 'here' = 'unknown';
  /** What the heartbeats say now; none while undefined. */
  private beatDetails?: () => Record<string, unknown>;

  constructor(
    private readonly deps: ContainerDeps,
    private readonly input: RunContainerInput,
  ) {
    const { job, image, archives = [] } = input;
    this.name = containerNameFor(job.jobId, deps.hostId);
    this.jobDir = jobArtifactsDir(deps.artifactsRoot, job);
    this.resultsDir = jobResultsDir(deps.artifactsRoot, job);
    this.scope = { job, image, archives, name: this.name, ctx: this.ctx, beatingWhile: this.beatingWhile };
  }

  async run(): Promise<ContainerOutcome> {
    try {
      return await this.attempt();
    } catch (error) {
      // A container here (or maybe here: a retry that could not look) stays, its routes open, for the
      // next attempt to reattach to or judge; only the run's cancel takes it. A failed fresh start leaves nothing.
      if (this.container !== 'none' && !cancelRequested(this.ctx)) {
        const kept = this.cleanup.keep();
        // Watched until the job's next attempt here takes it over, or removed once the job is elsewhere (job-attempts.ts).
        if (this.container === 'here') this.deps.jobAttempts?.leave(this.name, this.input.job.jobId, () => kept.release());
      }
      await this.cleanup.release().catch((failed: unknown) => this.ctx.log.warn(`job ${this.input.job.jobId}: cleanup of a failed attempt: ${String(failed)}`));
      throw error;
    }
  }

  private async attempt(): Promise<ContainerOutcome> {
    const { ctx, deps, name, cleanup, scope } = this;
    const { engine } = deps;
    const { job, earlier } = this.input;
    // The server gave up on this attempt before it got here (its host was starved): it starts nothing.
    if (ctx.cancellationSignal.aborted && !cancelRequested(ctx)) throw this.aborted('before it looked for its container');
    const heartbeat = hostHeartbeat(ctx, deps.hostId);
    const ticker = setInterval(() => this.beatDetails && heartbeat(this.beatDetails()), HEARTBEAT_MS);
    cleanup.defer('heartbeats', () => clearInterval(ticker));
    // Routes are (re)registered on every attempt: after a worker restart the same tokens come back.
    const routes = openModelAccess(deps, job, this.jobDir);
    cleanup.defer('gateway routes', () => routes.close(), { keepable: true });
    if (job.task.docker || job.task.network !== 'host') await openLoopbackEndpoints(deps, job, routes.access);
    // With a run budget: what the rest of the run spent, before the container's first call (budget-reports.ts).
    const reports = await startBudgetReports(ctx, deps.gateway?.instance, job);
    cleanup.defer('budget reports', () => reports.stop());

    // A first attempt finds no container of this job on this host (a name taken anyway is caught at the
    // create, below): one inspect fewer per job. A retry looks, to reattach.
    const firstAttempt = jobAttempt(ctx, earlier) === 1;
    let found = firstAttempt ? undefined : await engine.find(scope);
    // A container found but not followed: killed while no attempt watched it (started again, once), or left
    // by an attempt that could neither start nor remove it (started afresh; a restart it was to be stays one).
    const killed = found !== undefined && killedByOutage(found.seen, job.task.timeoutSeconds);
    const unstarted = found !== undefined && !killed && neverStarted(found.seen);
    const restartAfterOutage = killed || (unstarted && found?.seen.labels[OUTAGE_RESTART_LABEL] !== undefined);
    if (found && (killed || unstarted)) {
      ctx.log.warn(
        killed
          ? `container ${name} of job ${job.jobId} was killed (exit ${found.seen.exitCode}) while no attempt watched it: starting it again, once`
          : `container ${name} of job ${job.jobId} was created but never started: starting it afresh`,
      );
      if (killed) await writeFile(path.join(this.jobDir, 'container-killed-by-outage.log'), await found.logTail(200)).catch(() => undefined);
      await found.remove();
      found = undefined;
    }
    this.container = found ? 'here' : 'none';
    // Followed by this attempt from here on (or gone): no longer a container left unattended.
    deps.jobAttempts?.adopt(name);
    const reattached = found !== undefined;
    // A fresh container of a shard skips the instances its job already has rewards for; with none left, none
    // runs. A reattached one was started without those its starting attempt saved (carried-instances.ts).
    const resume = found ? readCarriedOver(this.jobDir) : await carriedInstances(ctx, job, firstAttempt);
    const carried = resume && resume.rewards.length > 0 ? resume : undefined;
    if (carried && remainingInstances(job, carried).length === 0) return this.nothingLeft(carried, routes);
    // From before a fresh container starts, or from a reattached one's start: no out-of-memory kill slips by unseen.
    const oomWatch = await engine.watchOom(scope, found);
    cleanup.defer('OOM watch', () => oomWatch.stop(false));
    const reattachedTo = found;
    if (reattachedTo) cleanup.defer(`container ${name}`, () => reattachedTo.remove(), { keepable: true });
    if (!found) saveCarriedOver(this.jobDir, resume);
    const task = found ?? (await this.startFresh(routes, restartAfterOutage, carried));
    const state = task.seen;

    // records.jsonl lines go out as rewards while the task runs; the heartbeat says how far (records-follower.ts).
    // A resumed shard's own lines come after those its job already holds.
    const records = followTaskRecords(ctx, this.resultsDir, reattached, ctx.info.heartbeatDetails ?? earlier?.heartbeat, resume?.throughLine ?? 0);
    cleanup.defer('records follower', () => records.stop());
    // Heartbeats go on until the container is removed: a task that printed a lot takes a while to drain.
    this.beatDetails = () => ({ containerId: task.id, records: records.position() });
    heartbeat(this.beatDetails());
    const startedMs = Date.parse(state.startedAt) || Date.now();
    const ended = await this.follow(task, startedMs + job.task.timeoutSeconds * 1000, records);
    // Only a container seen to exit has a `die` event coming, which any `oom` of it precedes.
    const oomKills = await oomWatch.stop(true);

    const final = (await task.state()) ?? state;
    if (ended.kind === 'exited' && (await task.killedFromOutside(final, job.task.timeoutSeconds, oomWatch.streamLost()))) {
      // Left in place, routes open: the next attempt finds it stopped and starts it again, once.
      throw ApplicationFailure.retryable(
        `container ${name} of job ${job.jobId} was killed from outside BenchRouter (exit ${final.exitCode}), as a stopping Docker daemon does`,
        FAILURE_TYPES.containerKilled,
      );
    }
    // The container and what it held, the slot, the routes: the outcome reports what they leave.
    await cleanup.release();
    const usage = routes.close();
    const engineStartedMs = taskTimeMs(final.startedAt) ?? startedMs;
    const preload = final.labels[LABELS.preload] as PreloadPath | undefined;
    return {
      kind: ended.kind,
      ...(ended.disk ? { disk: ended.disk } : {}),
      exitCode: final.exitCode,
      oomKilled: final.oomKilled || oomKills > 0,
      oomKills: Math.max(oomKills, final.oomKilled ? 1 : 0),
      startedAt: new Date(engineStartedMs).toISOString(),
      // Docker can stamp a container that exits at once as finished a hair before it started.
      finishedAt: new Date(Math.max(engineStartedMs, taskTimeMs(final.finishedAt) ?? Date.now())).toISOString(),
      lastLogLine: keepLogTail(this.jobDir, jobSecrets(job, deps.gateway?.instance)),
      reattached,
      runtime: final.labels[LABELS.runtime] ?? 'simple',
      ...(preload ? { preload } : {}),
      ...(usage ? { usage } : {}),
      ...(ended.rewards ? { rewards: ended.rewards } : {}),
      ...(carried ? { carried: { rewards: carried.rewards, ...(carried.from ? { from: carried.from } : {}) } } : {}),
    };
  }

  /** Every instance of the shard carried over: no container runs, and the outcome is what the job already holds. */
  private async nothingLeft(carried: CarriedOver, routes: ModelRoutes): Promise<ContainerOutcome> {
    this.ctx.log.info(`job ${this.input.job.jobId}: its ${carried.rewards.length} instances were all scored before; no container runs`);
    await this.cleanup.release();
    const usage = routes.close();
    const now = new Date().toISOString();
    // A result.json of an earlier, unfinished container is not this job's: the harvest folds the carried ones.
    rmSync(this.resultsDir, { recursive: true, force: true });
    mkdirSync(this.resultsDir, { recursive: true, mode: 0o777 });
    return {
      kind: 'exited',
      exitCode: 0,
      oomKilled: false,
      oomKills: 0,
      startedAt: now,
      finishedAt: now,
      lastLogLine: '',
      reattached: false,
      runtime: 'none',
      ...(usage ? { usage } : {}),
      carried: { rewards: carried.rewards, ...(carried.from ? { from: carried.from } : {}) },
    };
  }

  /** A container of the job's own: a slot of the host's, then the engine starts it. */
  private async startFresh(routes: ModelRoutes, restartAfterOutage: boolean, carried: CarriedOver | undefined): Promise<RunningTask> {
    const { ctx, deps, name, cleanup, resultsDir } = this;
    const { job, image } = this.input;
    if (deps.containerSlots) {
      const release = await this.beatingWhile({ waitingForSlot: name }, deps.containerSlots.acquire(ctx.cancellationSignal)).catch((error: unknown) => {
        if (ctx.cancellationDetails?.cancelRequested) throw new CancelledFailure(`job ${job.jobId} cancelled while it waited for a container slot`);
        throw error;
      });
      // Given back however the attempt ends, even when its container runs on for the next one.
      cleanup.defer('container slot', release);
    }
    if (ctx.cancellationSignal.aborted && !cancelRequested(ctx)) throw this.aborted('before it started its container');
    cleanup.defer(`container ${name}`, () => deps.engine.remove(this.scope), { keepable: true });
    // A fresh start: nothing from an earlier, unfinished attempt may be mistaken for this one's output.
    rmSync(resultsDir, { recursive: true, force: true });
    mkdirSync(resultsDir, { recursive: true, mode: 0o777 });
    const remaining = carried ? remainingInstances(job, carried) : undefined;
    const spec = taskSpec(
      { job, image, hostId: deps.hostId, resultsDir, datasetDir: deps.datasetDir, ...(remaining ? { remaining } : {}) },
      routes.apiKey,
      routes.access,
    );
    if (restartAfterOutage) spec.labels[OUTAGE_RESTART_LABEL] = 'true';
    const started = await deps.engine.start(spec, this.scope);
    this.container = 'here';
    if (started === 'conflict') {
      // A container of this job already here (the job came back to a host it left, a start that could not
      // be undone, another attempt's): the next attempt inspects it and reattaches, restarts it after an
      // outage or starts it afresh, as any retry does. Its routes stay open, as for any attempt that steps
      // aside from a running container.
      throw ApplicationFailure.retryable(`container ${name} of job ${job.jobId} exists already; the next attempt attaches to it`, FAILURE_TYPES.attemptAborted);
    }
    return started;
  }

  /**
   * Follows the container to its exit, its deadline or its disk limit (killing it for either), its log
   * into the job's artifacts, then reads the rest of its records. The run's cancel kills it.
   */
  private async follow(task: RunningTask, deadlineMs: number, records: RecordsFollower): Promise<Ended> {
    const { ctx, name } = this;
    const { job } = this.input;
    let log: LogCapture | undefined;
    try {
      log = await task.followLog(path.join(this.jobDir, JOB_FILES.containerLog), jobSecrets(job, this.deps.gateway?.instance));
      // Once drained, stopping is a no-op; after an error it frees the stream the error left open.
      this.cleanup.defer('log capture', () => log?.stop().catch(() => undefined));
      let ended: Ended = { kind: 'exited' };
      if (task.seen.running) {
        const limitBytes = memoryBytes(job.task.resources.disk ?? DEFAULT_RESOURCES.disk);
        const measure = async () => (await directoryBytes(this.resultsDir)) + (await task.heldBytes()) + (await task.writableBytes());
        ended = await waitForEnd(ctx, task, deadlineMs, log.finished, (signal) => watchDiskUse(measure, limitBytes, signal));
      }
      if (ended.kind !== 'exited') await task.kill();
      await drained(log);
      return { ...ended, rewards: await records.finish() };
    } catch (error) {
      if (cancelRequested(ctx)) {
        await task.kill();
        if (log) await drained(log).catch(() => undefined);
        throw new CancelledFailure(`job ${job.jobId} cancelled; container ${name} killed`);
      }
      if (ctx.cancellationSignal.aborted) {
        // Not the run's cancel: the server stopped accepting this attempt (heartbeat timed out while it
        // was down, attempt superseded) or the worker is shutting down. The container keeps running and
        // its routes stay open, for the next attempt to reattach to; this one only steps aside.
        throw this.aborted(`container ${name} left running for the next attempt`);
      }
      throw error;
    }
  }

  /** This attempt stepping aside, the server having stopped accepting it: `what` says what it leaves. */
  private aborted(what: string): ApplicationFailure {
    const { ctx } = this;
    return ApplicationFailure.retryable(
      `attempt ${ctx.info.attempt} of job ${this.input.job.jobId} was aborted (${abortReason(ctx.cancellationDetails)}); ${what}`,
      FAILURE_TYPES.attemptAborted,
    );
  }

  /** Heartbeats with `details` while `work` goes on (a wait whose length the host or the task decides). */
  private readonly beatingWhile = async <T>(details: Record<string, unknown>, work: Promise<T>): Promise<T> => {
    this.beatDetails = () => details;
    try {
      return await work;
    } finally {
      this.beatDetails = undefined;
    }
  };
}

/**
 * Until the container exits, passes its deadline or its disk limit, or the attempt is cancelled; or the
 * daemon goes away (its log stream breaks), which fails the attempt so that the next one reattaches.
 */
export async function waitForEnd(
  ctx: Pick<Context, 'cancelled'>,
  task: Pick<RunningTask, 'wait' | 'state'>,
  deadlineMs: number,
  logFinished: Promise<unknown>,
  watchDisk: (signal: AbortSignal) => Promise<DiskExceeded>,
): Promise<Ended> {
  // Aborted on the way out, whichever way the race ends: the daemon's wait request, the deadline's
  // timer and the disk watchdog end with it.
  const ending = new AbortController();
  try {
    return await Promise.race([
      task.wait(ending.signal).then(() => ({ kind: 'exited' as const })),
      // A daemon that stops with --live-restore leaves the wait request unanswered (its answer had begun:
      // the body comes when the container exits), until the deadline. Its log stream breaks at once, and
      // ends when the container stops: then the container's state says what the wait would have.
      logFinished.then(() => stoppedAfterLog(task, ending.signal)),
      sleep(Math.max(0, deadlineMs - Date.now()), { kind: 'timed_out' as const }, { signal: ending.signal }),
      watchDisk(ending.signal).then((disk) => ({ kind: 'disk_limit' as const, disk })),
      ctx.cancelled,
    ]);
  } finally {
    ending.abort();
  }
}

/** How long the wait request gets to answer after the log stream ended, before the container is inspected instead. */
const WAIT_AFTER_LOG_MS = 2_000;

/** Once the log stream has ended: exited, when the wait request does not say so first and the daemon does. */
async function stoppedAfterLog(task: Pick<RunningTask, 'state'>, signal: AbortSignal): Promise<{ kind: 'exited' }> {
  for (;;) {
    await sleep(WAIT_AFTER_LOG_MS, undefined, { signal });
    const state = await task.state();
    if (!state?.running) return { kind: 'exited' };
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

/** The run's cancel, not the SDK aborting this attempt for reasons of its own (see abortReason). */
function cancelRequested(ctx: Context): boolean {
  return ctx.cancellationSignal.aborted && ctx.cancellationDetails?.cancelRequested === true;
}

/** Why the SDK aborted an attempt, for the log: the flags it sets are exclusive in practice. */
function abortReason(details: ActivityCancellationDetails | undefined): string {
  const flags = details ? (['notFound', 'timedOut', 'workerShutdown', 'paused', 'reset'] as const).filter((flag) => details[flag]) : [];
  return flags.length ? flags.join(', ') : 'no reason given';
}
