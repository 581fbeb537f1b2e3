// perf/overhead: what BenchRouter's orchestration costs over plain Docker. Runs N no-op tasks
// through `br run` at concurrency 8, then the same container N times with raw `docker run` at
// concurrency 8, in the same process, and prints both wall times and their ratio (target <= 1.15).
//
//   npm run perf:overhead -- [N]

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { imageTagFor } from '../activities/ensure-image.js';
import { directoryDigest } from '../contract/benchmark-digest.js';
import { makeNoopBenchmark, timeBrRun, timeRawDockerRuns } from './noop-tasks.js';
import { cpuDelta, cpuSecondsByProcess, repoRoot, run, startStack } from './perf-support.js';

const N = Number(process.argv[2] ?? 100);
const CONCURRENCY = 8;
async function main(): Promise<void> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-perf-overhead-'));
  const benchmarkDir = path.join(scratch, 'perf-noop');
  makeNoopBenchmark(benchmarkDir, N);
  const stack = await startStack('overhead');
  try {
    // Warm-up: builds the image and primes the worker, so neither side pays a first-time cost.
    const warm = path.join(scratch, 'warm');
    makeNoopBenchmark(warm, N);
    await run(path.join(repoRoot, 'br'), ['run', warm, '--model', 'noop', '--endpoint', 'http://127.0.0.1:9/v1', '--tasks', 'noop-000', '--json'], stack.env);
    const image = imageTagFor('perf-noop', 'noop', directoryDigest(path.join(benchmarkDir, 'environments', 'noop')));

    const processes = {
      dockerd: /^(\/usr\/sbin\/)?dockerd/,
      containerd: /containerd/,
      temporal: /temporal server/,
      worker: /cli\/bin\.ts worker/,
      'br run': /cli\/bin\.ts run/,
    };
    const cpu0 = cpuSecondsByProcess(processes);
    const raw = await timeRawDockerRuns(image, benchmarkDir, scratch, N, CONCURRENCY);
    const cpu1 = cpuSecondsByProcess(processes);
    const br = await timeBrRun(stack.env, benchmarkDir, N, CONCURRENCY);
    const cpu2 = cpuSecondsByProcess(processes);
    console.log(`tasks: ${N}, concurrency: ${CONCURRENCY}`);
    console.log(`raw docker run: ${raw.toFixed(2)} s (${((raw / N) * 1000).toFixed(0)} ms per task)`);
    console.log(`br run:         ${br.toFixed(2)} s (${((br / N) * 1000).toFixed(0)} ms per task)`);
    console.log(`ratio br/raw:   ${(br / raw).toFixed(3)} (target <= 1.15)`);
    console.log(`CPU during raw: ${cpuDelta(cpu0, cpu1)}`);
    console.log(`CPU during br:  ${cpuDelta(cpu1, cpu2)} (br run: exited, not counted)`);
  } finally {
    await stack.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
