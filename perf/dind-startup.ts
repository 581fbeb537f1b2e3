// perf/dind-startup: time from job start until the task's command runs, for a Simple task and for
// a DinD task whose own daemon is up with one preloaded image, side by side (target: DinD adds
// <= 5 s). Also shows how the preload cost grows with the image's size.
//
//   npm run perf:dind -- [repeats]

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot, run, startStack } from './perf-support.js';

const REPEATS = Number(process.argv[2] ?? 5);
const SMALL_IMAGE = 'benchrouter-test/inner-service:1'; // busybox, about 2 MB
const LARGE_IMAGE = 'benchrouter/base:bookworm'; // Debian with python3, about 175 MB
const READY = `python3 -c 'import json,os,time; json.dump({"overall": 1, "ready_at": time.time()}, open(os.environ["BENCHROUTER_OUTPUT_DIR"] + "/result.json", "w"))'`;

function task(dir: string, name: string, yaml: string): void {
  mkdirSync(path.join(dir, 'tasks', name), { recursive: true });
  writeFileSync(path.join(dir, 'tasks', name, 'task.yaml'), `name: ${name}\n${yaml}result_mapping: {overall: overall, ready_at: ready_at}\n`);
}

function makeBenchmark(dir: string): void {
  for (const [env, from] of [
    ['simple', 'benchrouter/base:bookworm'],
    ['dind', 'benchrouter/dind:bookworm'],
  ]) {
    mkdirSync(path.join(dir, 'environments', env!), { recursive: true });
    writeFileSync(path.join(dir, 'environments', env!, 'Dockerfile'), `FROM ${from}\n`);
  }
  writeFileSync(
    path.join(dir, 'benchmark.yaml'),
    'name: perf-dind\ntasks:\n  - {name: simple, environment: simple}\n  - {name: dind-small, environment: dind}\n  - {name: dind-large, environment: dind}\n',
  );
  task(dir, 'simple', `command: |\n  ${READY}\n`);
  for (const [name, image] of [
    ['dind-small', SMALL_IMAGE],
    ['dind-large', LARGE_IMAGE],
  ]) {
    task(dir, name!, `docker: true\ndocker_images: ["${image}"]\ncommand: |\n  docker image inspect ${image} >/dev/null && ${READY}\n`);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  execFileSync('docker', ['build', '--quiet', '--tag', SMALL_IMAGE, path.join(repoRoot, 'test', 'fixtures', 'images', 'inner-service')], {
    env: { ...process.env, DOCKER_BUILDKIT: '0' },
  });
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-perf-dind-'));
  const dir = path.join(scratch, 'perf-dind');
  makeBenchmark(dir);
  const stack = await startStack('dind');
  const seconds: Record<string, number[]> = { simple: [], 'dind-small': [], 'dind-large': [] };
  try {
    // One untimed run builds the images and the preload archives.
    await run(path.join(repoRoot, 'br'), ['run', dir, '--model', 'm', '--endpoint', 'http://127.0.0.1:9/v1', '--concurrency', '1', '--json'], stack.env);
    for (let i = 0; i < REPEATS; i++) {
      // One job at a time, so neither mode competes with the other for the two cores.
      const result = await run(
        path.join(repoRoot, 'br'),
        ['run', dir, '--model', 'm', '--endpoint', 'http://127.0.0.1:9/v1', '--concurrency', '1', '--json'],
        stack.env,
      );
      const parsed = JSON.parse(result.stdout) as {
        status: string;
        jobs: Array<{ task: string; timings: { queuedAt: string }; result?: { raw_metrics: { ready_at: number } } }>;
      };
      if (parsed.status !== 'COMPLETED') throw new Error(`run ended ${parsed.status}: ${result.stdout}`);
      for (const job of parsed.jobs) seconds[job.task]!.push(job.result!.raw_metrics.ready_at - Date.parse(job.timings.queuedAt) / 1000);
    }
    const show = (name: string) => `median ${median(seconds[name]!).toFixed(2)} s  (runs: ${seconds[name]!.map((s) => s.toFixed(2)).join(', ')})`;
    console.log(`job start -> task command running, ${REPEATS} runs each, one job at a time`);
    console.log(`simple:                         ${show('simple')}`);
    console.log(`dind, 1 preloaded image  (2 MB):  ${show('dind-small')}`);
    console.log(`dind, 1 preloaded image (175 MB): ${show('dind-large')}`);
    console.log(
      `dind adds over simple: ${(median(seconds['dind-small']!) - median(seconds.simple!)).toFixed(2)} s with the 2 MB image (target <= 5 s), ${(median(seconds['dind-large']!) - median(seconds.simple!)).toFixed(2)} s with the 175 MB image`,
    );
  } finally {
    await stack.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
