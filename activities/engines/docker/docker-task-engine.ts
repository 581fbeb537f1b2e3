// The Docker engine: a task is a container on this host's Docker daemon, in Simple or DinD mode (modes.ts)
// as the task's spec asks, built from the spec (container-body.ts). Its out-of-memory kills come from the
// daemon's events (oom-events.ts), its output from the daemon's log stream (container-log.ts), and its
// outage verdicts from the daemon's own record of its end (outage-restart.ts).

import { captureContainerLog } from '../../container-log.js';
import type { ContainerState, DockerEngine } from '../../docker-engine.js';
import { watchOomEvents } from '../../oom-events.js';
import { killedFromOutside } from '../../outage-restart.js';
import { taskTimeMs, type AttemptScope, type EngineKind, type OomWatch, type RunningTask, type TaskEngine, type TaskSpec, type TaskState } from '../engine.js';
import { containerBody } from './container-body.js';
import { modeFor, type DockerEngineDeps, type DockerMode } from './modes.js';

export const dockerEngine: EngineKind<DockerEngineDeps> = { name: 'docker', open: (deps) => new DockerTaskEngine(deps) };

class DockerTaskEngine implements TaskEngine {
  readonly name = 'docker';

  constructor(private readonly deps: DockerEngineDeps) {}

  /** The attempt's container in the mode of its job's task. */
  private mode(attempt: AttemptScope): DockerMode {
    return modeFor(attempt.job.task).open({ ...attempt, deps: this.deps });
  }

  async find(attempt: AttemptScope): Promise<RunningTask | undefined> {
    const state = await this.deps.docker.containerState(attempt.name);
    return state && new DockerTask(this.deps.docker, attempt.name, state, this.mode(attempt));
  }

  async start(spec: TaskSpec, attempt: AttemptScope): Promise<RunningTask | 'conflict'> {
    const mode = this.mode(attempt);
    let labels: Record<string, string> = {};
    const started = await mode.start((placement) => {
      const body = containerBody(spec, placement);
      labels = body.Labels;
      return body;
    });
    if (started === 'conflict') return started;
    // Not inspected: right after the start, the daemon holds the container's lock for a task that exits at
    // once (~0.1 s here under load). Docker's own StartedAt comes with the final inspect.
    const seen = { id: started.id, running: true, exitCode: 0, startedAt: new Date().toISOString(), finishedAt: '', oomKilled: false, labels };
    return new DockerTask(this.deps.docker, attempt.name, seen, mode);
  }

  remove(attempt: AttemptScope): Promise<void> {
    return this.mode(attempt).remove(attempt.name);
  }

  async watchOom(attempt: AttemptScope, found?: RunningTask): Promise<OomWatch> {
    // From before a fresh container starts (the worker's stream, open before the create), or from a
    // reattached one's start (a stream of its own: the daemon replays past events).
    const { docker, oomEvents } = this.deps;
    return !found && oomEvents
      ? oomEvents.watch(attempt.name)
      : watchOomEvents(docker, attempt.name, Math.floor((taskTimeMs(found?.seen.startedAt) ?? Date.now()) / 1000) - 1);
  }
}

/** A job's container, followed through the daemon by its id; removed, with what its mode gave it, by its name. */
class DockerTask implements RunningTask {
  constructor(
    private readonly docker: DockerEngine,
    private readonly name: string,
    readonly seen: ContainerState,
    private readonly mode: DockerMode,
  ) {}

  get id(): string {
    return this.seen.id;
  }

  state = () => this.docker.containerState(this.id);
  wait = (signal?: AbortSignal) => this.docker.wait(this.id, signal);
  kill = () => this.docker.kill(this.id);
  followLog = (file: string, secrets: readonly string[]) => captureContainerLog(this.docker, this.id, file, secrets);
  logTail = (lines: number) => this.docker.logTail(this.id, lines);
  writableBytes = () => this.docker.writableLayerBytes(this.id);
  heldBytes = () => this.mode.heldBytes();
  killedFromOutside = (final: TaskState, timeoutSeconds: number, engineWentAway: boolean) =>
    killedFromOutside(this.docker, final, timeoutSeconds, engineWentAway);
  remove = () => this.mode.remove(this.name);
}
