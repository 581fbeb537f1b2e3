// perf/catalogue: what each built-in benchmark costs through BenchRouter. Runs every built-in benchmark
// twice through `br run` against the replay model (arith against the reference model, which it was made
// for) with `--limit 20`, or fewer where the canned answers cover fewer instances, and prints per
// benchmark the cold build time, the warm run time and the platform's share of the warm run: its wall
// time minus the harness's own time as the harness logs it ("... in <s> s" on its last lines), or minus
// the container's run time where the harness logs none.
//
//   npm run perf:catalogue -- [--cold[=NAME,...]] [NAME...]
//   (--cold removes each, or each named, benchmark's cached image first; NAMEs run only those benchmarks)

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { imageTagFor } from '../activities/ensure-image.js';
import { jobFile } from '../runs/job-artifacts.js';
import type { Client } from '@temporalio/client';
import { connectClient } from '../client/runs.js';
import { settingsFrom } from '../config/settings.js';
import { directoryDigest } from '../contract/benchmark-digest.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { startReferenceModel } from '../reference-model/reference-model-server.js';
import { startReplayModel } from '../reference-model/replay-model-server.js';
import type { RunResult } from '../runs/run-spec.js';
import { brJson, repoRoot, run, startStack } from './perf-support.js';

const LIMIT = 20;
const only = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const coldFlag = process.argv.find((a) => a === '--cold' || a.startsWith('--cold='));
/** Which benchmarks' images to remove before their first run: all with a bare --cold. */
const coldFor = (benchmark: string) => coldFlag !== undefined && (coldFlag === '--cold' || coldFlag.slice('--cold='.length).split(',').includes(benchmark));
const answersDir = path.join(repoRoot, 'test', 'fixtures', 'replay');

/** One measured `br run`: a benchmark, or one task of it where its tasks' canned answers cover different counts. */
interface Entry {
  benchmark: string;
  task?: string;
  /** The instances the canned answers cover, when fewer than LIMIT. */
  covered?: number;
  /** The episodes the canned answers cover, where they are not the benchmark's first ones (run with --instances). */
  instances?: string[];
  model: 'replay' | 'reference';
  /**
   * A DinD task whose first run prepares the host's DinD image store: both runs get a row (cold: the store's
   * image set prepared, then cloned; warm: cloned), and where the platform's time goes in each.
   */
  dind?: boolean;
}

const ENTRIES: Entry[] = [
  { benchmark: 'arith', model: 'reference' },
  { benchmark: 'bfcl', task: 'simple-python', covered: 5, model: 'replay' },
  { benchmark: 'bfcl', task: 'multi-turn-base', covered: 2, model: 'replay' },
  { benchmark: 'humaneval', covered: 5, model: 'replay' },
  { benchmark: 'mathematics', model: 'replay' },
  { benchmark: 'mcp', covered: 5, model: 'replay' },
  { benchmark: 'miniwob', covered: 4, model: 'replay' },
  { benchmark: 'miniwob-mcp', covered: 4, model: 'replay' },
  {
    benchmark: 'scienceworld',
    covered: 4,
    instances: ['lifespan-longest-lived/93', 'find-non-living-thing/225', 'chemistry-mix-paint-secondary-color/27', 'find-living-thing/225'],
    model: 'replay',
  },
  { benchmark: 'sql', covered: 8, model: 'replay' },
  // One shard: its harness time is the image builds, the agent and the grading in the shard's own daemon.
  // Cold, the store's base image set is prepared first; both runs build the instance images in the shard's daemon.
  { benchmark: 'swe-repair', task: 'shard-1', covered: 2, model: 'replay', dind: true },
  { benchmark: 'inspect', task: 'tau2_airline', covered: 3, model: 'replay' },
  // The two banking samples the canned answers cover (the task's first ones are other suites').
  { benchmark: 'inspect', task: 'agentdojo', covered: 2, instances: ['banking-u1-i0', 'banking-u7-i0'], model: 'replay' },
];

interface Measured {
  wallSeconds: number;
  /** When `br run` started and ended (epoch ms). */
  startMs: number;
  endMs: number;
  result: RunResult;
  /** The run workflow's start and close (epoch ms), from the server. */
  workflow?: { startMs: number; closeMs: number };
}

