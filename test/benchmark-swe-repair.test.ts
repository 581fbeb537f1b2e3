// The built-in swe-repair benchmark: one task whose instances a run splits into shards, each in its own
// daemon: SWE-bench's harness builds the instance images inside the shard's daemon, mini-swe-agent patches each
// one on the replay model's canned turns (two fixes, a wrong fix, an empty patch) and the harness grades them.
// Through `br run` (one instance a shard) and directly (the same image and driver in a DinD container of our
// own, no BenchRouter, the same shards) the resolved set is the same, instance by instance; an instance the task
// does not list is refused at submit; a shard whose container is killed from outside while its daemon builds,
// once the one restart such a kill earns is killed too, leaves the run PARTIAL with the other shard's instance
// scored and nothing behind.
// `npm test` grades two instances (a fix and a wrong fix) and kills a shard; `npm run test:slow` grades four.
// Cold, the harness image (swebench, mini-swe-agent and their ~130 dependencies) built in 82 s on an idle
// 2-core machine; with it built the file took 260 s in the slow form.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dindStorageBytes, taskClonesDir } from '../activities/dind-image-store.js';
import { DockerEngine } from '../activities/docker-engine.js';
import { OUTAGE_RESTART_LABEL } from '../activities/outage-restart.js';
import { detectDindMode } from '../activities/engines/docker/dind-detect.js';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { SLOW_TESTS, benchmarkImage, builtinDir, replayAnswers } from './support/benchmark-image.js';
import { br, containersOfRun, dockerLines, startHarness, type Harness } from './support/harness.js';
import { expectShardsAgree } from './support/shard-fidelity.js';

// Written by test/support/swe-repair-answers.py: the agent's turns, recorded against mini-swe-agent as it runs.
const ANSWERS = replayAnswers('swe-repair.jsonl');
const ALL_RESOLVED = { 'semver-453': true, 'more-itertools-partition': false, 'tabulate-82': true, 'tabulate-175': false };
/** The default suite's subset: a fix and a wrong fix; the slow form all four, in the task's order. */
const SELECTED = SLOW_TESTS ? Object.keys(ALL_RESOLVED) : ['semver-453', 'tabulate-175'];
const RESOLVED = Object.fromEntries(SELECTED.map((id) => [id, ALL_RESOLVED[id as keyof typeof ALL_RESOLVED]]));
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

const HOST_ID = 'host-swe-repair'; // startHarness('swe-repair')'s worker

/** What a shard's container was when the test killed it: enough to look for anything of it left afterwards. */
interface Killed {
  id: string;
  name: string;
  labels: Record<string, string>;
  mounts: Array<{ Type: string; Name?: string; Source: string; Destination: string }>;
  /** Its cgroups on the host while it ran: where to look for them afterwards is right. */
  cgroups: string[];
}

/** A container's cgroup directories on the host (cgroup v1 here: one a controller, under the DinD guard's parent or Docker's). */
function cgroupDirsOf(id: string): string[] {
  const root = '/sys/fs/cgroup';
  return (existsSync(root) ? readdirSync(root) : [])
    .flatMap((controller) => ['benchrouter-dind', 'docker', ''].map((parent) => path.join(root, controller, parent, id)))
    .filter((dir) => existsSync(dir));
}

/**
 * Waits for the running container of the run's job whose id ends with `jobSuffix` on this test's host, and in
 * it for its inner daemon at work: building an instance image (the harness's `docker buildx build`, handed to
 * `docker build`) or, with `orRunning`, also running an inner container (the agent's or the grader's). Then
 * kills it from outside, as a crash would, and says what it was.
 */
