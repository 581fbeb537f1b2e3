// Real processes for durability tests: `br worker` subprocesses that can be killed with SIGKILL,
// and a Temporal dev server of a test's own that can be stopped and started on the same database.

import type { Client } from '@temporalio/client';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { inject } from 'vitest';
import { freePort, startDevServer } from '../../embedded/embedded-services.js';
import { repoRoot } from './harness.js';
import { attemptsStartedSince } from './sleepers.js';

export interface WorkerProcess {
  child: ChildProcess;
  /** Everything the worker printed, stdout and stderr. */
  output(): string;
  /** Resolves once the worker has printed `text`; rejects if it exits first or after `timeoutMs`. */
  printed(text: string, timeoutMs?: number): Promise<void>;
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

/** One gateway port per host id, kept across restarts: running containers keep their gateway address. */
const gatewayPorts = new Map<string, number>();

/**
 * A `br worker` process. By default resolves once it polls; `{ untilPolling: false }` resolves as soon
 * as it is spawned, for a worker that starts while its server is down.
 */
export async function spawnWorker(
  env: Record<string, string>,
  hostId: string,
  { untilPolling = true }: { untilPolling?: boolean } = {},
): Promise<WorkerProcess> {
  if (!gatewayPorts.has(hostId)) gatewayPorts.set(hostId, await freePort());
  const child = spawn(path.join(repoRoot, 'br'), ['worker'], {
    env: {
      ...process.env,
      ...env,
      BENCHROUTER_HOST_ID: hostId,
      BENCHROUTER_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
      BENCHROUTER_GATEWAY_PORT: String(gatewayPorts.get(hostId)),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const printed = (text: string, timeoutMs = 60_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`worker ${hostId} did not print "${text}" within ${timeoutMs} ms: ${output}`)), timeoutMs);
      const check = () => {
        if (!output.includes(text)) return;
        clearTimeout(timer);
        resolve();
      };
      child.stdout!.on('data', check);
      child.stderr!.on('data', check);
      child.once('exit', (code) => reject(new Error(`worker ${hostId} exited with ${code}: ${output}`)));
      check();
    });
  if (untilPolling) await printed('polling');
  return {
    child,
    output: () => output,
    printed,
    async kill9() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

export interface DevServer {
  address: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A crash: SIGKILL, no chance to flush or say goodbye to its clients. */
  kill9(): Promise<void>;
}

/** A dev server of the test's own, persisted to `dbFile`, that can be stopped and started again. */
export function devServer(port: number, dbFile: string): DevServer {
  const address = `127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  return {
    address,
    async start() {
      child = await startDevServer(port, dbFile);
    },
    async stop() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
    async kill9() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Container start events of a run, counted by an observer outside BenchRouter: `docker events`. */
export function watchContainerStarts(runId: string): { names(): string[]; stop(): void } {
  const child = spawn('docker', ['events', '--filter', `label=benchrouter.run=${runId}`, '--filter', 'event=start', '--format', '{{.Actor.Attributes.name}}'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return { names: () => out.split('\n').filter(Boolean), stop: () => child.kill() };
}

export function runningContainersOf(runId: string): Array<{ name: string; host: string }> {
  return execFileSync('docker', ['ps', '--filter', `label=benchrouter.run=${runId}`, '--format', '{{.Names}}\t{{.Label "benchrouter.host"}}'], {
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [name = '', host = ''] = line.split('\t');
      return { name, host };
    });
}

/**
 * Waits until each job with a running container of the run has its host activity (runJobOnHost) running an
 * attempt that started at or after `sinceMs` (attemptsStartedSince). Then the containers can be let go
 * (releaseSleepers) without skipping that.
 */
export async function waitForAttemptsSince(client: Client, runId: string, sinceMs: number, timeoutMs = 90_000): Promise<void> {
  const jobs = execFileSync('docker', ['ps', '--filter', `label=benchrouter.run=${runId}`, '--format', '{{.Label "benchrouter.job"}}'], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  await waitFor(
    `an attempt started since ${new Date(sinceMs).toISOString()} for each of ${jobs.join(', ')}`,
    () => attemptsStartedSince(client, jobs, sinceMs),
    timeoutMs,
  );
}

/** Waits until `count` of the run's containers run on `host` (the jobs of a run under test landed there). */
/** `worker`: the host's worker, whose last output a timeout quotes with the containers it saw, to say why. */
export async function waitForRunningOn(runId: string, host: string, count: number, timeoutMs = 60_000, worker?: WorkerProcess): Promise<void> {
  try {
    await waitFor(`${count} running containers on ${host}`, () => runningContainersOf(runId).filter((c) => c.host === host).length === count, timeoutMs);
  } catch (error) {
    const seen = runningContainersOf(runId).map((c) => `${c.name} (${c.host})`);
    const said = worker ? `; its worker's last output:\n${worker.output().slice(-4000)}` : '';
    throw new Error(`${(error as Error).message}; running: ${seen.join(', ') || 'none'}${said}`, { cause: error });
  }
}

export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}
