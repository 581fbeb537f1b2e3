// The detached processes `br up` starts (the embedded Temporal server, the background worker),
// tracked by pid files under the BenchRouter home: whether a pid file names a live process, the log a
// start wrote, and a stop that escalates to SIGKILL and never reports a stop that did not happen.

import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long a process gets to stop after SIGTERM before SIGKILL. */
export const STOP_GRACE_MS = 15_000;
/** After SIGKILL the kernel ends a process at once; longer means it is stuck in the kernel (D state). */
const KILL_WAIT_MS = 5_000;

/** The pid a pid file names, whether or not it runs; undefined without a readable number. */
export function pidInFile(pidFile: string): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Whether `pid` runs and, where /proc tells, is the program it should be: a pid file left by a process
 * that died may name a pid the system has since given to something else. A zombie has ended.
 */
export function processRuns(pid: number, commandMarker?: string): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (/\) Z /.test(stat)) return false;
    if (commandMarker && !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(commandMarker)) return false;
  } catch {
    // no /proc (macOS): kill(pid, 0) is all there is
  }
  return true;
}

async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (processRuns(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}

export type StopOutcome = 'not-running' | 'stopped' | 'killed';

/**
 * SIGTERM, then SIGKILL once `graceMs` has passed; resolves only once the process is gone and throws
 * when even SIGKILL did not end it. The pid file goes only when its process has.
 */
export async function stopProcess(
  name: string,
  pidFile: string,
  say: (line: string) => void,
  options: { graceMs?: number; commandMarker?: string } = {},
): Promise<StopOutcome> {
  const pid = pidInFile(pidFile);
  if (pid === undefined || !processRuns(pid, options.commandMarker)) {
    if (pid !== undefined) say(`${name}: ${pidFile} named pid ${pid}, which is not running (stale): removed it`);
    rmSync(pidFile, { force: true });
    return 'not-running';
  }
  const graceMs = options.graceMs ?? STOP_GRACE_MS;
  say(`stopping ${name} (pid ${pid}): SIGTERM, SIGKILL after ${Math.round(graceMs / 1000)} s`);
  process.kill(pid, 'SIGTERM');
  let outcome: StopOutcome = 'stopped';
  if (!(await waitGone(pid, graceMs))) {
    // A worker whose event loop is blocked (a wedged activity, a stopped process) cannot act on SIGTERM.
    process.kill(pid, 'SIGKILL');
    outcome = 'killed';
    if (!(await waitGone(pid, KILL_WAIT_MS))) throw new Error(`${name} (pid ${pid}) is still running after SIGKILL; ${pidFile} is kept`);
    say(`${name} (pid ${pid}) did not stop within ${Math.round(graceMs / 1000)} s of SIGTERM: killed it with SIGKILL`);
  } else say(`${name} (pid ${pid}) stopped`);
  rmSync(pidFile, { force: true });
  return outcome;
}

/** The last `lines` non-empty lines a log got from byte `from` on: what one start of a process wrote. */
export function logTailSince(file: string, from: number, lines = 20): string {
  if (!existsSync(file)) return '';
  const size = statSync(file).size;
  const start = Math.max(from, size - 64 * 1024);
  const buffer = Buffer.alloc(Math.max(0, size - start));
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, start);
  } finally {
    closeSync(fd);
  }
  return buffer
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim())
    .slice(-lines)
    .join('\n');
}

/**
 * Creates the BenchRouter home (and its parents) when it is missing, readable by its owner only: it
 * holds the API token, the Temporal database and the worker's host id. An existing one is left as it is.
 */
export function ensureHomeDir(home: string): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
}

/** The last lines a child process wrote to one of its streams, kept as they come (the stream is drained). */
export function keepOutputTail(stream: Readable | null, lines = 20): () => string {
  let text = '';
  stream?.setEncoding('utf8');
  stream?.on('data', (chunk: string) => {
    text = (text + chunk).slice(-16 * 1024);
  });
  return () =>
    text
      .split('\n')
      .filter((line) => line.trim())
      .slice(-lines)
      .join('\n');
}

/** A detached process just started: its pid and where in its log its own lines begin. */
export interface StartedProcess {
  pid: number;
  logFile: string;
  logFrom: number;
}

/**
 * Polls `ready` until it holds; throws with the process's own last log lines (and the log's path) when the
 * process exits first or `timeoutMs` passes. `what` names the process in the error: "the Temporal dev server".
 */
export async function waitUntilReady(
  started: StartedProcess,
  what: string,
  ready: () => Promise<boolean>,
  options: { timeoutMs: number; waitingFor: string; stillRunning?: string; onExit?: () => void },
): Promise<void> {
  const failed = (why: string) => {
    const tail = logTailSince(started.logFile, started.logFrom);
    return new Error(`${what} (pid ${started.pid}) ${why}; the end of ${started.logFile}:\n${tail || '(nothing)'}`);
  };
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (!processRuns(started.pid)) {
      options.onExit?.();
      throw failed(`exited before ${options.waitingFor}`);
    }
    if (await ready()) return;
    if (Date.now() > deadline)
      throw failed(
        `did not get to ${options.waitingFor} within ${Math.round(options.timeoutMs / 1000)} s${options.stillRunning ? `; ${options.stillRunning}` : ''}`,
      );
    await sleep(250);
  }
}
