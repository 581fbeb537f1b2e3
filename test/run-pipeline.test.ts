// The core pipeline end to end: real dev server, real worker, real Docker, reference model.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchRouterVersion } from '../config/benchrouter-version.js';
import { directoryDigest } from '../contract/benchmark-digest.js';
import { expectedArithScore } from '../reference-model/expected-score.js';
import { provenanceHash } from '../runs/provenance.js';
import type { JobResult } from '../runs/run-spec.js';
import { br, containersOfRun, copyFixture, fixturesDir, repoRoot, startHarness, type Harness } from './support/harness.js';

const arithDir = path.join(repoRoot, 'benchmarks', 'arith');
const fixture = (name: string) => path.join(fixturesDir, 'benchmarks', name);

let h: Harness;
let scratch: string;
beforeAll(async () => {
  h = await startHarness('pipeline');
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-pipeline-'));
});
afterAll(async () => {
  await h?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('a run of the arith demo against the reference model', () => {
  it('is COMPLETED with the exact expected overall and per-task scores', async () => {
    const expected = expectedArithScore(arithDir, 'reference-acc80');
    const run = await h.run(arithDir, { model: 'reference-acc80' });

    expect(run.status).toBe('COMPLETED');
    expect(run.overall).toBe(expected.overall);
    expect(run.overall).toBe(0.8);
    for (const job of run.jobs) {
      expect(job.status).toBe('SUCCEEDED');
      expect(job.result?.overall).toBe(expected.perTask[job.task]);
      expect(job.result?.raw_metrics.total).toBe(20);
      expect(job.host).toBe('host-pipeline');
      expect(containersOfRun(run.runId)).toEqual([]);
    }
    // 20 problems per task, one chat completion each.
    expect(h.model.requests.filter((r) => r.path === '/v1/chat/completions' && (r.body as { model?: string }).model === 'reference-acc80')).toHaveLength(40);
  });
});

describe('a container sees exactly what the contract promises', () => {
  it('has the four variables, extra_env, the read-only benchmark mount, the task workdir and resource limits', async () => {
    const run = await h.run(fixture('contract-probe'), { model: 'probe-model' });
    const job = run.jobs[0]!;
    expect(job.result?.raw_metrics.checks).toEqual({
      output_dir: true,
      endpoint: true,
      model_name: true,
      api_key_set: true,
      extra_env: true,
      tz_utc: true,
      workdir_is_task_dir: true,
      benchmark_read_only: true,
      memory_limited: true,
      pids_limited: true,
    });
    expect(job.result?.overall).toBe(1);
  });
});

describe('jobs that fail', () => {
  it('make the run PARTIAL, each job carrying its reason, and the mean uses succeeded jobs only', async () => {
    const run = await h.run(fixture('outcomes'));
    const byTask = Object.fromEntries(run.jobs.map((j) => [j.task, j]));

    expect(run.status).toBe('PARTIAL');
    expect(run.overall).toBe(0.5);
    expect(byTask['scores-half']).toMatchObject({ status: 'SUCCEEDED', result: { overall: 0.5, raw_metrics: { samples: 4 } } });

    expect(byTask['exits-nonzero']).toMatchObject({ status: 'FAILED', reason: 'NON_ZERO_EXIT', exitCode: 3 });
    expect(byTask['exits-nonzero']!.message).toContain('exited with code 3');
    expect(byTask['exits-nonzero']!.message).toContain('model endpoint refused us');

    expect(byTask['writes-nothing']).toMatchObject({ status: 'FAILED', reason: 'NO_RESULT' });
    expect(byTask['writes-nothing']!.message).toContain('no result.json');

    expect(byTask['non-numeric']).toMatchObject({ status: 'FAILED', reason: 'BAD_RESULT' });
    expect(byTask['non-numeric']!.message).toBe('result.json: overall: path "overall": expected a number, got "high"');

    // Artifacts: container logs are kept per job.
    const log = readFileSync(path.join(h.settings.artifactsRoot, run.runId, byTask['exits-nonzero']!.jobId, 'container.log'), 'utf8');
    expect(log).toContain('loading 10 problems');
    expect(containersOfRun(run.runId)).toEqual([]);
  });

  it('is TIMED_OUT when the command outlives its timeout, and its container is gone', async () => {
    const started = Date.now();
    const run = await h.run(fixture('sleeper'));
    const job = run.jobs[0]!;

    expect(job.status).toBe('TIMED_OUT');
    expect(job.message).toContain('timeout of 3s');
    expect(run.status).toBe('FAILED');
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(containersOfRun(run.runId)).toEqual([]);
  });
});

describe('image builds', () => {
  it('build once for 4 concurrent jobs on a new environment, and not at all on the next run', async () => {
    const dir = copyFixture('outcomes', scratch);
    // A new environment: content nobody has built before.
    writeFileSync(path.join(dir, 'environments', 'shell', 'Dockerfile'), `FROM benchrouter/base:bookworm\nLABEL test.nonce="${Date.now()}-${Math.random()}"\n`);

    const first = await h.run(dir, { concurrency: 4 });
    expect(first.jobs.filter((j) => j.imageBuilt === true)).toHaveLength(1);
    expect(first.jobs.filter((j) => j.imageBuilt === false)).toHaveLength(3);
    expect(new Set(first.jobs.map((j) => j.image)).size).toBe(1);

    const second = await h.run(dir, { concurrency: 4 });
    expect(second.jobs.filter((j) => j.imageBuilt)).toHaveLength(0);
    expect(second.jobs.map((j) => j.image)).toEqual(first.jobs.map((j) => j.image));
  });

  it('fail the job with IMAGE_BUILD and the build log tail when the Dockerfile is broken', async () => {
    const dir = copyFixture('sleeper', path.join(scratch, 'broken'));
    writeFileSync(path.join(dir, 'environments', 'shell', 'Dockerfile'), 'FROM benchrouter/base:bookworm\nRUN echo "compiling the world" && exit 7\n');
    const run = await h.run(dir);
    expect(run.jobs[0]).toMatchObject({ status: 'FAILED', reason: 'IMAGE_BUILD' });
    expect(run.jobs[0]!.message).toContain('compiling the world');
    expect(run.status).toBe('FAILED');
  });
});

describe('the br CLI', () => {
  it('br run --json prints the same result that br results --json reads back', async () => {
    const ran = await br(['run', 'arith', '--model', 'reference-acc80', '--endpoint', h.model.url, '--json'], h.env);
    expect(ran.stderr).not.toMatch(/br: /);
    expect(ran.code).toBe(0);
    const fromRun = JSON.parse(ran.stdout);
    expect(fromRun.status).toBe('COMPLETED');
    expect(fromRun.overall).toBe(0.8);

    const read = await br(['results', fromRun.runId, '--json'], h.env);
    expect(read.code).toBe(0);
    expect(JSON.parse(read.stdout)).toEqual(fromRun);

    const listed = await br(['list', '--json'], h.env);
    expect(JSON.parse(listed.stdout).map((r: { runId: string }) => r.runId)).toContain(fromRun.runId);
  });

  it('a run pins its provenance: the benchmark digest, the image id Docker gives each task, generation, seeds and version, in --json and in the text', async () => {
    const ran = await br(['run', 'arith', '--model', 'reference-acc80', '--endpoint', h.model.url, '--json'], h.env);
    expect(ran.code).toBe(0);
    const run = JSON.parse(ran.stdout);
    // Both tasks run in the python environment: one image, its id as `docker image inspect` tells it.
    const [image] = new Set(run.jobs.map((job: JobResult) => job.image));
    const imageId = execFileSync('docker', ['image', 'inspect', '--format', '{{.Id}}', image as string], { encoding: 'utf8' }).trim();
    expect(imageId).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(run.provenance).toEqual({
      benchrouter: benchRouterVersion(repoRoot),
      benchmark: { name: 'arith', digest: directoryDigest(arithDir) },
      images: { addition: [imageId], multiplication: [imageId] },
      gateway: true,
      generation: { set: {} },
      seeds: [],
    });
    expect(run.provenance.benchrouter.version).toBe(JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).version);
    // 32 of 40 instances right: the Wilson interval [0.6524, 0.8950].
    expect(run.scoreStats.n).toBe(40);
    expect(run.scoreStats.method).toBe('wilson');
    expect(run.scoreStats.low).toBeCloseTo(0.652427, 6);
    expect(run.scoreStats.high).toBeCloseTo(0.895, 6);

    // The leaderboard reads both from visibility.
    const listed = JSON.parse((await br(['list', '--json'], h.env)).stdout).find((r: { runId: string }) => r.runId === run.runId);
    expect(listed.provenance).toBe(provenanceHash(run.provenance));
    expect(listed.scoreStats).toEqual({ n: 40, low: 0.652427, high: 0.895, method: 'wilson' });

    const text = await br(['results', run.runId], h.env);
    const line = (label: string, value: string) => `  ${label.padEnd('image multiplication'.length)}  ${value}`;
    expect(text.stdout).toContain(
      [
        'provenance:',
        line('benchmark', `arith ${directoryDigest(arithDir)}`),
        line('image addition', imageId),
        line('image multiplication', imageId),
        line('gateway', 'on'),
        line('generation', 'none (the benchmark’s own requests)'),
        line('judge', 'none'),
        line('seeds', 'none'),
      ].join('\n'),
    );
  });

  it('exits 3 for a PARTIAL run and prints the table with reasons', async () => {
    const ran = await br(['run', fixture('outcomes'), '--model', 'm', '--endpoint', h.model.url], h.env);
    expect(ran.code).toBe(3);
    expect(ran.stdout).toMatch(/PARTIAL/);
    expect(ran.stdout).toMatch(/exits-nonzero\s+FAILED\s+-\s+\S+\s+NON_ZERO_EXIT/);
    expect(ran.stdout).toContain('overall: 0.5000 (mean over 1 of 4 jobs that succeeded)');
  });

  it('exits 2 with the problem named when the benchmark is invalid, submitting nothing', async () => {
    const ran = await br(['run', path.join(fixturesDir, 'invalid', 'missing-environment'), '--model', 'm', '--endpoint', h.model.url], h.env);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('benchmark.yaml: tasks[0].environment: environment "gpu" not found');
  });

  it('br cancel stops the running container and the run ends CANCELLED', async () => {
    const dir = copyFixture('sleeper', path.join(scratch, 'cancel'));
    writeFileSync(path.join(dir, 'tasks', 'sleeps', 'task.yaml'), 'name: sleeps\ncommand: sleep 600\ntimeout: 600\n');
    const submitted = await br(['submit', dir, '--model', 'm', '--endpoint', h.model.url], h.env);
    expect(submitted.code).toBe(0);
    const runId = submitted.stdout.trim();
    for (let i = 0; i < 100 && containersOfRun(runId).length === 0; i++) await new Promise((r) => setTimeout(r, 200));
    expect(containersOfRun(runId)).toHaveLength(1);

    const cancelled = await br(['cancel', runId, '--json'], h.env);
    expect(cancelled.code).toBe(5);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ status: 'CANCELLED', jobs: [{ status: 'CANCELLED' }] });
    expect(containersOfRun(runId)).toEqual([]);
    expect(existsSync(dir)).toBe(true);
  });
});
