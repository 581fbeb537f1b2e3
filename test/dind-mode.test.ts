// DinD mode: tasks with `docker: true` get their own Docker daemon, with images preloaded from
// archives. Real dev server, real Docker (inner daemons included), reference model.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../runs/run-spec.js';
import { br, containersOfRun, copyFixture, fixturesDir, startHarness, type Harness } from './support/harness.js';

const benchmarkDir = path.join(fixturesDir, 'benchmarks', 'dind-service');
const SERVICE_IMAGE = 'benchrouter-test/inner-service:1';

let h: Harness;
let scratch: string;
beforeAll(async () => {
  h = await startHarness('dind', { modelHost: '0.0.0.0' });
  h.buildFixtureImage('inner-service', SERVICE_IMAGE);
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-dind-'));
});
afterAll(async () => {
  await h?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Nothing of a run may outlive it: no container, no per-task daemon storage. */
function expectNothingLeft(run: RunResult): void {
  expect(containersOfRun(run.runId)).toEqual([]);
  const storage = h.settings.dindStorageRoot;
  expect(existsSync(storage) ? readdirSync(storage) : []).toEqual([]);
}

describe('a docker: true task', () => {
  it('starts a preloaded image in its own daemon, talks to it, and two tasks at once see only their own', async () => {
    const run = await h.run(benchmarkDir, { tasks: ['service-a', 'service-b'], concurrency: 2 });
    const [a, b] = ['service-a', 'service-b'].map((task) => run.jobs.find((j) => j.task === task)!);

    expect(run.status).toBe('COMPLETED');
    for (const [job, instance] of [
      [a!, 'a'],
      [b!, 'b'],
    ] as const) {
      expect(job.status).toBe('SUCCEEDED');
      expect(job.result?.overall).toBe(1);
      expect(job.result?.raw_metrics).toMatchObject({
        checks: { port: true, bridge: true, model_endpoint: true },
        sum: 5050,
        containers: [`svc-${instance}`],
        images: [SERVICE_IMAGE],
      });
      expect(job.runtime).toMatch(/^dind:(sysbox|privileged|capabilities)$/);
    }
    // They really ran at the same time.
    expect(Date.parse(a!.timings.startedAt!)).toBeLessThan(Date.parse(b!.timings.finishedAt));
    expect(Date.parse(b!.timings.startedAt!)).toBeLessThan(Date.parse(a!.timings.finishedAt));
    expectNothingLeft(run);
  });

  it("cannot open the host's block devices, from its own container with every capability or from a privileged container of its daemon", async () => {
    const run = await h.run(benchmarkDir, { tasks: ['device-escape'] });
    const job = run.jobs[0]!;
    expect(job.status, job.message).toBe('SUCCEEDED');
    const raw = job.result?.raw_metrics as { opened: Record<string, string[]>; devices: string[]; inner: string };
    // It did try: the host has block devices, and both attempts ran to the end.
    expect(raw.devices.length).toBeGreaterThan(0);
    expect(raw.inner, JSON.stringify(raw)).toMatch(/^inner:/);
    expect(raw.opened).toEqual({ outer: [], inner: [] });
    expect(job.result?.overall).toBe(1);
    expectNothingLeft(run);
  });

  it('fails with NON_ZERO_EXIT after starting inner containers, and leaves nothing behind', async () => {
    const run = await h.run(benchmarkDir, { tasks: ['exits-nonzero'] });
    expect(run.jobs[0]).toMatchObject({ status: 'FAILED', reason: 'NON_ZERO_EXIT', exitCode: 4 });
    expect(run.jobs[0]!.message).toContain('inner service up, now failing');
    expectNothingLeft(run);
  });

  it('is killed whole at its timeout, inner containers included, and leaves no storage', async () => {
    const run = await h.run(benchmarkDir, { tasks: ['times-out'] });
    expect(run.jobs[0]).toMatchObject({ status: 'TIMED_OUT' });
    expect(run.jobs[0]!.message).toContain('inner service up');
    expectNothingLeft(run);
    // No stray inner-service process survived on the host.
    const stray = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes('httpd -f -p 8000'));
    expect(stray).toEqual([]);
  });

  it('is killed whole when its run is cancelled, inner containers included, and leaves no storage', async () => {
    const dir = copyFixture('dind-service', path.join(scratch, 'cancel'));
    writeFileSync(
      path.join(dir, 'tasks', 'times-out', 'task.yaml'),
      'name: times-out\ndocker: true\ndocker_images: [benchrouter-test/inner-service:1]\ntimeout: 600\ncommand: docker run -d --name forever benchrouter-test/inner-service:1 && sleep 600\n',
    );
    const submitted = await br(['submit', dir, '--model', 'm', '--endpoint', h.model.url, '--tasks', 'times-out'], h.env);
    expect(submitted.code).toBe(0);
    const runId = submitted.stdout.trim();
    // Wait until the task's own daemon runs the inner service.
    const innerUp = () => execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).includes('httpd -f -p 8000');
    for (let i = 0; i < 150 && !innerUp(); i++) await new Promise((r) => setTimeout(r, 200));
    expect(innerUp()).toBe(true);

    const cancelled = await br(['cancel', runId, '--json'], h.env);
    expect(cancelled.code).toBe(5);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ status: 'CANCELLED', jobs: [{ status: 'CANCELLED' }] });
    expect(containersOfRun(runId)).toEqual([]);
    expect(existsSync(h.settings.dindStorageRoot) ? readdirSync(h.settings.dindStorageRoot) : []).toEqual([]);
    expect(innerUp()).toBe(false);
  });

  it('fails with a clear reason when a preload image is neither on the host nor archived', async () => {
    const run = await h.run(benchmarkDir, { tasks: ['missing-image'] });
    expect(run.jobs[0]).toMatchObject({ status: 'FAILED', reason: 'IMAGE_BUILD' });
    expect(run.jobs[0]!.message).toContain('docker_images: image "benchrouter-test/never-built:1" is neither on host host-dind nor archived');
    expectNothingLeft(run);
  });
});

