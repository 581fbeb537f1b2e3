// Once per test session: a real Temporal dev server on a free port with its own database, and the
// workflow bundle built once for every test worker.

import { bundleWorkflowCode } from '@temporalio/worker';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { devServerArgs, freePort, waitUntilReachable } from '../../client/embedded-services.js';
import { workflowsPath } from '../../workers/start-worker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    workflowBundlePath: string;
  }
}

let server: ChildProcess | undefined;
let dir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  dir = mkdtempSync(path.join(os.tmpdir(), 'br-test-temporal-'));
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  server = spawn('temporal', devServerArgs(port, path.join(dir, 'temporal.db')), { stdio: 'ignore' });
  const bundle = await bundleWorkflowCode({ workflowsPath, logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } });
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
  if (!(await waitUntilReachable(address))) throw new Error(`the Temporal dev server did not start on ${address}`);
  project.provide('temporalAddress', address);
  project.provide('workflowBundlePath', bundlePath);
}

export async function teardown(): Promise<void> {
  server?.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  if (dir) rmSync(dir, { recursive: true, force: true });
}
