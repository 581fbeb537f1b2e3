// The built-in swe-repair benchmark: per shard, SWE-bench's harness builds the instance images inside the
// shard's own daemon, mini-swe-agent patches each one on the replay model's canned turns (two fixes, a wrong
// fix, an empty patch) and the harness grades them. Through `br run` and directly (the same image and
// driver in a DinD container of our own, no BenchRouter) the resolved set is the same, instance by instance;
// and a shard that fails leaves the run PARTIAL with the other shard's score and nothing behind.
// With `npm run test:slow`: on a fresh 2-core machine its harness image (swebench, mini-swe-agent and their
// ~130 dependencies) builds for many minutes, more than `npm test`'s time allows.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerEngine } from '../activities/docker-engine.js';
import { detectDindMode } from '../activities/task-runtimes/dind-mode.js';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { SLOW_TESTS, benchmarkImage, builtinDir, replayAnswers } from './support/benchmark-image.js';
import { br, containersOfRun, startHarness, type Harness } from './support/harness.js';

// Written by test/support/swe-repair-answers.py: the agent's turns, recorded against mini-swe-agent as it runs.
const ANSWERS = replayAnswers('swe-repair.jsonl');
const SHARDS = { 'shard-1': ['semver-453', 'more-itertools-partition'], 'shard-2': ['tabulate-82', 'tabulate-175'] };
const RESOLVED = { 'semver-453': true, 'more-itertools-partition': false, 'tabulate-82': true, 'tabulate-175': false };
// Cold: the harness image (swebench, mini-swe-agent and their dependencies), the base image and its sdists
// are built on the host first; every shard then builds its instance images in its own daemon.
const COLD_BUILD_MS = 40 * 60_000;

interface InstanceRecord {
  index: string;
  score: number;
  steps: number;
  raw_output: { resolved: boolean; patch_lines: number; patch_applied: boolean };
}

let h: Harness;
let replay: ReplayModelServer;
let scratch: string;
const resolvedOf = (records: InstanceRecord[]) => Object.fromEntries(records.map((r) => [r.index, r.raw_output.resolved]));

/** The HostConfig this host's DinD mode needs, as `docker run` flags (the same detection the worker makes). */
async function dindFlags(): Promise<string[]> {
  const { hostConfig } = await detectDindMode(new DockerEngine(), 'benchrouter/dind:bookworm');
  const c = hostConfig as Record<string, unknown>;
  return [
    ...(c.Privileged ? ['--privileged'] : []),
    ...((c.CapAdd as string[] | undefined) ?? []).flatMap((cap) => ['--cap-add', cap]),
    ...((c.CapDrop as string[] | undefined) ?? []).flatMap((cap) => ['--cap-drop', cap]),
    ...((c.SecurityOpt as string[] | undefined) ?? []).flatMap((opt) => ['--security-opt', opt]),
    ...(Array.isArray(c.MaskedPaths) ? ['--security-opt', 'systempaths=unconfined'] : []),
    ...(c.CgroupnsMode ? ['--cgroupns', String(c.CgroupnsMode)] : []),
    ...(c.CgroupParent ? ['--cgroup-parent', String(c.CgroupParent)] : []),
    ...(c.Runtime ? ['--runtime', String(c.Runtime)] : []),
  ];
}