async function brRun(env: Record<string, string>, entry: Entry, endpoint: string, limit: number): Promise<Measured> {
  const selection = entry.instances ? ['--instances', entry.instances.join(',')] : ['--limit', String(limit)];
  const args = ['run', path.join(repoRoot, 'benchmarks', entry.benchmark), '--model', entry.model, '--endpoint', endpoint, ...selection];
  if (entry.task) args.push('--tasks', entry.task);
  const startMs = Date.now();
  const r = await brJson<RunResult>(args, env);
  const endMs = Date.now();
  if (!r.value) throw new Error(`br ${args.join(' ')} --json: expected a JSON result on stdout (exit ${r.code}), got: ${r.stderr.slice(-600)}`);
  return { wallSeconds: r.seconds, startMs, endMs, result: r.value };
}

const containerLogText = (artifactsRoot: string, result: RunResult, job: RunResult['jobs'][number]) => {
  const log = jobFile(artifactsRoot, { runId: result.runId, jobId: job.jobId }, 'containerLog');
  return existsSync(log) ? readFileSync(log, 'utf8') : '';
};

/** The last number a log line matching `pattern` (one capture group) gives; null when none does. */
const lastLogged = (text: string, pattern: RegExp): number | null => {
  const logged = [...text.matchAll(pattern)].at(-1)?.[1];
  return logged === undefined ? null : Number(logged);
};

/** The harness's own seconds from its log ("... in 1.23 s"); the longest job's, as the jobs run at once. Null when a job logs none. */
function harnessSeconds(artifactsRoot: string, result: RunResult): number | null {
  const seconds = result.jobs.map((job) => lastLogged(containerLogText(artifactsRoot, result, job), / in ([0-9.]+) s\b/g));
  return seconds.some((s) => s === null) ? null : Math.max(...(seconds as number[]));
}

/**
 * Where a one-job DinD run's wall time went, in seconds: `br run` start to the job queued, queued to its
 * container started (image checks, the store's preparation or clone, the container's create), the DinD
 * entrypoint until the task's command ran (cgroups, the inner daemon's start), the harness, the rest of
 * the container's life (the interpreter's start, the inner daemon's stop) and the container's exit to
 * `br run`'s end (harvest, the run's end, the CLI's print).
 */
function dindBreakdown(artifactsRoot: string, m: Measured): string {
  const wf = m.workflow;
  const job = m.result.jobs[0]!;
  const text = containerLogText(artifactsRoot, m.result, job);
  const queued = Date.parse(job.timings.queuedAt);
  const started = Date.parse(job.timings.startedAt ?? job.timings.queuedAt);
  const ready = lastLogged(text, /\[dind\] ready in ([0-9.]+)s since entrypoint start/g) ?? 0;
  const harness = lastLogged(text, / in ([0-9.]+) s\b/g) ?? 0;
  const parts: Array<[string, number]> = [
    ...(wf
      ? ([
          ['br start -> run workflow start', (wf.startMs - m.startMs) / 1000],
          ['-> job queued', (queued - wf.startMs) / 1000],
        ] as Array<[string, number]>)
      : ([['br start -> queued', (queued - m.startMs) / 1000]] as Array<[string, number]>)),
    ['queued -> container start', (started - queued) / 1000],
    ['entrypoint -> command (inner dockerd)', ready],
    ['harness', harness],
    ['rest of the container', job.timings.containerSeconds - ready - harness],
    ...(wf
      ? ([
          ['container exit -> run workflow closed', (wf.closeMs - started) / 1000 - job.timings.containerSeconds],
          ['-> br end', (m.endMs - wf.closeMs) / 1000],
        ] as Array<[string, number]>)
      : ([['container exit -> br end', (m.endMs - started) / 1000 - job.timings.containerSeconds]] as Array<[string, number]>)),
  ];
  return parts.map(([name, s]) => `${name} ${s.toFixed(1)}`).join(', ');
}

const containerSeconds = (result: RunResult) => Math.max(...result.jobs.map((job) => job.timings.containerSeconds));

/** Queue to container start of the jobs that built their image: the build, plus the claim of a host. */
function buildSeconds(result: RunResult): number | null {
  const built = result.jobs.filter((job) => job.imageBuilt && job.timings.startedAt);
  if (built.length === 0) return null;
  return Math.max(...built.map((job) => (Date.parse(job.timings.startedAt!) - Date.parse(job.timings.queuedAt)) / 1000));
}

/** The run workflow's start and close times as the server recorded them. */
async function workflowTimes(client: Client, runId: string): Promise<{ startMs: number; closeMs: number } | undefined> {
  const described = await client.workflow.getHandle(runId).describe();
  return described.closeTime ? { startMs: described.startTime.getTime(), closeMs: described.closeTime.getTime() } : undefined;
}