async function killShardWhileBusy(jobSuffix: string, orRunning: boolean, deadlineMs: number, after?: Killed): Promise<Killed> {
  const busy = `pgrep -f '^docker (buildx )?build ' >/dev/null${orRunning ? ' || [ -n "$(docker ps -q)" ]' : ''}`;
  while (Date.now() < deadlineMs) {
    // Not the container killed before: on a loaded host it can still be listed, and answer, while it dies.
    const [id] = dockerLines([
      'ps',
      '--no-trunc',
      '--filter',
      `label=benchrouter.host=${HOST_ID}`,
      '--filter',
      'label=benchrouter.task=repair',
      '--format',
      '{{.ID}} {{.Label "benchrouter.job"}}',
    ])
      .map((line) => line.split(' '))
      .filter(([candidate, job]) => candidate !== after?.id && job?.endsWith(jobSuffix))
      .map(([candidate]) => candidate);
    if (id && spawnSync('docker', ['exec', id, 'sh', '-c', busy]).status === 0) {
      const [inspected] = JSON.parse(execFileSync('docker', ['inspect', id], { encoding: 'utf8' })) as Array<{
        Name: string;
        Config: { Labels: Record<string, string> };
        Mounts: Killed['mounts'];
      }>;
      const cgroups = cgroupDirsOf(id);
      execFileSync('docker', ['kill', id]);
      return { id, name: inspected!.Name.replace(/^\//, ''), labels: inspected!.Config.Labels, mounts: inspected!.Mounts, cgroups };
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${jobSuffix}: no container of it with its inner daemon building${orRunning ? ' or running a container' : ''} before the deadline`);
}

/** Everything of a killed shard the host could still hold, each as a line naming it; none when all is gone. */
async function leftoversOf(killed: Killed, runId: string): Promise<string[]> {
  const left: string[] = [];
  const exists = (args: string[]) => spawnSync('docker', args).status === 0;
  if (exists(['container', 'inspect', killed.id])) left.push(`container ${killed.id}`);
  left.push(...dockerLines(['ps', '--all', '--filter', `name=^${killed.name}$`, '--format', 'container {{.Names}} ({{.Status}})']));
  for (const m of killed.mounts) {
    if (m.Type === 'volume' && exists(['volume', 'inspect', m.Name!])) left.push(`volume ${m.Name} (at ${m.Destination})`);
    // Its daemon's storage: the clone of the image store it ran on, and the link to it.
    if (m.Destination === '/var/lib/docker' && existsSync(m.Source)) left.push(`storage ${m.Source}`);
  }
  left.push(...dockerLines(['network', 'ls', '--filter', `label=benchrouter.run=${runId}`, '--format', 'network {{.Name}}']));
  for (const network of dockerLines(['network', 'ls', '--format', '{{.Name}}'])) {
    const attached = execFileSync('docker', ['network', 'inspect', network, '--format', '{{range $id, $c := .Containers}}{{$id}} {{end}}'], {
      encoding: 'utf8',
    });
    if (attached.includes(killed.id)) left.push(`network ${network} still lists it`);
  }
  const storageDir = path.join(h.settings.dindStorageRoot, killed.name);
  if (existsSync(storageDir)) left.push(`storage link ${storageDir}`);
  // What the disk watchdog charges the task for: nothing once its storage is gone.
  if ((await dindStorageBytes(storageDir)) > 0) left.push(`${storageDir}: disk still charged`);
  const clones = taskClonesDir(h.settings.dindStoreDir);
  if (existsSync(clones)) left.push(...readdirSync(clones).map((entry) => `store clone ${path.join(clones, entry)}`));
  if (existsSync(h.settings.dindStoreDir))
    left.push(
      ...readdirSync(h.settings.dindStoreDir)
        .filter((e) => e.startsWith('.preparing-') || e.startsWith('.evicted-'))
        .map((e) => `store ${e}`),
    );
  if (existsSync(h.settings.locksDir)) left.push(...readdirSync(h.settings.locksDir).map((lock) => `lock ${lock}`));
  // The outer container's cgroups, with its inner daemon's containers under them.
  left.push(...cgroupDirsOf(killed.id).map((dir) => `cgroup ${dir}`));
  // Mounts of its daemon (overlays, the storage bind) seen from the host.
  left.push(
    ...readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .filter((line) => line.includes(killed.name) || line.includes(killed.id))
      .map((line) => `mount ${line}`),
  );
  return left;
}

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

describe('swe-repair', () => {
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

  it(
    `resolves the same instances through br run, one a shard, as the harness and agent do directly: ${SELECTED.join(', ')}`,
    { timeout: COLD_BUILD_MS },
    async () => {
      const run = await h.run(builtinDir('swe-repair'), { endpoint: replay.url, instances: SELECTED, shardSize: 1, concurrency: 2 });
      for (const job of run.jobs) expect(job.status, job.message).toBe('SUCCEEDED');
      expect(run.status).toBe('COMPLETED');
      // A shard an instance, each with its own daemon, and the task's score folded over them.
      expect(run.jobs.map((job) => [job.shard?.index, job.result?.overall, job.result?.raw_metrics.resolved])).toEqual(
        SELECTED.map((id, i) => [i, RESOLVED[id] ? 1 : 0, RESOLVED[id] ? 1 : 0]),
      );
      const resolved = SELECTED.filter((id) => RESOLVED[id]).length;
      expect(run.tasks![0]!.results![0]!.result).toMatchObject({ overall: resolved / SELECTED.length, raw_metrics: { resolved, instances: SELECTED.length } });
      const records = (await br(['records', run.runId, '--json'], h.env)).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as InstanceRecord & { gateway?: { calls: number } });
      expect(records.map((r) => r.index)).toEqual(SELECTED);
      expect(resolvedOf(records)).toEqual(RESOLVED);
      // Every model call carried its instance's id: the gateway counted each instance's agent steps.
      expect(records.map((r) => r.gateway?.calls)).toEqual(records.map((r) => r.steps));
      // The wrong fix was applied and graded; the empty patch was not graded.
      expect(records.find((r) => r.index === 'tabulate-175')?.raw_output).toMatchObject({ patch_applied: true, resolved: false });
      if (SLOW_TESTS) expect(records.find((r) => r.index === 'more-itertools-partition')?.raw_output.patch_lines).toBe(0);
      expect(containersOfRun(run.runId)).toEqual([]);

      // Directly, with no BenchRouter: the same driver, harness and agent in the same image, on the same turns.
      const preload = path.join(scratch, 'preload');
      execFileSync('mkdir', ['-p', preload]);
      execFileSync('docker', ['save', '-o', path.join(preload, 'base.tar'), 'benchrouter/swe-repair-python:bookworm']);
      // The same shards at once, as br ran them: each in its own DinD container.
      const direct = (await Promise.all(SELECTED.map((id, i) => runShardDirectly(`shard-${i}`, [id], preload)))).flat();
      expect(resolvedOf(direct)).toEqual(resolvedOf(records));
      expect(replay.counts.unknown).toBe(0);
    },
  );

  it.runIf(SLOW_TESTS)(
    'split into shards of 1 and of 3 (a remainder of 1) resolves and scores as one shard of all four does, to the last digit',
    { timeout: COLD_BUILD_MS },
    async () => {
      const whole = await h.run(builtinDir('swe-repair'), { endpoint: replay.url, instances: SELECTED, shardSize: SELECTED.length });
      expect(whole.jobs).toHaveLength(1);
      expect(whole.jobs[0]!.result).toMatchObject({ overall: 0.5, raw_metrics: { resolved: 2, instances: 4 } });
      // Shards of 1 ran in the first test; shards of 3 here, both compared with the one shard of all.
      await expectShardsAgree(h, builtinDir('swe-repair'), { endpoint: replay.url, instances: SELECTED, concurrency: 2 }, whole, [1, 3]);
    },
  );

  it('refuses at submit an instance the task does not list, naming it, and starts nothing', async () => {
    await expect(h.run(builtinDir('swe-repair'), { endpoint: replay.url, instances: ['semver-453', 'semver-999'] })).rejects.toThrow(
      `instances: the run's instances name an id no task lists: "semver-999"`,
    );
  });

  it(
    'a shard killed from outside mid-build is restarted once; killed again, the run is PARTIAL with the other shard scored and nothing of it left on the host',
    { timeout: COLD_BUILD_MS },
    async () => {
      // One instance a shard: shard 0 has semver-453 (killed), shard 1 tabulate-82 (scored, resolved).
      const deadline = Date.now() + COLD_BUILD_MS - 120_000;
      const running = h.run(builtinDir('swe-repair'), { endpoint: replay.url, instances: ['semver-453', 'tabulate-82'], shardSize: 1, concurrency: 2 });
      running.catch(() => undefined); // awaited below; a failure before then must not go unhandled
      // A kill from outside is taken for an outage (a daemon stopping its containers): the job starts its
      // container again, once, from a fresh clone of the store. The second kill is the shard's end.
      const first = await killShardWhileBusy('-repair.s000', false, deadline);
      // Right after the kill its storage is still there (the next attempt removes it): the checks below look in the right places.
      const storage = first.mounts.find((m) => m.Destination === '/var/lib/docker')?.Source;
      expect(storage && existsSync(storage)).toBe(true);
      expect(first.cgroups.length).toBeGreaterThan(0);
      const second = await killShardWhileBusy('-repair.s000', true, deadline, first);
      expect(second.cgroups.length).toBeGreaterThan(0);
      const run = await running;

      expect(first.labels[OUTAGE_RESTART_LABEL]).toBeUndefined();
      expect(second.labels[OUTAGE_RESTART_LABEL]).toBe('true');
      expect(second.id).not.toBe(first.id);
      expect(second.name).toBe(first.name);
      expect(run.status).toBe('PARTIAL');
      const [killedShard, scoredShard] = run.jobs;
      expect(killedShard?.status).toBe('FAILED');
      expect(killedShard?.reason).toBe('NON_ZERO_EXIT');
      expect(killedShard?.message).toContain('exited with code 137');
      expect(scoredShard?.status, scoredShard?.message).toBe('SUCCEEDED');
      expect(scoredShard?.result).toMatchObject({ overall: 1, raw_metrics: { resolved: 1, instances: 1 } });
      // The task's score is over the instance scored; the run says one of two was.
      expect(run.overall).toBe(1);
      expect(run.tasks![0]!.results![0]).toMatchObject({ instances: { total: 2, scored: 1 }, shards: { total: 2, succeeded: 1 } });
      const records = (await br(['records', run.runId, '--json'], h.env)).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as InstanceRecord);
      expect(resolvedOf(records)).toEqual({ 'tabulate-82': true });

      expect(containersOfRun(run.runId)).toEqual([]);
      // A task's storage leaves its name at once and its files in the background: a minute at most for them.
      for (const killed of [first, second]) {
        let left = await leftoversOf(killed, run.runId);
        for (const stop = Date.now() + 60_000; left.length > 0 && Date.now() < stop; left = await leftoversOf(killed, run.runId))
          await new Promise((r) => setTimeout(r, 1000));
        expect(left).toEqual([]);
      }
      const dindDir = path.join(h.home, 'dind');
      expect(existsSync(dindDir) ? readdirSync(dindDir) : []).toEqual([]);
    },
  );
});
