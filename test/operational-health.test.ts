// Operational health against real processes: a real embedded setup (`br up`: its own dev server and
// background worker), the worker wedged with SIGSTOP, then what `br run`, `br doctor` and `br down`
// say about it; and `br up` refusing a gateway port another process holds.

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { processRuns } from '../embedded/background-process.js';
import { freePort } from '../embedded/embedded-services.js';
import { workerIdentity } from '../runs/worker-identity.js';
import { LABELS } from '../activities/container-spec.js';
import { dockerLines, fixturesDir, repoRoot } from './support/harness.js';
import { waitFor } from './support/processes.js';

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

function br(env: NodeJS.ProcessEnv, args: string[]): { done: Promise<Finished>; stderr(): string; kill(signal: NodeJS.Signals): void } {
  const child = spawn(path.join(repoRoot, 'br'), args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Finished>((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
  return { done, stderr: () => stderr, kill: (signal) => child.kill(signal) };
}

describe('operational health of an embedded setup', () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'br-test-health-'));
  const hostId = `health-${process.pid}`;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    const { TEMPORAL_ADDRESS: _configured, ...rest } = process.env;
    env = {
      ...rest,
      BENCHROUTER_HOME: home,
      BENCHROUTER_EMBEDDED_PORT: String(await freePort()),
      BENCHROUTER_EMBEDDED_UI_PORT: String(await freePort()),
      BENCHROUTER_GATEWAY_PORT: String(await freePort()),
      BENCHROUTER_API_PORT: String(await freePort()), // `br up` starts the API server too: not on the shared default port
      BENCHROUTER_HOST_ID: hostId,
      BENCHROUTER_TASK_QUEUE: `health-${process.pid}`,
      BENCHROUTER_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
      BENCHROUTER_HEALTH_INTERVAL_MS: '2000',
    };
  });

  afterAll(async () => {
    const pidFile = path.join(home, 'worker.pid');
    try {
      if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGCONT'); // a test that failed midway
    } catch {
      // already gone
    }
    await br(env, ['down', '--grace', '2']).done;
    // The wedged worker's run never ends: the containers its jobs started on this host are left to remove.
    const left = dockerLines(['ps', '--all', '--quiet', '--filter', `label=${LABELS.host}=${hostId}`]);
    if (left.length) execFileSync('docker', ['rm', '--force', ...left], { stdio: 'ignore' });
    rmSync(home, { recursive: true, force: true });
  });

  it('a wedged worker: br run warns within 30 s, br doctor names the worker, br down kills it with SIGKILL and says so', { timeout: 300_000 }, async () => {
    const up = await br(env, ['up']).done;
    expect(up.code, up.stderr).toBe(0);
    expect(up.stderr).toContain('ready:');
    const pid = Number(readFileSync(path.join(home, 'worker.pid'), 'utf8'));
    const identity = workerIdentity(hostId, pid);

    process.kill(pid, 'SIGSTOP'); // wedged: alive, its polls open, answering nothing (not even SIGTERM)
    const run = br(env, ['run', path.join(fixturesDir, 'benchmarks', 'outcomes'), '--model', 'm', '--endpoint', 'http://127.0.0.1:9/v1', '--no-preflight']);
    await waitFor('br run to print its run id', () => run.stderr().includes('Web UI:'), 60_000);
    const waitingSince = Date.now();
    await waitFor('a health warning from br run', () => run.stderr().includes('health: '), 30_000);
    expect(Date.now() - waitingSince).toBeLessThan(30_000);
    expect(run.stderr()).toMatch(/health: .*(workflow task has failed or timed out|none taking tasks|no worker polls it).*; more: br doctor/);
    run.kill('SIGINT');
    const ran = await run.done;
    expect(ran.code).toBe(130);
    expect(ran.stderr).toMatch(/stopped waiting; run br-\S+ keeps running \(not cancelled\)/);

    const doctor = await br(env, ['doctor', '--json']).done;
    expect(doctor.code).toBe(1);
    const report = JSON.parse(doctor.stdout) as { ok: boolean; checks: Array<{ name: string; level: string; detail: string }> };
    expect(report.ok).toBe(false);
    expect(report.checks.filter((c) => c.level === 'fail' && c.detail.includes(identity)).length).toBeGreaterThan(0);

    const down = await br(env, ['down', '--grace', '3']).done;
    expect(down.code).toBe(0);
    expect(down.stderr).toContain(`worker (pid ${pid}) did not stop within 3 s of SIGTERM: killed it with SIGKILL`);
    expect(processRuns(pid)).toBe(false);
    expect(existsSync(path.join(home, 'worker.pid'))).toBe(false);
  });

  it('br up exits 1 naming the port when another process holds the gateway port, and starts nothing', async () => {
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(Number(env.BENCHROUTER_GATEWAY_PORT), '0.0.0.0', resolve));
    try {
      const up = await br(env, ['up']).done;
      expect(up.code, up.stderr).toBe(1);
      expect(up.stderr).toContain(
        `br: cannot start the background worker: the model gateway's port 0.0.0.0:${env.BENCHROUTER_GATEWAY_PORT} is taken by another process`,
      );
      expect(existsSync(path.join(home, 'worker.pid'))).toBe(false);
      expect(existsSync(path.join(home, 'temporal.pid'))).toBe(false);
    } finally {
      await new Promise((r) => squatter.close(r));
    }
  });

  it('br up replaces a pid file whose worker is gone, and br down then stops the new worker gracefully', { timeout: 300_000 }, async () => {
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.once('exit', r));
    writeFileSync(path.join(home, 'worker.pid'), String(dead.pid));
    const up = await br(env, ['up']).done;
    expect(up.code, up.stderr).toBe(0);
    expect(up.stderr).toContain(`worker.pid named pid ${dead.pid}, which is not a running worker (stale): replacing it`);
    const pid = Number(readFileSync(path.join(home, 'worker.pid'), 'utf8'));
    expect(pid).not.toBe(dead.pid);
    expect(up.stderr).toContain(`worker pid ${pid} polling`);

    const down = await br(env, ['down']).done;
    expect(down.code, down.stderr).toBe(0);
    expect(down.stderr).toContain(`worker (pid ${pid}) stopped`);
    expect(down.stderr).not.toContain('killed it with SIGKILL');
    expect(processRuns(pid)).toBe(false);
  });
});