/** One shard run directly: the harness image in a DinD container of our own, the base image loaded from a tar. */
async function runShardDirectly(shard: string, instances: string[], preload: string): Promise<InstanceRecord[]> {
  const out = path.join(scratch, shard);
  const dockerRoot = path.join(scratch, `${shard}-docker`);
  execFileSync('mkdir', ['-p', out, dockerRoot]);
  const { promisify } = await import('node:util');
  const { execFile } = await import('node:child_process');
  try {
    await promisify(execFile)(
      'docker',
      [
        'run',
        '--rm',
        '--name',
        `br-swe-repair-direct-${shard}-${process.pid}`,
        ...(await dindFlags()),
        '--add-host',
        'host.docker.internal:host-gateway',
        '-v',
        `${dockerRoot}:/var/lib/docker`,
        '-v',
        `${preload}:/app/preload:ro`,
        '-v',
        `${builtinDir('swe-repair')}:/app/benchmark:ro`,
        '-v',
        `${out}:/app/results`,
        '-e',
        `BENCHROUTER_MODEL_ENDPOINT=${replay.url.replace(/\/\/[^:/]+/, '//host.docker.internal')}`,
        '-e',
        'BENCHROUTER_MODEL_NAME=reference',
        '-e',
        'BENCHROUTER_API_KEY=replay',
        '-e',
        'BENCHROUTER_OUTPUT_DIR=/app/results',
        benchmarkImage('swe-repair', 'harness'),
        'python3',
        '/app/benchmark/run_shard.py',
        '--instances',
        instances.join(','),
      ],
      { maxBuffer: 64 * 1024 * 1024 },
    );
  } finally {
    rmSync(dockerRoot, { recursive: true, force: true });
  }
  return readFileSync(path.join(out, 'records.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as InstanceRecord);
}

describe.runIf(SLOW_TESTS)('swe-repair', () => {
  beforeAll(async () => {
    // Each shard's own daemon reaches the model through the bridge, not the host's loopback.
    h = await startHarness('swe-repair', { modelHost: '0.0.0.0' });
    replay = await startReplayModel({ answersFile: ANSWERS, host: '0.0.0.0' });
    scratch = mkdtempSync(path.join(os.tmpdir(), 'br-swe-repair-'));
  });
  afterAll(async () => {
    await h?.close();
    await replay?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('resolves the same instances through br run as the harness and agent do directly: 2 of 4, a fix per shard', { timeout: COLD_BUILD_MS }, async () => {
    const run = await h.run(builtinDir('swe-repair'), { endpoint: replay.url, tasks: ['shard-1', 'shard-2'], concurrency: 2 });
    for (const job of run.jobs) expect(job.status, job.message).toBe('SUCCEEDED');
    expect(run.status).toBe('COMPLETED');
    expect(run.jobs.map((job) => [job.task, job.result?.overall, job.result?.raw_metrics.resolved]).sort()).toEqual([
      ['shard-1', 0.5, 1],
      ['shard-2', 0.5, 1],
    ]);
    const records = (await br(['records', run.runId, '--json'], h.env)).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as InstanceRecord & { gateway?: { calls: number } });
    expect(resolvedOf(records)).toEqual(RESOLVED);
    // Every model call carried its instance's id: the gateway counted each instance's agent steps.
    expect(records.map((r) => r.gateway?.calls)).toEqual(records.map((r) => r.steps));
    // The wrong fix was applied and graded; the empty patch was not graded.
    expect(records.find((r) => r.index === 'tabulate-175')?.raw_output).toMatchObject({ patch_applied: true, resolved: false });
    expect(records.find((r) => r.index === 'more-itertools-partition')?.raw_output.patch_lines).toBe(0);
    expect(containersOfRun(run.runId)).toEqual([]);

    // Directly, with no BenchRouter: the same driver, harness and agent in the same image, on the same turns.
    const preload = path.join(scratch, 'preload');
    execFileSync('mkdir', ['-p', preload]);
    execFileSync('docker', ['save', '-o', path.join(preload, 'base.tar'), 'benchrouter/swe-repair-python:bookworm']);
    const direct: InstanceRecord[] = [];
    for (const [shard, instances] of Object.entries(SHARDS)) direct.push(...(await runShardDirectly(shard, instances, preload)));
    expect(resolvedOf(direct)).toEqual(resolvedOf(records));
    expect(replay.counts.unknown).toBe(0);
  });

  it(
    'a shard that fails leaves the run PARTIAL with the other shard scored, and no container or daemon storage behind',
    { timeout: COLD_BUILD_MS },
    async () => {
      // Only shard-1's instances are selected: shard-2 has none and fails, naming them.
      const run = await h.run(builtinDir('swe-repair'), { endpoint: replay.url, tasks: ['shard-1', 'shard-2'], instances: ['semver-453'], concurrency: 2 });
      expect(run.status).toBe('PARTIAL');
      const byTask = Object.fromEntries(run.jobs.map((job) => [job.task, job]));
      expect(byTask['shard-1']?.status).toBe('SUCCEEDED');
      expect(byTask['shard-1']?.result).toMatchObject({ overall: 1, raw_metrics: { resolved: 1, instances: 1 } });
      expect(byTask['shard-2']?.status).toBe('FAILED');
      expect(byTask['shard-2']?.message).toContain('no instance of this shard (tabulate-82,tabulate-175) is selected');
      expect(run.overall).toBe(1);
      expect(containersOfRun(run.runId)).toEqual([]);
      const dindDir = path.join(h.home, 'dind');
      expect(existsSync(dindDir) ? readdirSync(dindDir) : []).toEqual([]);
    },
  );
});
