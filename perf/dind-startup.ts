// perf/dind-startup: time from job start until the task's command runs, for a Simple task and for
// DinD tasks whose own daemon is up with one preloaded image (2 MB, 175 MB, 1 GiB), side by side.
// The DinD tasks start from the host's image store (dind-image-store.ts); the baseline is the same
// 1 GiB task on a worker with the store off, which `docker load`s its archive as every task did before.
// Also: the first preparation of the 1 GiB image set against that `docker load`, and 4 tasks with
// the 1 GiB image at once: their start times and the disk they use together against one image.
// Targets: the 1 GiB task <= Simple + 2 s once the store is prepared; the first preparation no
// slower than one `docker load`; 4 concurrent tasks <= 1.2 x one image on disk.
//
//   npm run perf:dind -- [repeats]

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureBigImage } from '../test/support/big-image.js';
import { repoRoot, run, startStack, type PerfStack } from './perf-support.js';
import { setTimeout as sleep } from 'node:timers/promises';

const REPEATS = Number(process.argv[2] ?? 3);
const SMALL_IMAGE = 'benchrouter-test/inner-service:1'; // busybox, about 2 MB
const LARGE_IMAGE = 'benchrouter/base:bookworm'; // Debian with python3, about 175 MB
const CONCURRENT = 4;
const READY = `python3 -c 'import json,os,time; json.dump({"overall": 1, "ready_at": float(os.environ.get("READY_AT") or time.time())}, open(os.environ["BENCHROUTER_OUTPUT_DIR"] + "/result.json", "w"))'`;
const NOW = `python3 -c 'import time; print(time.time())'`;

function task(dir: string, name: string, yaml: string): void {
  mkdirSync(path.join(dir, 'tasks', name), { recursive: true });
  writeFileSync(path.join(dir, 'tasks', name, 'task.yaml'), `name: ${name}\ntimeout: 900\n${yaml}result_mapping: {overall: overall, ready_at: ready_at}\n`);
}

