// Once per test session: a real Temporal dev server on a free port with its own database, and the
// workflow bundle built once for every test worker.

import { bundleWorkflowCode } from '@temporalio/worker';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { freePort, startDevServer } from '../../embedded/embedded-services.js';
import { CONTAINER_BENCHMARK_DIR, LABELS } from '../../activities/container-spec.js';
import { NETNS_FILES_LABEL, NETNS_HOLDER_LABEL } from '../../activities/netns-pool.js';
import { workflowsPath } from '../../workers/start-worker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    workflowBundlePath: string;
  }
}

let server: ChildProcess | undefined;
let dir: string | undefined;
/** Task containers on the engine before the session: a developer's own runs, not the suite's. */
let containersBefore = new Set<string>();

export async function setup(project: TestProject): Promise<void> {
  containersBefore = new Set(taskContainers().map((c) => c.id));
  dir = mkdtempSync(path.join(os.tmpdir(), 'br-test-temporal-'));
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  // The server starts while the workflows bundle.
  const [started, bundle] = await Promise.all([
    startDevServer(port, path.join(dir, 'temporal.db')),
    bundleWorkflowCode({ workflowsPath, logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } }),
  ]);
  server = started;
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
  project.provide('temporalAddress', address);
  project.provide('workflowBundlePath', bundlePath);
}

export async function teardown(): Promise<void> {
  removeTestNetnsHolders();
  server?.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  if (dir) rmSync(dir, { recursive: true, force: true });
  // Every test removes what its runs started: a task container left over is a test (or a cleanup path) to fix.
  const left = taskContainers().filter((c) => !containersBefore.has(c.id) && !ofLiveSession(c.id));
  if (left.length) {
    execFileSync('docker', ['rm', '--force', ...left.map((c) => c.id)], { stdio: 'ignore' });
    // vitest reports an error thrown here but exits 0 all the same: the exit code says it too.
    process.exitCode = 1;
    throw new Error(`the suite left ${left.length} task container(s) on the engine (removed now): ${left.map((c) => c.name).join(', ')}`);
  }
}

/**
 * Whether a container belongs to another test session still running on this engine (a second suite, a
 * developer's run): what it writes to (a job's artifacts, an instance listing's or an export's scratch
 * directory) is in a temporary directory that still exists, where every harness home of this session is gone
 * by now. Such a container is not this session's to report or remove, nor is one that no longer exists.
 */
function ofLiveSession(id: string): boolean {
  try {
    const mounts = execFileSync('docker', ['inspect', '--format', '{{range .Mounts}}{{println .Destination .Source}}{{end}}', id], { encoding: 'utf8' });
    return (
      mounts
        .split('\n')
        // Where it is mounted (ours have no spaces), then the host path.
        .map((line) => ({ target: line.slice(0, line.indexOf(' ')), source: line.slice(line.indexOf(' ') + 1) }))
        // Not the benchmark's sources, which a clone under /tmp keeps whatever session ran them.
        .filter(({ source, target }) => source.startsWith(`${os.tmpdir()}${path.sep}`) && target !== CONTAINER_BENCHMARK_DIR)
        .some(({ source }) => existsSync(source))
    );
  } catch {
    // Gone since the listing (another session removed its own): nothing left to report or remove.
    return true;
  }
}

/** BenchRouter's task containers on the engine, running or not; none without a Docker engine. */
function taskContainers(): Array<{ id: string; name: string }> {
  try {
    const lines = execFileSync('docker', ['ps', '--all', '--filter', `label=${LABELS.managed}`, '--format', '{{.ID}} {{.Names}}'], { encoding: 'utf8' });
    return lines
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [id = '', name = ''] = line.split(' ');
        return { id, name };
      });
  } catch {
    return [];
  }
}

/**
 * Network-namespace holders the tests' workers left (a worker killed on purpose leaves its holders for a
 * restart that, in a test, does not come): those whose worker's home is gone. A real worker's are left alone.
 */
function removeTestNetnsHolders(): void {
  try {
    const lines = execFileSync('docker', ['ps', '-a', '--filter', `label=${NETNS_HOLDER_LABEL}`, '--format', `{{.ID}} {{.Label "${NETNS_FILES_LABEL}"}}`], {
      encoding: 'utf8',
    });
    const ids = lines.split('\n').flatMap((line) => {
      const [id, filesDir] = line.split(' ');
      return id && filesDir && !existsSync(filesDir) ? [id] : [];
    });
    if (ids.length) execFileSync('docker', ['rm', '-f', ...ids], { stdio: 'ignore' });
  } catch {
    // no Docker here: nothing was left on it
  }
}