describe('br images save', () => {
  it('archives a host image so a task can preload it after the host image is gone', async () => {
    const tag = `benchrouter-test/inner-archived:${Date.now()}`;
    execFileSync('docker', ['tag', SERVICE_IMAGE, tag]);
    const saved = await br(['images', 'save', tag, '--json'], h.env);
    expect(saved.code).toBe(0);
    const [entry] = JSON.parse(saved.stdout) as Array<{ image: string; archive: string }>;
    expect(entry!.image).toBe(tag);
    expect(existsSync(entry!.archive)).toBe(true);
    execFileSync('docker', ['rmi', tag]);

    const dir = copyFixture('dind-service', scratch);
    writeFileSync(
      path.join(dir, 'tasks', 'exits-nonzero', 'task.yaml'),
      `name: exits-nonzero\ndocker: true\ndocker_images: ["${tag}"]\ncommand: |\n  docker run --rm ${tag} echo hello-from-archive && echo '{"overall": 1}' > "$BENCHROUTER_OUTPUT_DIR/result.json"\n`,
    );
    const run = await h.run(dir, { tasks: ['exits-nonzero'] });
    // The archive alone makes an image set of the host's DinD image store, which the task starts from.
    expect(run.jobs[0]).toMatchObject({ status: 'SUCCEEDED', result: { overall: 1 }, preload: 'store' });
    expectNothingLeft(run);
  });

  it('refuses an image the host does not have, with exit code 2', async () => {
    const saved = await br(['images', 'save', 'benchrouter-test/never-built:1'], h.env);
    expect(saved.code).toBe(2);
    expect(saved.stderr).toContain("not on this host's Docker daemon: benchrouter-test/never-built:1");
  });
});
