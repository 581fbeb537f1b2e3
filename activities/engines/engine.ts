// The seam between a task attempt (activities/run-task-container.ts) and the engine its task runs on: a
// worker host's TaskEngine starts a job's task from an engine-neutral TaskSpec, or finds the one an earlier
// attempt (or the worker before a restart) left, and hands back a RunningTask that the attempt follows to its
// end. Which engine a host uses is its setting (`br worker --engine`, BENCHROUTER_ENGINE), not the
// benchmark's; the engines are registered in registry.ts, one folder each (docker/ is the first).
//
// Nothing here names Docker: the attempt imports this file and none of an engine's own.

import type { Context } from '@temporalio/activity';
import type { JobSpec } from '../../runs/run-spec.js';

/** A task as its engine reports it. Times are ISO strings; an engine's "never" (Docker's year 1) reads as none through taskTimeMs. */
export interface TaskState {
  id: string;
  running: boolean;
  exitCode: number;
  startedAt: string;
  finishedAt: string;
  /** True when the task's main process was killed for memory. */
  oomKilled: boolean;
  labels: Record<string, string>;
}

/** A time as an engine gives it, in ms; undefined for none and for a zero time (`0001-01-01T00:00:00Z`: never happened). */
export function taskTimeMs(text: string | undefined): number | undefined {
  const ms = text ? Date.parse(text) : NaN;
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/** A host directory the task sees at `target`. */
export interface TaskMount {
  source: string;
  target: string;
  readOnly: boolean;
}

/**
 * What to run, in no engine's terms (activities/container-spec.ts builds it from the job). The engine
 * places it: its network, the name it gives the host, a DinD task's daemon storage and image archives.
 */
export interface TaskSpec {
  image: string;
  /** One shell command, run with `sh -c` in `workingDir`. */
  command: string;
  workingDir: string;
  /** In this order; a name is set once. */
  env: Record<string, string>;
  /** What the task is found by again (its job, host, run...); the engine may add labels of its own. */
  labels: Record<string, string>;
  resources: { memoryBytes: number; cpus: number; pids?: number };
  mounts: TaskMount[];
  /**
   * `isolated`: a network of the task's own, from which the host (its model gateway) is reachable by the
   * name HOST_ALIAS (container-spec.ts); `host`: the host's own network.
   */
  network: 'isolated' | 'host';
  /** The contract's `docker: true`: the task runs a Docker daemon of its own (in the Docker engine, DinD mode). */
  docker: boolean;
}

/** One attempt at a job's task on this host, as the engine needs to know it. */
export interface AttemptScope {
  job: JobSpec;
  image: string;
  /** The task's name on this host, the same for every attempt of the job here (containerNameFor). */
  name: string;
  /** A DinD task's preload archives (from ensureImage). */
  archives: string[];
  ctx: Context;
  /** Heartbeats with `details` while `work` goes on: a wait as long as the task's images take. */
  beatingWhile<T>(details: Record<string, unknown>, work: Promise<T>): Promise<T>;
}

export interface LogSummary {
  /** Bytes of output read (a follower slower than the task misses what the engine's capped copy rotated away). */
  bytes: number;
  /** Bytes read but not written to the file. */
  dropped: number;
}

export interface LogCapture {
  /** Resolves when the engine closes the stream (the task stopped) and the file is complete; rejects when the stream breaks. */
  finished: Promise<LogSummary>;
  /** Stops following now and completes the file with what arrived (a cancelled or stuck stream). */
  stop(): Promise<LogSummary>;
}

export interface OomWatch {
  /**
   * Stops watching and gives the number of out-of-memory kills seen in the task, its main process or
   * another. After the task stopped it first waits (briefly) for the engine's word that it ended.
   */
  stop(afterExit?: boolean): Promise<number>;
  /** True once what feeds this watch broke after the watch began: the engine went away meanwhile. */
  streamLost(): boolean;
}

/** A job's task on an engine, started by this attempt or found again. */
export interface RunningTask {
  readonly id: string;
  /** What was known of it when found or started (a fresh start is not inspected: its StartedAt is the worker's clock). */
  readonly seen: TaskState;
  /** Its state now; undefined once it is gone. */
  state(): Promise<TaskState | undefined>;
  /** Resolves with its exit code when it stops. No timeout: a task may run for hours. */
  wait(signal?: AbortSignal): Promise<number>;
  /** Kills it; one that is not running (or gone) is fine. */
  kill(): Promise<void>;
  /** Follows its output (from its first line) into `file`, capped, with every one of `secrets` cut from it (container-log.ts). */
  followLog(file: string, secrets: readonly string[]): Promise<LogCapture>;
  /** Its last `lines` lines, timestamped, read once. */
  logTail(lines: number): Promise<Buffer>;
  /** Bytes it wrote to its own filesystem (a container's writable layer). */
  writableBytes(): Promise<number>;
  /** Bytes it holds beside its results and its own filesystem (a DinD daemon's storage). */
  heldBytes(): Promise<number>;
  /**
   * For the attempt that watched it exit (`final`): true when the exit was a kill that came neither from
   * the benchmark nor from BenchRouter, as the engine going down kills its tasks (outage-restart.ts).
   * `engineWentAway`: the attempt saw the engine's event stream break meanwhile.
   */
  killedFromOutside(final: TaskState, timeoutSeconds: number, engineWentAway: boolean): Promise<boolean>;
  /** Removes it and gives back what it held with it (its storage, its lent namespace). */
  remove(): Promise<void>;
}

/** A worker host's engine: where its tasks run. */
export interface TaskEngine {
  readonly name: string;
  /** The job's task on this host (by the attempt's name), as an earlier attempt or the worker before a restart left it; undefined when none. */
  find(attempt: AttemptScope): Promise<RunningTask | undefined>;
  /**
   * Readies what a fresh task needs, then starts `spec` as the attempt's task; `conflict` when a task of
   * its name exists. Whatever a failed start leaves, `remove` takes.
   */
  start(spec: TaskSpec, attempt: AttemptScope): Promise<RunningTask | 'conflict'>;
  /** Removes the attempt's task by its name, with what it held: what a start left, however far it got. */
  remove(attempt: AttemptScope): Promise<void>;
  /**
   * Counts out-of-memory kills of the attempt's task: from before a fresh one starts, or from a `found`
   * one's start on, so that no kill slips by unseen.
   */
  watchOom(attempt: AttemptScope, found?: RunningTask): Promise<OomWatch>;
}

/** A task an engine holds for a worker host, as the worker's start-up sweep sees it (workers/sweep-orphans.ts). */
export interface HostTask {
  /** What the sweep calls it: `pod/<name>`, say. */
  name: string;
  /** Its labels as the task was given them (LABELS.job names its job). */
  labels: Record<string, string>;
  /** Removes it with what it holds; one already gone is fine. */
  remove(): Promise<void>;
}

/** An engine as registered (registry.ts): opened once per worker host, with what that host gives it. */
export interface EngineKind<Host> {
  name: string;
  open(host: Host): TaskEngine;
  /**
   * The tasks this engine holds for the host `hostId`, which the worker's start-up sweep removes when their job no
   * longer runs there. Absent for Docker: the sweep lists every host's Docker containers itself (every host has a
   * Docker daemon, and its DinD storage goes with them).
   */
  tasksOfHost?(host: Host, hostId: string): Promise<HostTask[]>;
}
