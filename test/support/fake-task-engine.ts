// A task engine in memory (activities/engines/engine.ts), for unit tests of the attempt runner: a test
// scripts how each task it starts ends (its exit code, when, its out-of-memory kills, a kill from outside
// BenchRouter), and reads back what the runner asked of it. Its out-of-memory count and its
// killed-from-outside verdict go through the same rules as Docker's (outage-restart.ts).

import { writeFileSync } from 'node:fs';
import type { AttemptScope, LogCapture, OomWatch, RunningTask, TaskEngine, TaskSpec, TaskState } from '../../activities/engines/engine.js';
import { killedFromOutside } from '../../activities/outage-restart.js';
import { redactSecrets } from '../../activities/redact-secrets.js';

/** How a fake task ends when nothing kills it first. */
export interface FakeRun {
  /** Its exit code; with none, it runs until it is killed. */
  exitCode?: number;
  /** How long it runs before it exits by itself (ms). */
  exitAfterMs?: number;
  /** Out-of-memory kills the engine reports of it (of any of its processes). */
  oomKills?: number;
  /** Its main process was killed for memory. */
  oomKilled?: boolean;
  /** It exits because something outside BenchRouter killed it (a daemon going down): the engine recorded a kill. */
  killedFromOutside?: boolean;
  /** What it prints. */
  output?: string;
}

/** Exit code of a task killed with SIGKILL. */
export const KILLED = 137;

/** One task the engine started, as it runs; the runner holds it through a `handle`. */
export class FakeTask {
  private current: TaskState;
  private exited!: (code: number) => void;
  private readonly exit = new Promise<number>((resolve) => (this.exited = resolve));
  private timer?: NodeJS.Timeout;
  /** Who killed it: BenchRouter (kill()), or someone outside. */
  readonly kills: Array<'benchrouter' | 'outside'> = [];

  constructor(
    private readonly engine: FakeTaskEngine,
    readonly name: string,
    readonly spec: TaskSpec,
    readonly run: FakeRun,
  ) {
    this.current = {
      id: `fake-${name}`,
      running: true,
      exitCode: 0,
      startedAt: new Date().toISOString(),
      finishedAt: '',
      oomKilled: false,
      labels: spec.labels,
    };
    if (run.exitCode !== undefined) {
      this.timer = setTimeout(() => {
        if (run.killedFromOutside) this.kills.push('outside');
        this.end(run.exitCode!, run.oomKilled ?? false);
      }, run.exitAfterMs ?? 0);
    }
  }

  /** The task as the runner holds it, `seen` as it was when started or found. */
  handle(): RunningTask {
    return {
      id: this.current.id,
      seen: { ...this.current },
      state: () => this.state(),
      wait: (signal) => this.wait(signal),
      kill: () => this.kill(),
      followLog: (file, secrets) => this.followLog(file, secrets),
      logTail: async () => Buffer.from(this.run.output ?? ''),
      writableBytes: async () => 0,
      heldBytes: async () => 0,
      killedFromOutside: (final, timeoutSeconds, engineWentAway) => {
        const endEvents = async () => ({ kills: this.kills.filter((by) => by === 'outside').map(() => 'SIGKILL'), died: true });
        return killedFromOutside({ endEvents }, final, timeoutSeconds, engineWentAway);
      },
      remove: () => this.engine.removeNamed(this.name),
    };
  }

  /** It exits now, as a task killed by something outside BenchRouter while no attempt watched it. */
  killFromOutside(): void {
    this.kills.push('outside');
    this.end(KILLED, false);
  }

  private end(exitCode: number, oomKilled: boolean): void {
    if (!this.current.running) return;
    clearTimeout(this.timer);
    this.current = { ...this.current, running: false, exitCode, oomKilled, finishedAt: new Date().toISOString() };
    this.exited(exitCode);
  }

  async state(): Promise<TaskState | undefined> {
    return this.engine.tasks.get(this.name) === this ? { ...this.current } : undefined;
  }

  wait(signal?: AbortSignal): Promise<number> {
    return new Promise((resolve, reject) => {
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      void this.exit.then(resolve);
    });
  }

  async kill(): Promise<void> {
    this.engine.calls.push(`kill ${this.name}`);
    if (this.current.running) this.kills.push('benchrouter');
    this.end(KILLED, false);
  }

  async followLog(file: string, secrets: readonly string[]): Promise<LogCapture> {
    const output = redactSecrets(this.run.output ?? '', secrets);
    writeFileSync(file, output);
    const summary = { bytes: Buffer.byteLength(output), dropped: 0 };
    const finished = this.exit.then(() => summary);
    return { finished, stop: async () => summary };
  }
}

export class FakeTaskEngine implements TaskEngine {
  readonly name = 'fake';
  /** What the runner asked, in order: `find`, `start`, `kill`, `remove` with the task's name. */
  readonly calls: string[] = [];
  readonly tasks = new Map<string, FakeTask>();
  /** Every task started, removed ones too. */
  readonly started: FakeTask[] = [];

  /** `script` says how each task it starts runs. */
  constructor(private readonly script: (spec: TaskSpec) => FakeRun) {}

  async find(attempt: AttemptScope): Promise<RunningTask | undefined> {
    this.calls.push(`find ${attempt.name}`);
    return this.tasks.get(attempt.name)?.handle();
  }

  async start(spec: TaskSpec, attempt: AttemptScope): Promise<RunningTask | 'conflict'> {
    this.calls.push(`start ${attempt.name}`);
    if (this.tasks.has(attempt.name)) return 'conflict';
    const task = new FakeTask(this, attempt.name, spec, this.script(spec));
    this.tasks.set(attempt.name, task);
    this.started.push(task);
    return task.handle();
  }

  remove(attempt: AttemptScope): Promise<void> {
    return this.removeNamed(attempt.name);
  }

  async removeNamed(name: string): Promise<void> {
    this.calls.push(`remove ${name}`);
    this.tasks.delete(name);
  }

  /** Counted when it stops: the last task of that name started by then. */
  async watchOom(attempt: AttemptScope): Promise<OomWatch> {
    const ofName = () => this.started.filter((task) => task.name === attempt.name).at(-1);
    return { stop: async () => ofName()?.run.oomKills ?? 0, streamLost: () => false };
  }
}
