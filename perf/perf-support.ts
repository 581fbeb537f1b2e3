// Shared set-up for perf scripts: a throwaway Temporal dev server and a real `br worker` process,
// so figures include every hop a user's run takes.

import { REPO_ROOT } from '../config/repository.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startDevServer } from '../embedded/embedded-services.js';
import { unmountStore } from '../activities/reflink-fs.js';

export { freePort };

export const repoRoot = REPO_ROOT;

export interface PerfStack {
  env: Record<string, string>;
  home: string;
  /** Worker processes the stack stops at the end; the first is started with the stack. */
  workers: ChildProcess[];
  /** The dev server's process id (it changes when the server is started again). */
  serverPid(): number;
  /** Crashes the dev server (SIGKILL); resolves once it is gone. */
  killServer(): Promise<void>;
  /** Starts the dev server again on the same database; resolves once it accepts connections. */
  startServer(): Promise<void>;
  /** Stops the worker and server; removes the home unless `keepHome` (to read its runs afterwards). */
  stop(options?: { keepHome?: boolean }): Promise<void>;
}

/** `extraEnv`: more settings for the stack's worker and `br` (BENCHROUTER_DIND_STORE_MAX, say); `workerArgs`: more `br worker` options. */
export async function startStack(name: string, extraEnv: Record<string, string> = {}, workerArgs: string[] = []): Promise<PerfStack> {
  const home = mkdtempSync(path.join(os.tmpdir(), `br-perf-${name}-`));
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const startServer = () => startDevServer(port, path.join(home, 'temporal.db'));
  let server = await startServer();
  const env = { BENCHROUTER_HOME: home, TEMPORAL_ADDRESS: address, BENCHROUTER_TASK_QUEUE: `perf-${name}`, BENCHROUTER_HOST_ID: `perf-${name}`, ...extraEnv };
  const workers = [await startWorkerProcess(env, `perf-${name}`, workerArgs)];
  return {
    env,
    home,
    workers,
    serverPid: () => server.pid!,
    async killServer() {
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGKILL');
      await exited;
    },
    async startServer() {
      server = await startServer();
    },
    async stop({ keepHome = false } = {}) {
      for (const worker of workers) await stopProcess(worker);
      await stopProcess(server);
      await unmountStore(path.join(home, 'dind-store')); // the DinD image store's XFS file, when it has one
      if (!keepHome) rmSync(home, { recursive: true, force: true });
    },
  };
}

/** A real `br worker` process; resolves once it polls. */
const gatewayPorts = new Map<string, number>();

export async function startWorkerProcess(env: Record<string, string>, hostId: string, args: string[] = []): Promise<ChildProcess> {
  // One gateway port per host id, kept across restarts, as on a real machine.
  if (!gatewayPorts.has(hostId)) gatewayPorts.set(hostId, await freePort());
  const worker = spawn(path.join(repoRoot, 'br'), ['worker', ...args], {
    env: { ...process.env, ...env, BENCHROUTER_HOST_ID: hostId, BENCHROUTER_GATEWAY_PORT: String(gatewayPorts.get(hostId)) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    worker.stderr!.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes('polling')) resolve();
    });
    worker.on('exit', (code) => reject(new Error(`worker exited with ${code}: ${seen}`)));
  });
  return worker;
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** CPU seconds (user + system, children included) used so far by processes whose command matches. */
export function cpuSecondsByProcess(patterns: Record<string, RegExp>): Record<string, number> {
  const ticks = 100; // USER_HZ on Linux
  const totals: Record<string, number> = Object.fromEntries(Object.keys(patterns).map((k) => [k, 0]));
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let cmdline: string;
    let stat: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const seconds = (Number(fields[11]) + Number(fields[12])) / ticks;
    for (const [name, pattern] of Object.entries(patterns)) if (pattern.test(cmdline)) totals[name]! += seconds;
  }
  return totals;
}

/**
 * CPU seconds (user + system) used so far by each named set of processes and all their descendants:
 * this stack's own dev server and worker, not the other stacks sharing the machine.
 */
export function cpuSecondsOfTrees(roots: Record<string, number[]>): Record<string, number> {
  const processes = new Map<number, { parent: number; seconds: number }>();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    processes.set(Number(pid), { parent: Number(fields[1]), seconds: (Number(fields[11]) + Number(fields[12])) / 100 });
  }
  const within = (pid: number, rootSet: Set<number>): boolean => {
    for (let at: number | undefined = pid; at && at > 1; at = processes.get(at)?.parent) if (rootSet.has(at)) return true;
    return false;
  };
  return Object.fromEntries(
    Object.entries(roots).map(([name, pids]) => {
      const rootSet = new Set(pids);
      let total = 0;
      for (const [pid, { seconds }] of processes) if (within(pid, rootSet)) total += seconds;
      return [name, total];
    }),
  );
}

export function cpuDelta(before: Record<string, number>, after: Record<string, number>): string {
  return Object.keys(after)
    .map((k) => `${k} ${(after[k]! - (before[k] ?? 0)).toFixed(1)}s`)
    .join(', ');
}

export function run(command: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * `br <args> --json` (a run, a status): its wall seconds, exit code and stderr, and its JSON output, undefined
 * when stdout holds none (a refused submit prints its error on stderr).
 */
export async function brJson<T>(
  args: string[],
  env: Record<string, string>,
): Promise<{ seconds: number; code: number | null; stderr: string; value: T | undefined }> {
  const started = performance.now();
  const out = await run(path.join(repoRoot, 'br'), [...args, '--json'], env);
  const seconds = (performance.now() - started) / 1000;
  let value: T | undefined;
  try {
    value = JSON.parse(out.stdout) as T;
  } catch {
    value = undefined;
  }
  return { seconds, code: out.code, stderr: out.stderr, value };
}

/** Runs `count` async jobs with at most `concurrency` at once. */
export async function pool(count: number, concurrency: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(count, concurrency) }, async () => {
      while (next < count) await job(next++);
    }),
  );
}

/** `br serve` on a free port with the given tokens file; resolves once it listens. */
export async function startServe(env: Record<string, string>, tokensFile: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(path.join(repoRoot, 'br'), ['serve', '--port', String(port), '--tokens', tokensFile], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stderr!.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes('listening on')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`br serve exited with ${code}: ${seen}`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}
