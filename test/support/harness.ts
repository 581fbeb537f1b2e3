// An isolated BenchRouter for one test file: its own queues, host id and home directory on the
// shared dev server, a real worker, the real Docker engine and the reference model.

import type { Client } from '@temporalio/client';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { connectClient, followRun, submitRun } from '../../client/runs.js';
import { runSpecOfBenchmark } from '../../client/run-request.js';
import { loadBenchmark } from '../../contract/load-benchmark.js';
import type { RunResult } from '../../runs/run-spec.js';
import { runOptions, type RunOptionsInput } from '../../runs/run-options.js';
import { settingsFrom, type Settings } from '../../config/settings.js';
import { unmountStore } from '../../activities/reflink-fs.js';
import { startReferenceModel, type ReferenceModelServer } from '../../reference-model/reference-model-server.js';
import { startWorker, type RunningWorker } from '../../workers/start-worker.js';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const fixturesDir = path.join(repoRoot, 'test', 'fixtures');

export interface Harness {
  settings: Settings;
  env: Record<string, string>;
  client: Client;
  worker: RunningWorker;
  model: ReferenceModelServer;
  home: string;
  /** Runs a benchmark with these run options over the harness's: the reference model, concurrency 8. */
  run(benchmarkDir: string, options?: Partial<RunOptionsInput>): Promise<RunResult>;
  buildFixtureImage(dir: string, tag: string): void;
  close(): Promise<void>;
}

/**
 * modelHost: where the reference model listens. DinD tasks have their own network namespace and
 * reach the host through the bridge, so their tests bind 0.0.0.0 rather than loopback.
 * env: more worker settings, such as BENCHROUTER_DATASET_DIR.
 */
export async function startHarness(name: string, options: { modelHost?: string; env?: Record<string, string> } = {}): Promise<Harness> {
  const home = mkdtempSync(path.join(os.tmpdir(), `br-test-${name}-`));
  const env = {
    BENCHROUTER_HOME: home,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    BENCHROUTER_TASK_QUEUE: `test-${name}-${randomBytes(3).toString('hex')}`,
    // Any free port: this in-process worker never restarts, so its gateway needs no fixed address.
    BENCHROUTER_GATEWAY_PORT: '0',
    ...options.env,
  };
  const settings = settingsFrom(env, os.homedir());
  const worker = await startWorker({ settings, hostId: `host-${name}`, workflowBundlePath: inject('workflowBundlePath') });
  const client = await connectClient(settings);
  const model = await startReferenceModel({ port: 0, host: options.modelHost });
  return {
    settings,
    env,
    client,
    worker,
    model,
    home,
    async run(benchmarkDir, options = {}) {
      // As a submit makes it: the options validated with their defaults, the tokenizer (if any) hashed.
      const spec = runSpecOfBenchmark(loadBenchmark(benchmarkDir), runOptions({ model: 'reference', endpoint: model.url, concurrency: 8, ...options }));
      return followRun(await submitRun(client, settings, spec));
    },
    /** Builds a host image from test/fixtures/images/<dir> (fast when cached). */
    buildFixtureImage(dir: string, tag: string) {
      execFileSync('docker', ['build', '--quiet', '--tag', tag, path.join(fixturesDir, 'images', dir)], { env: { ...process.env, DOCKER_BUILDKIT: '0' } });
    },
    async close() {
      await worker.shutdown();
      await client.connection.close();
      await model.close();
      // A DinD image store on its own XFS file is a mount inside the home: unmounted before the home goes.
      await unmountStore(settings.dindStoreDir);
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Copies a fixture benchmark into a temp dir, so a test can change it without touching the repo. */
export function copyFixture(name: string, into: string): string {
  const target = path.join(into, name);
  cpSync(path.join(fixturesDir, 'benchmarks', name), target, { recursive: true });
  return target;
}

export { releaseSleepers, sleepersOf } from './sleepers.js';

export function dockerLines(args: string[]): string[] {
  return execFileSync('docker', args, { encoding: 'utf8' }).split('\n').filter(Boolean);
}

export function containersOfRun(runId: string): string[] {
  return dockerLines(['ps', '--all', '--quiet', '--filter', `label=benchrouter.run=${runId}`]);
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `br` executable with the harness's environment. */
export function br(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(repoRoot, 'br'), args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
