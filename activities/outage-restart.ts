// A job's container that an outage killed (the Docker daemon stopped without --live-restore, the
// machine rebooted) is started again, once, instead of being reported as the benchmark's own exit.

import { taskTimeMs, type TaskState } from './engines/engine.js';

/** What the engine recorded of a task's end since `sinceIso`: the signals of its kills, and whether it recorded the task dying (DockerEngine.endEvents). */
export interface EndEvents {
  endEvents(nameOrId: string, sinceIso: string): Promise<{ kills: string[]; died: boolean }>;
}

/** Set on a container started in place of one an outage killed, so that it is not restarted twice. */
export const OUTAGE_RESTART_LABEL = 'benchrouter.outage-restart';

/** 128 + SIGKILL, 128 + SIGTERM: what a daemon shutting its containers down, or a host going down, leaves. */
const KILLED_BY_SIGNAL = new Set([137, 143]);

/**
 * True when a container that an attempt finds already stopped was ended by the infrastructure
 * rather than by its benchmark or by BenchRouter: killed by a signal, not by the OOM killer, before
 * the task's deadline (BenchRouter's timeout kill comes after it), and not already a restart. Only
 * an attempt that lost sight of its container (daemon or worker gone), or one that saw it killed
 * from outside, leaves a stopped container for the next attempt to judge.
 */
export function killedByOutage(state: TaskState, timeoutSeconds: number): boolean {
  if (state.running || state.labels[OUTAGE_RESTART_LABEL] !== undefined) return false;
  const started = Date.parse(state.startedAt);
  const finished = Date.parse(state.finishedAt);
  if (!Number.isFinite(started) || !Number.isFinite(finished)) return false;
  return KILLED_BY_SIGNAL.has(state.exitCode) && !state.oomKilled && finished < started + timeoutSeconds * 1000;
}

/**
 * For the attempt that watched its container exit: true when the exit was a kill that did not come
 * from BenchRouter (which kills only at the deadline or on the run's cancel, and reports those
 * itself), such as the daemon stopping its containers on the way down. A benchmark whose own child
 * was killed can exit 137 too, but then the daemon recorded the container's `die` and no `kill`.
 *
 * A daemon with neither event cannot say. When the attempt saw the daemon go away meanwhile
 * (`daemonWentAway`: its event stream broke), the daemon was restarted since the container stopped
 * (its events live in memory), and the exit counts as an outage's kill: an attempt whose wait the daemon
 * answered on its way down may ask about the container only once a new daemon is up. Otherwise the
 * daemon's event buffer (the last 256 events) has moved past the container on a busy host, and the exit
 * stays the benchmark's own, as it was reported before.
 */
export async function killedFromOutside(docker: EndEvents, state: TaskState, timeoutSeconds: number, daemonWentAway: boolean): Promise<boolean> {
  if (!killedByOutage(state, timeoutSeconds)) return false;
  const { kills, died } = await docker.endEvents(state.id, state.startedAt);
  return kills.length > 0 || (!died && daemonWentAway);
}

/**
 * True for a container that was created but never started: an attempt whose start failed, and whose
 * removal of it failed too (a daemon going away under it). It never ran, so it is started again rather
 * than followed, which would read its exit code (0, or the 12x of a failed start) as the task's.
 */
export function neverStarted(state: TaskState): boolean {
  return !state.running && taskTimeMs(state.startedAt) === undefined;
}