function makeBenchmark(dir: string, bigImage: string): void {
  for (const [env, from] of [
    ['simple', 'benchrouter/base:bookworm'],
    ['dind', 'benchrouter/dind:bookworm'],
  ]) {
    mkdirSync(path.join(dir, 'environments', env!), { recursive: true });
    writeFileSync(path.join(dir, 'environments', env!, 'Dockerfile'), `FROM ${from}\n`);
  }
  const tasks = ['simple', 'dind-small', 'dind-large', 'dind-1g', 'dind-1g-held'];
  writeFileSync(
    path.join(dir, 'benchmark.yaml'),
    `name: perf-dind\ntasks:\n${tasks.map((t) => `  - {name: ${t}, environment: ${t === 'simple' ? 'simple' : 'dind'}}\n`).join('')}`,
  );
  task(dir, 'simple', `command: |\n  ${READY}\n`);
  for (const [name, image] of [
    ['dind-small', SMALL_IMAGE],
    ['dind-large', LARGE_IMAGE],
    ['dind-1g', bigImage],
  ]) {
    task(dir, name!, `docker: true\ndocker_images: ["${image}"]\ncommand: |\n  docker image inspect ${image} >/dev/null && ${READY}\n`);
  }
  // Runs a container of the image in its own daemon and holds it until the script has measured the disk.
  task(
    dir,
    'dind-1g-held',
    `docker: true\ndocker_images: ["${bigImage}"]\ncommand: |\n  export READY_AT=$(${NOW})\n  docker run -d ${bigImage} sleep 3604 >/dev/null\n  while [ ! -e "$BENCHROUTER_DATASET_DIR/go" ]; do sleep 0.2; done\n  ${READY}\n`,
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

interface RunJson {
  status: string;
  jobs: Array<{ task: string; preload?: string; timings: { queuedAt: string }; result?: { raw_metrics: { ready_at: number } } }>;
}

/** One `br run`: each job's seconds from job start to its command running, with the preload path it took. */
async function timedRun(stack: PerfStack, dir: string, args: string[]): Promise<Array<{ task: string; seconds: number; preload?: string }>> {
  const result = await run(
    path.join(repoRoot, 'br'),
    ['run', dir, '--model', 'm', '--endpoint', 'http://127.0.0.1:9/v1', '--no-preflight', '--json', ...args],
    stack.env,
  );
  const parsed = JSON.parse(result.stdout) as RunJson;
  if (parsed.status !== 'COMPLETED') throw new Error(`run ended ${parsed.status}: ${result.stdout}`);
  return parsed.jobs.map((job) => ({
    task: job.task,
    seconds: job.result!.raw_metrics.ready_at - Date.parse(job.timings.queuedAt) / 1000,
    ...(job.preload ? { preload: job.preload } : {}),
  }));
}

/** Bytes on disk under a directory (du). A tree of copy-on-write clones would count each clone whole. */
function diskBytes(dir: string): number {
  return Number(execFileSync('du', ['-s', '-B1', dir], { encoding: 'utf8' }).split('\t')[0]);
}

/** Blocks in use on the filesystem that holds `dir`: what shared (reflinked) blocks really cost. */
function filesystemUsedBytes(dir: string): number {
  const fs = statfsSync(dir);
  return (fs.blocks - fs.bfree) * fs.bsize;
}

function processesRunning(args: string): number {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.trim() === args).length;
}

const show = (values: number[]) => `median ${median(values).toFixed(2)} s  (runs: ${values.map((s) => s.toFixed(2)).join(', ')})`;
const GiB = 1024 ** 3;

async function main(): Promise<void> {
  execFileSync('docker', ['build', '--quiet', '--tag', SMALL_IMAGE, path.join(repoRoot, 'test', 'fixtures', 'images', 'inner-service')], {
    env: { ...process.env, DOCKER_BUILDKIT: '0' },
  });
  const bigImage = ensureBigImage();
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-perf-dind-'));
  const dir = path.join(scratch, 'perf-dind');
  const signals = path.join(scratch, 'signals');
  mkdirSync(signals);
  makeBenchmark(dir, bigImage);
  // Both workers share the archives: the comparison is of what each does with them.
  const shared = { BENCHROUTER_IMAGE_CACHE: path.join(scratch, 'image-cache'), BENCHROUTER_DATASET_DIR: signals };
  const one = ['--concurrency', '1'];
  try {
    // Today's path: the store off, every task `docker load`s its archive.
    const loaded: Record<string, number[]> = { simple: [], 'dind-1g': [] };
    const loadStack = await startStack('dind-load', { ...shared, BENCHROUTER_DIND_STORE_MAX: '0' });
    try {
      await timedRun(loadStack, dir, [...one, '--tasks', 'simple,dind-1g']); // builds the images and the archive
      for (let i = 0; i < REPEATS; i++)
        for (const job of await timedRun(loadStack, dir, [...one, '--tasks', 'simple,dind-1g'])) loaded[job.task]!.push(job.seconds);
    } finally {
      await loadStack.stop();
    }

    const stack = await startStack('dind-store', shared);
    const seconds: Record<string, number[]> = { simple: [], 'dind-small': [], 'dind-large': [], 'dind-1g': [] };
    let disk = { store: 0, withClones: 0 };
    let concurrent: Array<{ seconds: number; preload?: string }> = [];
    let first: { seconds: number; preload?: string } | undefined;
    let prepared: { seconds: number; bytes: number };
    try {
      [first] = await timedRun(stack, dir, [...one, '--tasks', 'dind-1g']); // prepares the 1 GiB image set
      const storeDir = path.join(stack.home, 'dind-store');
      const [key] = readdirSync(storeDir).filter((name) => /^[0-9a-f]{64}$/.test(name));
      prepared = JSON.parse(readFileSync(path.join(storeDir, key!, 'manifest.json'), 'utf8')) as { seconds: number; bytes: number };
      await timedRun(stack, dir, [...one, '--tasks', 'dind-small,dind-large']); // prepares the other two
      for (let i = 0; i < REPEATS; i++) {
        // One job at a time, so no two compete for the two cores.
        for (const job of await timedRun(stack, dir, [...one, '--tasks', 'simple,dind-small,dind-large,dind-1g'])) {
          if (job.preload && job.preload !== 'store') throw new Error(`${job.task} preloaded by ${job.preload}, not from the store`);
          seconds[job.task]!.push(job.seconds);
        }
      }

      // The store's filesystem before the held tasks clone it: what they add is theirs.
      const usedBefore = filesystemUsedBytes(storeDir);
      const held = timedRun(stack, dir, ['--concurrency', String(CONCURRENT), '--repeats', String(CONCURRENT), '--tasks', 'dind-1g-held']);
      held.catch(() => undefined);
      for (let waited = 0; processesRunning('sleep 3604') < CONCURRENT; waited++) {
        if (waited > 2400) throw new Error(`${CONCURRENT} tasks did not all run their inner container within 10 minutes`);
        await sleep(250);
      }
      // One image: the prepared set's files (du, one tree). The clones: what the filesystem's blocks in use grew by.
      const store = diskBytes(path.join(storeDir, key!));
      disk = { store, withClones: store + filesystemUsedBytes(storeDir) - usedBefore };
      writeFileSync(path.join(signals, 'go'), '');
      concurrent = await held;
    } finally {
      await stack.stop();
    }

    const simple = median(seconds.simple!);
    const storeAdds = median(seconds['dind-1g']!) - simple;
    const loadAdds = median(loaded['dind-1g']!) - median(loaded.simple!);
    console.log(`job start -> task command running, ${REPEATS} runs each, one job at a time`);
    console.log(`simple:                                   ${show(seconds.simple!)}`);
    console.log(`dind, store, 1 preloaded image   (2 MB):  ${show(seconds['dind-small']!)}`);
    console.log(`dind, store, 1 preloaded image (175 MB):  ${show(seconds['dind-large']!)}`);
    console.log(`dind, store, 1 preloaded image  (1 GiB):  ${show(seconds['dind-1g']!)}`);
    console.log(`simple, store-off worker:                 ${show(loaded.simple!)}`);
    console.log(`dind, docker load (store off)  (1 GiB):  ${show(loaded['dind-1g']!)}`);
    console.log(
      `dind adds over simple with the 1 GiB image: ${storeAdds.toFixed(2)} s from the store (target <= 2 s), ${loadAdds.toFixed(2)} s by docker load; 2 MB: ${(median(seconds['dind-small']!) - simple).toFixed(2)} s; 175 MB: ${(median(seconds['dind-large']!) - simple).toFixed(2)} s`,
    );
    console.log(
      `first task of the 1 GiB image set (preparing the store, ${first!.preload}): ${first!.seconds.toFixed(2)} s, of which preparation ${prepared!.seconds.toFixed(2)} s; one docker load task today: ${show(loaded['dind-1g']!)} (target: no slower; ratio ${(first!.seconds / median(loaded['dind-1g']!)).toFixed(2)})`,
    );
    console.log(
      `${CONCURRENT} tasks at once with the 1 GiB image: job start -> running ${concurrent.map((j) => j.seconds.toFixed(2)).join(', ')} s (${[...new Set(concurrent.map((j) => j.preload))].join(',')})`,
    );
    console.log(
      `disk while they run: one image set ${(disk.store / GiB).toFixed(3)} GiB, store + ${CONCURRENT} clones ${(disk.withClones / GiB).toFixed(3)} GiB = ${(disk.withClones / disk.store).toFixed(3)} x one image (target <= 1.2; docker load: ${CONCURRENT} copies)`,
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    if (existsSync(scratch)) console.error(`could not remove ${scratch}`);
  }
}

await main();