async function removeImages(benchmark: string): Promise<void> {
  const dir = path.join(repoRoot, 'benchmarks', benchmark);
  for (const environment of new Set(loadBenchmark(dir).tasks.map((task) => task.environment))) {
    const image = imageTagFor(benchmark, environment, directoryDigest(path.join(dir, 'environments', environment)));
    const removed = await run('docker', ['rmi', image]);
    // A container of another run still using the image keeps it: that benchmark's build then shows as cached.
    if (removed.code !== 0 && !/No such image/.test(removed.stderr)) console.error(`perf:catalogue: could not remove ${image}: ${removed.stderr.trim()}`);
  }
}

async function main(): Promise<void> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-perf-catalogue-'));
  // One answers file for every benchmark: answers are keyed by the request, so the fixtures never collide.
  const answersFile = path.join(scratch, 'answers.jsonl');
  writeFileSync(
    answersFile,
    readdirSync(answersDir)
      .filter((f) => f.endsWith('.jsonl'))
      .sort()
      .map((f) => readFileSync(path.join(answersDir, f), 'utf8').trimEnd() + '\n')
      .join(''),
  );
  // 0.0.0.0: DinD tasks (sql) reach the model through the bridge network, not loopback.
  const replay = await startReplayModel({ answersFile, host: '0.0.0.0' });
  const reference = await startReferenceModel({ port: 0, host: '0.0.0.0' });
  const stack = await startStack('catalogue');
  const rows: string[][] = [];
  const breakdowns: string[] = [];
  let temporal: Client | undefined;
  const client = async () => (temporal ??= await connectClient(settingsFrom(stack.env, os.homedir())));
  try {
    for (const entry of ENTRIES.filter((e) => only.length === 0 || only.includes(e.benchmark))) {
      const name = entry.task ? `${entry.benchmark}/${entry.task}` : entry.benchmark;
      const limit = Math.min(LIMIT, entry.covered ?? LIMIT);
      // Only before a benchmark's first entry: its second task must find the image the first one built.
      if (coldFor(entry.benchmark) && !ENTRIES.slice(0, ENTRIES.indexOf(entry)).some((e) => e.benchmark === entry.benchmark))
        await removeImages(entry.benchmark);
      const endpoint = entry.model === 'replay' ? replay.url : reference.url;
      const first = await brRun(stack.env, entry, endpoint, limit);
      const warm = await brRun(stack.env, entry, endpoint, limit);
      const artifactsRoot = settingsFrom(stack.env, os.homedir()).artifactsRoot;
      const build = buildSeconds(first.result);
      const row = (label: string, measured: Measured) => {
        const harness = harnessSeconds(artifactsRoot, measured.result);
        const inside = harness ?? containerSeconds(measured.result);
        rows.push([
          label,
          entry.covered && entry.covered < LIMIT ? `${limit} (answers cover ${entry.covered})` : String(limit),
          `${first.result.status}/${warm.result.status} ${measured.result.overall ?? '-'}`,
          build === null ? 'cached' : build.toFixed(1),
          measured.wallSeconds.toFixed(1),
          `${inside.toFixed(1)} (${harness === null ? 'container' : 'harness log'})`,
          `${(measured.wallSeconds - inside).toFixed(1)} (${(((measured.wallSeconds - inside) / measured.wallSeconds) * 100).toFixed(0)}%)`,
        ]);
        console.error(`perf:catalogue: ${rows.at(-1)!.join(' | ')}`);
      };
      if (entry.dind) {
        for (const measured of [first, warm]) measured.workflow = await workflowTimes(await client(), measured.result.runId);
        // Both runs: the first one's platform time includes preparing the store's image set.
        row(`${name} cold`, first);
        row(`${name} warm`, warm);
        breakdowns.push(`${name} cold: ${dindBreakdown(artifactsRoot, first)}`, `${name} warm: ${dindBreakdown(artifactsRoot, warm)}`);
        console.error(`perf:catalogue: ${breakdowns.slice(-2).join('\nperf:catalogue: ')}`);
      } else row(name, warm);
    }
  } finally {
    await temporal?.connection.close();
    await stack.stop();
    await replay.close();
    await reference.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  const header = ['benchmark', 'instances', 'status score', 'cold build s', 'run s', 'harness s', 'platform s'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const row of [header, ...rows])
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
  for (const line of breakdowns) console.log(`${line} (s)`);
  console.log(`unknown replay requests: ${replay.counts.unknown}; "cached": the image existed before the first run (--cold rebuilds it)`);
}

await main();
